"""ReplicaSet controller (kube's ``pkg/controller/replicaset/replica_set.go``), also the ReplicationManager.

Informers: the controlled kind and Pods. Handlers only enqueue keys and settle
:class:`~controllers.expectations.Expectations`. ``sync(key)``:

1. the object from the cache (gone => drop its expectations);
2. its pods — owned by controller UID, plus orphans of the namespace that match the selector —
   claimed (adopt / release) through :class:`~controllers.refmanager.ControllerRefManager`;
3. if the expectations are satisfied and the object is not being deleted, ``manageReplicas``:
   create up to ``burstReplicas`` (500) missing pods in slow-start batches (1, 2, 4, …), or delete
   the surplus in :func:`~controllers.podutil.rank_pods_for_deletion` order (pod-deletion-cost,
   doubled-up nodes, readiness…);
4. the status — replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
   terminatingReplicas, observedGeneration and the ``ReplicaFailure`` condition — written when it
   changed; one more sync after ``minReadySeconds`` while Ready pods are not yet available.

The ReplicationController (v1) differs only in its kind and its map selector:
:class:`ReplicationManager` is the same code (kube's ``replication_controller.go`` wraps the
ReplicaSet controller the same way).
"""

from __future__ import annotations

import asyncio
import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.informer import CONTROLLER_UID, Informer, InformerFactory, controller_uid_index
from apiserver.client.interface import GVR, PODS, REPLICASETS, Client, requests_per_step
from apiserver.meta import (
    Clock,
    controller_ref,
    is_being_deleted,
    key_of,
    labels_of,
    name_of,
    namespace_of,
    rfc3339,
    split_key,
    uid_of,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from controllers import podutil, slowstart
from controllers.expectations import Expectations
from controllers.metrics import ControllerMetrics
from controllers.ownerlookup import owners_selecting, resolve_controller_ref
from controllers.podowners import PodOwnerController
from controllers.refmanager import ControllerRefManager, recheck_deletion_timestamp

log = logging.getLogger("gangplane.replicaset")

NAME = "replicaset-controller"
RC_NAME = "replicationcontroller-controller"
REPLICATIONCONTROLLERS = GVR("", "v1", "replicationcontrollers")
BURST_REPLICAS = 500
SLOW_START_INITIAL_BATCH = 1
REPLICA_FAILURE = "ReplicaFailure"


def _err_text(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def replicas_of(obj: Obj) -> int:
    v = (obj.get("spec") or {}).get("replicas")
    return 1 if v is None else int(v)


def min_ready_seconds(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("minReadySeconds") or 0)


def _is_namespace_terminating(err: BaseException) -> bool:
    if not isinstance(err, errors.StatusError):
        return False
    causes = (err.details or {}).get("causes") or []
    if any(c.get("reason") == "NamespaceTerminating" for c in causes):
        return True
    return err.code == 403 and "because it is being terminated" in err.message


class ReplicaSetController(PodOwnerController):
    """``ReplicaSetController``: keeps ``spec.replicas`` pods matching the selector alive."""

    name = NAME
    workers = 5  # --concurrent-replicaset-syncs
    gvr: GVR = REPLICASETS
    api_version = "apps/v1"
    kind = "ReplicaSet"
    delete_syncs_old_labels = True

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        self.burst_replicas = burst_replicas
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )
        self.expectations = Expectations(self.clock)

    # ------------------------------------------------------------------ kind specifics
    def selector_of(self, obj: Obj) -> LabelSelector:
        """The object's pod selector (raises ValueError when it cannot be parsed)."""
        return label_selector_from_dict((obj.get("spec") or {}).get("selector"))

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.sets: Informer = self.informers.informer(self.gvr)
        self.pods: Informer = self.informers.informer(PODS)
        self.pods.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.pods.add_indexer(podutil.ORPHANS, podutil.orphan_index)
        self.sets.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.sets.add_event_handler(self._on_set, self._update_set, self._delete_set)
        self.pods.add_event_handler(self._add_pod, self._update_pod, self._delete_pod)

    def _on_set(self, obj: Obj) -> None:
        self.enqueue(key_of(obj))

    def _update_set(self, old: Obj, cur: Obj) -> None:
        self.enqueue(key_of(cur))

    def _delete_set(self, obj: Obj) -> None:
        self.expectations.delete(key_of(obj))
        self.enqueue(key_of(obj))

    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        """``resolveControllerRef``: the cached owner, if kind, group and UID agree."""
        return resolve_controller_ref(self.sets, namespace, ref, self.kind, self.gvr.group)

    def _owner_kind(self) -> str:
        return self.kind

    def _sets_for_orphan(self, pod: Obj) -> list[Obj]:
        """``getPodReplicaSets``: every object in the pod's namespace whose selector matches it."""
        return owners_selecting(self.sets, pod, self.selector_of)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        rs = self.sets.get_by_name(namespace, name)
        if rs is None:
            self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.selector_of(rs)
        except ValueError as e:
            log.warning("%s %s has an invalid selector: %s", self.kind, key, e)
            return
        claimed = await self._claim_pods(rs, selector)
        active: list[Obj] = []
        terminating = 0
        for p in claimed:
            phase = ((p.get("status") or {}).get("phase")) or ""
            if phase in ("Succeeded", "Failed"):
                continue
            if (p.get("metadata") or {}).get("deletionTimestamp"):
                terminating += 1
            else:
                active.append(p)
        manage_err: Exception | None = None
        if needs_sync and not is_being_deleted(rs):
            try:
                await self._manage_replicas(rs, key, active)
            except errors.StatusError as e:
                manage_err = e
        status = self.calculate_status(rs, active, terminating, manage_err)
        updated = await self._update_status(rs, status)
        if (
            manage_err is None
            and min_ready_seconds(updated) > 0
            and int(updated["status"].get("readyReplicas") or 0) == replicas_of(updated)
            and int(updated["status"].get("availableReplicas") or 0) != replicas_of(updated)
        ):
            self.enqueue_after(key, min_ready_seconds(updated))
        if manage_err is not None:
            raise manage_err

    async def _claim_pods(self, rs: Obj, selector: LabelSelector) -> list[Obj]:
        """Owned pods that still match are kept as they are; the rest go through the ref manager."""
        kept: list[Obj] = []
        candidates: dict[str, Obj] = {}
        for p in self.pods.by_index(CONTROLLER_UID, uid_of(rs)):
            if selector.matches(labels_of(p)):
                kept.append(p)
            else:
                candidates[key_of(p)] = p
        for p in self.pods.by_index(podutil.ORPHANS, namespace_of(rs)):
            if selector.matches(labels_of(p)):
                candidates.setdefault(key_of(p), p)
        manager = ControllerRefManager(
            self.client,
            PODS,
            rs,
            selector,
            self.api_version,
            self.kind,
            recheck_deletion_timestamp(self.client, self.gvr, rs),
        )
        if not candidates:
            return kept
        return kept + await manager.claim(list(candidates.values()))

    def _related_pods(self, rs: Obj) -> list[Obj]:
        """``getIndirectlyRelatedPods``: pods of every object with the same controller (siblings)."""
        ref = controller_ref(rs)
        owners = [rs]
        if ref is not None:
            owners = [o for o in self.sets.by_index(CONTROLLER_UID, ref.get("uid", ""))] or [rs]
        seen: dict[str, Obj] = {}
        for o in owners:
            for p in self.pods.by_index(CONTROLLER_UID, uid_of(o)):
                seen.setdefault(key_of(p), p)
        return list(seen.values())

    async def _manage_replicas(self, rs: Obj, key: str, active: list[Obj]) -> None:
        diff = len(active) - replicas_of(rs)
        if diff < 0:
            want = min(-diff, self.burst_replicas)
            self.expectations.expect_creations(key, want)
            template = (rs.get("spec") or {}).get("template") or {}

            async def create_one() -> None:
                try:
                    await self._create_pod(rs, template)
                except errors.StatusError as e:
                    if _is_namespace_terminating(e):
                        return
                    raise

            done, err = await slowstart.slow_start_batch(
                want,
                lambda _: create_one(),
                initial=SLOW_START_INITIAL_BATCH,
                in_place=requests_per_step(self.client),
            )
            for _ in range(want - done):
                self.expectations.creation_observed(key)
            if err is not None:
                raise err
        elif diff > 0:
            diff = min(diff, self.burst_replicas)
            victims = active
            if diff < len(active):
                victims = podutil.rank_pods_for_deletion(active, self._related_pods(rs), self.clock.now())
            victims = victims[:diff]
            self.expectations.expect_deletions(key, [key_of(p) for p in victims])
            results = await asyncio.gather(
                *(self._delete_pod_of(rs, p) for p in victims), return_exceptions=True
            )
            for p, r in zip(victims, results, strict=True):
                if isinstance(r, BaseException):
                    self.expectations.deletion_observed(key, key_of(p))
                    if not isinstance(r, Exception):
                        raise r
            failures = [r for r in results if isinstance(r, Exception) and not errors.is_not_found(r)]
            if failures:
                raise failures[0]

    async def _create_pod(self, rs: Obj, template: Obj) -> Obj:
        pod = podutil.pod_from_template(rs, template, self.api_version, self.kind)
        if not labels_of(pod):
            raise ValueError("unable to create pods, no labels")
        try:
            created = await self.client.create(PODS, pod, namespace_of(rs), read_only=True)
        except errors.StatusError as e:
            if not _is_namespace_terminating(e):
                self.recorder.event(rs, WARNING, "FailedCreate", f"Error creating: {_err_text(e)}")
            raise
        self.recorder.event(rs, NORMAL, "SuccessfulCreate", f"Created pod: {name_of(created)}")
        return created

    async def _delete_pod_of(self, rs: Obj, pod: Obj) -> None:
        try:
            await self.client.delete(PODS, name_of(pod), namespace_of(pod))
        except errors.StatusError as e:
            if errors.is_not_found(e):
                raise
            self.recorder.event(rs, WARNING, "FailedDelete", f"Error deleting: {_err_text(e)}")
            raise
        self.recorder.event(rs, NORMAL, "SuccessfulDelete", f"Deleted pod: {name_of(pod)}")

    # ------------------------------------------------------------------ status
    def calculate_status(
        self, rs: Obj, active: list[Obj], terminating: int, manage_err: Exception | None
    ) -> Obj:
        """``calculateStatus``: counters over the active pods and the ReplicaFailure condition.

        ``terminating`` counts the claimed pods being deleted that are not terminal yet.
        """
        status = dict(rs.get("status") or {})
        template_labels = ((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get(
            "labels"
        ) or {}
        now = self.clock.now()
        mrs = min_ready_seconds(rs)
        fully = ready = available = 0
        wanted = template_labels.items()
        for p in active:
            if wanted <= ((p.get("metadata") or {}).get("labels") or {}).items():
                fully += 1
            if podutil.is_pod_ready(p):
                ready += 1
                if mrs <= 0 or podutil.is_pod_available(p, mrs, now):
                    available += 1
        conditions = [dict(c) for c in status.get("conditions") or []]
        failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
        if manage_err is not None and failure is None:
            diff = len(active) - replicas_of(rs)
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            conditions.append(
                {
                    "type": REPLICA_FAILURE,
                    "status": "True",
                    "lastTransitionTime": rfc3339(now),
                    "reason": reason,
                    "message": _err_text(manage_err),
                }
            )
        elif manage_err is None and failure is not None:
            conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        status["replicas"] = len(active)
        status["fullyLabeledReplicas"] = fully
        status["readyReplicas"] = ready
        status["availableReplicas"] = available
        status["terminatingReplicas"] = terminating
        return status

    async def _update_status(self, rs: Obj, status: Obj) -> Obj:
        """``updateReplicaSetStatus``: skip when nothing changed; observedGeneration follows generation."""
        generation = int((rs.get("metadata") or {}).get("generation") or 0)
        old = rs.get("status") or {}
        if (
            old == {**status, "observedGeneration": old.get("observedGeneration")}
            and int(old.get("observedGeneration") or 0) == generation
        ):
            return rs
        status["observedGeneration"] = generation
        body = {**rs, "status": status}
        try:
            return await self.client.update_status(self.gvr, body, namespace_of(rs))
        except errors.StatusError as e:
            if errors.is_not_found(e):
                return body
            raise


class ReplicationManager(ReplicaSetController):
    """The ReplicationController (core/v1) flavour: a map selector, ``v1`` ownerReferences."""

    name = RC_NAME
    gvr = REPLICATIONCONTROLLERS
    api_version = "v1"
    kind = "ReplicationController"

    def selector_of(self, obj: Obj) -> LabelSelector:
        sel = (obj.get("spec") or {}).get("selector")
        if sel is None:
            sel = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        return label_selector_from_dict({"matchLabels": dict(sel or {})})

    def calculate_status(
        self, rs: Obj, active: list[Obj], terminating: int, manage_err: Exception | None
    ) -> Obj:
        """ReplicationControllerStatus has no terminatingReplicas."""
        status = super().calculate_status(rs, active, terminating, manage_err)
        status.pop("terminatingReplicas", None)
        return status
