"""One Deployment sync's algorithm (kube's ``sync.go``, ``rolling.go``, ``recreate.go``, ``progress.go``).

A :class:`Rollout` is built per sync around a private copy of the Deployment and the ReplicaSets it
owns, and makes one step towards the spec:

* :meth:`Rollout.sync` — scaling and paused Deployments: proportional scaling of every active
  ReplicaSet (``scale``), cleanup of old ones while paused, then the status;
* :meth:`Rollout.rolling` — grow the new ReplicaSet within ``maxSurge``, shrink old ones within
  ``maxUnavailable`` (unhealthy replicas first), clean up once complete, then the rollout status
  with the ``Progressing`` condition;
* :meth:`Rollout.recreate` — scale every old ReplicaSet to zero, wait until no old pod runs, then
  create/scale the new one.

ReplicaSet writes are full updates guarded by resourceVersion (a stale cache means a conflict and
a retry, never a lost write), with kube's ``ScalingReplicaSet`` events.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.interface import DEPLOYMENTS, REPLICASETS, Client
from apiserver.meta import (
    Clock,
    controller_ref,
    is_being_deleted,
    name_of,
    namespace_of,
    new_controller_ref,
    parse_time,
)
from controllers.base import Requeue
from controllers.deployment import util

log = logging.getLogger("gangplane.deployment")

API_VERSION = "apps/v1"
KIND = "Deployment"

#: pods per old ReplicaSet uid -> their phases (``getPodMapForDeployment``), only read by Recreate
PodMap = Callable[[], dict[str, list[Obj]]]


def _err_text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def _namespace_terminating(err: BaseException) -> bool:
    return isinstance(err, errors.StatusError) and err.code == 403 and "being terminated" in err.message


class Rollout:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        clock: Clock,
        deployment: Obj,
        rs_list: list[Obj],
        pod_map: PodMap,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.clock = clock
        self.d = copy.deepcopy(deployment)
        self.d.setdefault("status", {})
        self.rs_list = [copy.deepcopy(rs) for rs in rs_list]
        self.pod_map = pod_map
        #: seconds after which the caller should sync again (progress deadline), if any
        self.requeue_after: float | None = None

    # ------------------------------------------------------------------ writes
    async def update_status(self) -> None:
        """``UpdateStatus`` of the Deployment (annotations included, as kube's status strategy allows)."""
        self.d = await self.client.update_status(DEPLOYMENTS, self.d, namespace_of(self.d))
        self.d.setdefault("status", {})

    async def _update_rs(self, rs: Obj) -> Obj:
        return await self.client.update(REPLICASETS, rs, namespace_of(rs))

    def _event(self, etype: str, reason: str, message: str) -> None:
        self.recorder.event(self.d, etype, reason, message)

    # ------------------------------------------------------------------ revisions
    async def all_replicasets(self, create_if_missing: bool) -> tuple[Obj | None, list[Obj]]:
        """``getAllReplicaSetsAndSyncRevision``: (new ReplicaSet or None, old ones)."""
        new_rs = util.find_new_replicaset(self.d, self.rs_list)
        old = util.find_old_replicasets(self.d, self.rs_list, new_rs)
        new_rs = await self._new_replicaset(new_rs, old, create_if_missing)
        return new_rs, old

    async def _new_replicaset(self, existing: Obj | None, old: list[Obj], create: bool) -> Obj | None:
        d = self.d
        new_revision = str(util.max_revision(old) + 1)
        if existing is not None:
            rs = copy.deepcopy(existing)
            changed = util.set_new_replicaset_annotations(d, rs, new_revision, True)
            mrs = int(util.spec(d).get("minReadySeconds") or 0)
            if int(util.spec(rs).get("minReadySeconds") or 0) != mrs:
                rs["spec"]["minReadySeconds"] = mrs
                changed = True
            if changed:
                rs = await self._update_rs(rs)
                self._replace(rs)
            needs_update = util.set_deployment_revision(d, util.revision_annotation(rs))
            if util.get_condition(d["status"], util.PROGRESSING) is None and util.has_progress_deadline(d):
                util.set_condition(
                    d["status"],
                    util.new_condition(
                        util.PROGRESSING,
                        "True",
                        util.FOUND_NEW_RS,
                        f'Found new replica set "{name_of(rs)}"',
                        self.clock.now(),
                    ),
                )
                needs_update = True
            if needs_update:
                await self.update_status()
            return rs
        if not create:
            return None
        return await self._create_new_replicaset(old, new_revision)

    async def _create_new_replicaset(self, old: list[Obj], new_revision: str) -> Obj:
        d = self.d
        dspec = util.spec(d)
        collision = (d.get("status") or {}).get("collisionCount")
        template = copy.deepcopy(dspec.get("template") or {})
        h = util.compute_hash(template, collision)
        tmd = template.setdefault("metadata", {})
        tmd["labels"] = {**(tmd.get("labels") or {}), util.POD_TEMPLATE_HASH: h}
        selector = copy.deepcopy(dspec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), util.POD_TEMPLATE_HASH: h}
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{name_of(d)}-{h}",
                "namespace": namespace_of(d),
                "ownerReferences": [new_controller_ref(d, API_VERSION, KIND)],
                "labels": dict(tmd["labels"]),
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(dspec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        count = util.new_rs_new_replicas(d, [*old, rs], rs)
        rs["spec"]["replicas"] = count
        util.set_new_replicaset_annotations(d, rs, new_revision, False)
        already = False
        try:
            created = await self.client.create(REPLICASETS, rs, namespace_of(d))
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                already = True
                found = await self.client.get(REPLICASETS, rs["metadata"]["name"], namespace_of(d))
                ref = controller_ref(found)
                if (
                    ref is not None
                    and ref.get("uid") == d["metadata"]["uid"]
                    and util.equal_ignore_hash(
                        dspec.get("template") or {}, util.spec(found).get("template") or {}
                    )
                ):
                    created = found
                else:
                    d["status"]["collisionCount"] = int(collision or 0) + 1
                    with contextlib.suppress(errors.StatusError):
                        await self.update_status()
                    raise
            elif _namespace_terminating(e):
                raise
            else:
                msg = f'Failed to create new replica set "{rs["metadata"]["name"]}": {_err_text(e)}'
                if util.has_progress_deadline(d):
                    util.set_condition(
                        d["status"],
                        util.new_condition(
                            util.PROGRESSING, "False", util.FAILED_RS_CREATE, msg, self.clock.now()
                        ),
                    )
                    with contextlib.suppress(errors.StatusError):
                        await self.update_status()
                self._event(WARNING, util.FAILED_RS_CREATE, msg)
                raise
        if not already and count > 0:
            self._event(
                NORMAL, "ScalingReplicaSet", f"Scaled up replica set {name_of(created)} from 0 to {count}"
            )
        needs_update = util.set_deployment_revision(d, new_revision)
        if not already and util.has_progress_deadline(d):
            util.set_condition(
                d["status"],
                util.new_condition(
                    util.PROGRESSING,
                    "True",
                    util.NEW_RS_CREATED,
                    f'Created new replica set "{name_of(created)}"',
                    self.clock.now(),
                ),
            )
            needs_update = True
        if needs_update:
            await self.update_status()
        self.rs_list.append(created)
        return created

    def _replace(self, rs: Obj) -> None:
        self.rs_list = [rs if r["metadata"]["uid"] == rs["metadata"]["uid"] else r for r in self.rs_list]

    # ------------------------------------------------------------------ scaling
    async def scale_rs(self, rs: Obj, new_scale: int, operation: str) -> tuple[bool, Obj]:
        """``scaleReplicaSet``: size and replicas annotations in one update, ``ScalingReplicaSet`` event."""
        d = self.d
        want, most = util.replicas(d), util.replicas(d) + util.max_surge(d)
        size_changed = util.replicas(rs) != new_scale
        if not size_changed and not util.replicas_annotations_need_update(rs, want, most):
            return False, rs
        old_scale = util.replicas(rs)
        body = copy.deepcopy(rs)
        body["spec"]["replicas"] = new_scale
        util.set_replicas_annotations(body, want, most)
        updated = await self._update_rs(body)
        self._replace(updated)
        if size_changed:
            self._event(
                NORMAL,
                "ScalingReplicaSet",
                f"Scaled {operation} replica set {name_of(rs)} from {old_scale} to {new_scale}",
            )
        return size_changed, updated

    async def scale_rs_and_record(self, rs: Obj, new_scale: int) -> tuple[bool, Obj]:
        """``scaleReplicaSetAndRecordEvent``."""
        if util.replicas(rs) == new_scale:
            return False, rs
        return await self.scale_rs(rs, new_scale, "up" if util.replicas(rs) < new_scale else "down")

    async def scale(self, new_rs: Obj | None, old: list[Obj]) -> None:
        """``scale``: one active ReplicaSet takes the full count; otherwise scale proportionally."""
        d = self.d
        want = util.replicas(d)
        target = util.find_active_or_latest(new_rs, old)
        if target is not None:
            if util.replicas(target) != want:
                await self.scale_rs_and_record(target, want)
            return
        if util.is_saturated(d, new_rs):
            for rs in util.filter_active(list(old)):
                await self.scale_rs_and_record(rs, 0)
            return
        if not util.is_rolling_update(d):
            return
        all_rs = util.filter_active([*old, new_rs])
        allowed = want + util.max_surge(d) if want > 0 else 0
        to_add = allowed - util.replica_count(list(all_rs))
        operation = ""
        if to_add > 0:
            all_rs = util.sort_by_size_newer(all_rs)
            operation = "up"
        elif to_add < 0:
            all_rs = util.sort_by_size_older(all_rs)
            operation = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rs:
            if to_add != 0:
                p = util.proportion(rs, d, to_add, added)
                sizes[name_of(rs)] = util.replicas(rs) + p
                added += p
            else:
                sizes[name_of(rs)] = util.replicas(rs)
        for i, rs in enumerate(all_rs):
            if i == 0 and to_add != 0:
                sizes[name_of(rs)] = max(0, sizes[name_of(rs)] + to_add - added)
            await self.scale_rs(rs, sizes[name_of(rs)], operation)

    # ------------------------------------------------------------------ strategies
    async def sync(self) -> None:
        """``sync``: scaling events and paused Deployments."""
        new_rs, old = await self.all_replicasets(False)
        await self.scale(new_rs, old)
        new_rs, old = self._refresh(new_rs, old)
        if util.spec(self.d).get("paused"):
            await self.cleanup(old)
        await self.sync_status([*old, new_rs], new_rs)

    def _refresh(self, new_rs: Obj | None, old: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        by_uid = {r["metadata"]["uid"]: r for r in self.rs_list}
        fresh_new = by_uid.get(new_rs["metadata"]["uid"]) if new_rs is not None else None
        return fresh_new, [by_uid.get(r["metadata"]["uid"], r) for r in old]

    async def is_scaling_event(self) -> bool:
        new_rs, old = await self.all_replicasets(False)
        for rs in util.filter_active([*old, new_rs]):
            desired = util.desired_replicas_annotation(rs)
            if desired is not None and desired != util.replicas(self.d):
                return True
        return False

    async def rolling(self) -> None:
        """``rolloutRolling``."""
        new_rs, old = await self.all_replicasets(True)
        assert new_rs is not None
        if await self._reconcile_new(new_rs, old):
            new_rs, old = self._refresh(new_rs, old)
            await self.sync_rollout_status([*old, new_rs], new_rs)
            return
        new_rs, old = self._refresh(new_rs, old)
        if await self._reconcile_old(new_rs, old):
            new_rs, old = self._refresh(new_rs, old)
            await self.sync_rollout_status([*old, new_rs], new_rs)
            return
        new_rs, old = self._refresh(new_rs, old)
        if util.deployment_complete(self.d, self.d.get("status") or {}):
            await self.cleanup(old)
        await self.sync_rollout_status([*old, new_rs], new_rs)

    async def _reconcile_new(self, new_rs: Obj, old: list[Obj]) -> bool:
        want = util.replicas(self.d)
        if util.replicas(new_rs) == want:
            return False
        if util.replicas(new_rs) > want:
            scaled, _ = await self.scale_rs_and_record(new_rs, want)
            return scaled
        count = util.new_rs_new_replicas(self.d, [*old, new_rs], new_rs)
        scaled, _ = await self.scale_rs_and_record(new_rs, count)
        return scaled

    async def _reconcile_old(self, new_rs: Obj, old: list[Obj]) -> bool:
        """``reconcileOldReplicaSets``: unhealthy replicas first, then within maxUnavailable."""
        d = self.d
        active_old = util.filter_active(list(old))
        if util.replica_count(list(active_old)) == 0:
            return False
        all_count = util.replica_count([*old, new_rs])
        min_available = util.replicas(d) - util.max_unavailable(d)
        new_unavailable = util.replicas(new_rs) - util.status_int(new_rs, "availableReplicas")
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = await self._cleanup_unhealthy(active_old, max_scaled_down)
        new_rs, old = self._refresh(new_rs, old)
        active_old = util.filter_active(list(old))
        scaled = await self._scale_down_old_for_rolling([*old, new_rs], active_old)
        return cleaned + scaled > 0

    async def _cleanup_unhealthy(self, old: list[Obj], max_cleanup: int) -> int:
        total = 0
        for rs in sorted(old, key=util.creation_key):
            if total >= max_cleanup:
                break
            size, available = util.replicas(rs), util.status_int(rs, "availableReplicas")
            if size == 0 or size == available:
                continue
            down = min(max_cleanup - total, size - available)
            if size - down > size:
                # The ReplicaSet reports more available pods than it wants (a scale-down not yet
                # observed): kube refuses rather than scaling an old ReplicaSet up.
                raise Requeue(
                    f"when cleaning up unhealthy replicas, got invalid request to scale down "
                    f"{namespace_of(rs)}/{name_of(rs)} {size} -> {size - down}"
                )
            await self.scale_rs_and_record(rs, size - down)
            total += down
        return total

    async def _scale_down_old_for_rolling(self, all_rs: list[Obj | None], old: list[Obj]) -> int:
        d = self.d
        min_available = util.replicas(d) - util.max_unavailable(d)
        available = util.available_replica_count(all_rs)
        if available <= min_available:
            return 0
        total, budget = 0, available - min_available
        for rs in sorted(old, key=util.creation_key):
            if total >= budget:
                break
            if util.replicas(rs) == 0:
                continue
            down = min(util.replicas(rs), budget - total)
            await self.scale_rs_and_record(rs, util.replicas(rs) - down)
            total += down
        return total

    async def recreate(self) -> None:
        """``rolloutRecreate``: old ReplicaSets to zero, wait for their pods to go, then the new one."""
        new_rs, old = await self.all_replicasets(False)
        scaled_down = False
        for rs in util.filter_active(list(old)):
            scaled, _ = await self.scale_rs_and_record(rs, 0)
            scaled_down = scaled_down or scaled
        new_rs, old = self._refresh(new_rs, old)
        if scaled_down:
            await self.sync_rollout_status([*old, new_rs], new_rs)
            return
        if self._old_pods_running(new_rs, old):
            await self.sync_rollout_status([*old, new_rs], new_rs)
            return
        if new_rs is None:
            new_rs, old = await self.all_replicasets(True)
        assert new_rs is not None
        if util.replicas(new_rs) != util.replicas(self.d):
            await self.scale_rs_and_record(new_rs, util.replicas(self.d))
        new_rs, old = self._refresh(new_rs, old)
        if util.deployment_complete(self.d, self.d.get("status") or {}):
            await self.cleanup(old)
        await self.sync_rollout_status([*old, new_rs], new_rs)

    def _old_pods_running(self, new_rs: Obj | None, old: list[Obj]) -> bool:
        """``oldPodsRunning``: an old ReplicaSet still reports pods, or an old pod is not finished."""
        if util.actual_replica_count(list(old)) > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
        for uid, pods in self.pod_map().items():
            if uid == new_uid:
                continue
            for p in pods:
                if ((p.get("status") or {}).get("phase") or "") not in ("Failed", "Succeeded"):
                    return True
        return False

    # ------------------------------------------------------------------ cleanup
    async def cleanup(self, old: list[Obj]) -> None:
        """``cleanupDeployment``: delete the oldest empty ReplicaSets beyond revisionHistoryLimit."""
        d = self.d
        if not util.has_revision_history_limit(d):
            return
        alive = [rs for rs in old if not is_being_deleted(rs)]
        diff = len(alive) - int(util.spec(d)["revisionHistoryLimit"])
        if diff <= 0:
            return
        for rs in sorted(alive, key=lambda r: (util.revision_of(r), *util.creation_key(r)))[:diff]:
            if (
                util.status_int(rs, "replicas") != 0
                or util.replicas(rs) != 0
                or int(rs["metadata"].get("generation") or 0) > util.status_int(rs, "observedGeneration")
            ):
                continue
            try:
                await self.client.delete(REPLICASETS, name_of(rs), namespace_of(rs))
            except errors.StatusError as e:
                if not errors.is_not_found(e):
                    raise

    # ------------------------------------------------------------------ status
    def calculate_status(self, all_rs: list[Obj | None], new_rs: Obj | None) -> Obj:
        """``calculateStatus``: counters from the ReplicaSets and the Available condition."""
        d = self.d
        available = util.available_replica_count(all_rs)
        total = util.replica_count(all_rs)
        status: Obj = {
            "observedGeneration": int(d["metadata"].get("generation") or 0),
            "replicas": util.actual_replica_count(all_rs),
            "updatedReplicas": util.actual_replica_count([new_rs]),
            "readyReplicas": util.ready_replica_count(all_rs),
            "availableReplicas": available,
            "unavailableReplicas": max(0, total - available),
            "terminatingReplicas": util.terminating_replica_count(all_rs),
        }
        old = d.get("status") or {}
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if old.get("conditions"):
            status["conditions"] = [dict(c) for c in old["conditions"]]
        now = self.clock.now()
        if available >= util.replicas(d) - util.max_unavailable(d):
            cond = util.new_condition(
                util.AVAILABLE,
                "True",
                util.MIN_REPLICAS_AVAILABLE,
                "Deployment has minimum availability.",
                now,
            )
        else:
            cond = util.new_condition(
                util.AVAILABLE,
                "False",
                util.MIN_REPLICAS_UNAVAILABLE,
                "Deployment does not have minimum availability.",
                now,
            )
        util.set_condition(status, cond)
        return status

    async def sync_status(self, all_rs: list[Obj | None], new_rs: Obj | None) -> None:
        """``syncDeploymentStatus``."""
        status = self.calculate_status(all_rs, new_rs)
        if status == (self.d.get("status") or {}):
            return
        self.d["status"] = status
        await self.update_status()

    async def sync_rollout_status(self, all_rs: list[Obj | None], new_rs: Obj | None) -> None:
        """``syncRolloutStatus``: the Progressing condition against the progress deadline."""
        d = self.d
        now = self.clock.now()
        status = self.calculate_status(all_rs, new_rs)
        if not util.has_progress_deadline(d):
            util.remove_condition(status, util.PROGRESSING)
        current = util.get_condition(d.get("status") or {}, util.PROGRESSING)
        complete = (
            int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
            and current is not None
            and current.get("reason") == util.NEW_RS_AVAILABLE
        )
        if util.has_progress_deadline(d) and not complete:
            rs_name = (
                f'ReplicaSet "{name_of(new_rs)}"' if new_rs is not None else f'Deployment "{name_of(d)}"'
            )
            if util.deployment_complete(d, status):
                util.set_condition(
                    status,
                    util.new_condition(
                        util.PROGRESSING,
                        "True",
                        util.NEW_RS_AVAILABLE,
                        f"{rs_name} has successfully progressed.",
                        now,
                    ),
                )
            elif util.deployment_progressing(d, status):
                cond = util.new_condition(
                    util.PROGRESSING, "True", util.REPLICASET_UPDATED, f"{rs_name} is progressing.", now
                )
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    util.remove_condition(status, util.PROGRESSING)
                util.set_condition(status, cond)
            elif util.deployment_timed_out(d, status, now):
                util.set_condition(
                    status,
                    util.new_condition(
                        util.PROGRESSING,
                        "False",
                        util.TIMED_OUT,
                        f"{rs_name} has timed out progressing.",
                        now,
                    ),
                )
        failure = self._replica_failure(all_rs, new_rs)
        if failure is not None:
            util.set_condition(status, failure)
        else:
            util.remove_condition(status, util.REPLICA_FAILURE)
        if status == (d.get("status") or {}):
            self._requeue_stuck(status)
            return
        d["status"] = status
        await self.update_status()

    def _replica_failure(self, all_rs: list[Obj | None], new_rs: Obj | None) -> Obj | None:
        """``getReplicaFailures``: the new ReplicaSet's ReplicaFailure condition, else an old one's."""
        ordered = [new_rs] + [r for r in all_rs if r is not new_rs]
        for rs in ordered:
            if rs is None:
                continue
            for c in (rs.get("status") or {}).get("conditions") or []:
                if c.get("type") == util.REPLICA_FAILURE:
                    return {
                        "type": util.REPLICA_FAILURE,
                        "status": c.get("status"),
                        "lastUpdateTime": c.get("lastTransitionTime"),
                        "lastTransitionTime": c.get("lastTransitionTime"),
                        "reason": c.get("reason"),
                        "message": c.get("message"),
                    }
        return None

    def _requeue_stuck(self, status: Obj) -> None:
        """``requeueStuckDeployment``: sync again when the progress deadline would pass."""
        d = self.d
        current = util.get_condition(d.get("status") or {}, util.PROGRESSING)
        if not util.has_progress_deadline(d) or current is None:
            return
        if util.deployment_complete(d, status) or current.get("reason") == util.TIMED_OUT:
            return
        since = parse_time(current.get("lastUpdateTime"))
        if since is None:
            return
        after = since + int(util.spec(d)["progressDeadlineSeconds"]) - self.clock.now()
        self.requeue_after = max(after, 0.0) + 0.001
