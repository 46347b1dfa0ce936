"""Deployment controller wiring (kube's ``deployment_controller.go``): informers, handlers, ``sync(key)``.

Informers: Deployments, ReplicaSets and Pods. ReplicaSet handlers enqueue the owning Deployment
(resolved from the controller ownerReference and checked against its UID) or, for an orphan, every
Deployment whose selector matches it; a deleted pod wakes a Recreate Deployment that waits for its
old pods to go. ``sync`` reads the caches only:

1. the Deployment (gone => nothing to do); an empty selector selects everything and is refused
   with kube's ``SelectingAll`` warning;
2. its ReplicaSets — owned ones plus matching orphans, adopted/released by selector;
3. being deleted => status only; then the paused condition; paused or a scaling event =>
   :meth:`~controllers.deployment.rollout.Rollout.sync`; otherwise the strategy's rollout.
"""

from __future__ import annotations

import logging

from apiserver.api.types import Obj
from apiserver.client.events import WARNING
from apiserver.client.informer import CONTROLLER_UID, Informer, controller_uid_index
from apiserver.client.interface import DEPLOYMENTS, PODS, REPLICASETS
from apiserver.meta import (
    controller_ref,
    is_being_deleted,
    key_of,
    labels_of,
    namespace_of,
    split_key,
    uid_of,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from controllers import podutil
from controllers.base import Controller
from controllers.deployment import util
from controllers.deployment.rollout import API_VERSION, KIND, Rollout
from controllers.ownerlookup import (
    owners_of_added,
    owners_of_updated,
    owners_selecting,
    resolve_controller_ref,
)
from controllers.refmanager import ControllerRefManager, recheck_deletion_timestamp

log = logging.getLogger("gangplane.deployment")

NAME = "deployment-controller"


class DeploymentController(Controller):
    name = NAME
    workers = 5  # --concurrent-deployment-syncs

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.deployments: Informer = self.informers.informer(DEPLOYMENTS)
        self.replicasets: Informer = self.informers.informer(REPLICASETS)
        self.pods: Informer = self.informers.informer(PODS)
        self.replicasets.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.replicasets.add_indexer(podutil.ORPHANS, podutil.orphan_index)
        self.pods.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.deployments.add_event_handler(
            self._on_deployment, lambda o, n: self._on_deployment(n), self._on_deployment
        )
        self.replicasets.add_event_handler(self._add_rs, self._update_rs, self._delete_rs)
        self.pods.add_event_handler(None, None, self._delete_pod)

    def _on_deployment(self, d: Obj) -> None:
        self.enqueue(key_of(d))

    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        return resolve_controller_ref(self.deployments, namespace, ref, KIND, "apps")

    def _deployments_for_orphan(self, rs: Obj) -> list[Obj]:
        """``getDeploymentsForReplicaSet``."""
        return owners_selecting(self.deployments, rs)

    def _add_rs(self, rs: Obj) -> None:
        if is_being_deleted(rs):
            self._delete_rs(rs)
            return
        for d in owners_of_added(rs, self._resolve, self._deployments_for_orphan):
            self.enqueue(key_of(d))

    def _update_rs(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (cur.get("metadata") or {}).get(
            "resourceVersion"
        ):
            return
        owners, _ = owners_of_updated(old, cur, self._resolve, self._deployments_for_orphan)
        for d in owners:
            self.enqueue(key_of(d))

    def _delete_rs(self, rs: Obj) -> None:
        d = self._resolve(namespace_of(rs), controller_ref(rs))
        if d is not None:
            self.enqueue(key_of(d))

    def _delete_pod(self, pod: Obj) -> None:
        """``deletePod``: a Recreate Deployment waits for its old pods to be gone."""
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.replicasets.get_by_name(namespace_of(pod), ref.get("name", ""))
        if rs is None or uid_of(rs) != ref.get("uid"):
            return
        d = self._resolve(namespace_of(rs), controller_ref(rs))
        if d is not None and util.strategy_type(d) == util.RECREATE:
            self.enqueue(key_of(d))

    async def on_synced(self) -> None:
        for key in self.deployments.keys():  # noqa: SIM118 - Informer.keys() is a method
            self.enqueue(key)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        d = self.deployments.get_by_name(namespace, name)
        if d is None:
            return
        raw_selector = util.spec(d).get("selector")
        try:
            selector = label_selector_from_dict(raw_selector)
        except ValueError as e:
            log.warning("deployment %s has an invalid selector: %s", key, e)
            return
        if selector.empty:
            self.recorder.event(
                d,
                WARNING,
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            status = d.get("status") or {}
            generation = int(d["metadata"].get("generation") or 0)
            if int(status.get("observedGeneration") or 0) < generation:
                await self.client.update_status(
                    DEPLOYMENTS, {**d, "status": {**status, "observedGeneration": generation}}, namespace
                )
            return
        rs_list = await self._claim_replicasets(d, selector)
        rollout = Rollout(
            self.client, self.recorder, self.clock, d, rs_list, lambda: self._pod_map(d, rs_list)
        )
        if is_being_deleted(d):
            new_rs, old = await rollout.all_replicasets(False)
            await rollout.sync_status([*old, new_rs], new_rs)
            return
        await self._check_paused_conditions(rollout)
        if util.spec(d).get("paused") or await rollout.is_scaling_event():
            await rollout.sync()
        elif util.strategy_type(d) == util.RECREATE:
            await rollout.recreate()
        else:
            await rollout.rolling()
        if rollout.requeue_after is not None:
            self.enqueue_after(key, rollout.requeue_after)

    async def _check_paused_conditions(self, rollout: Rollout) -> None:
        """``checkPausedConditions``: Progressing Unknown DeploymentPaused / DeploymentResumed."""
        d = rollout.d
        if not util.has_progress_deadline(d):
            return
        cond = util.get_condition(d["status"], util.PROGRESSING)
        if cond is not None and cond.get("reason") == util.TIMED_OUT:
            return
        paused_cond = cond is not None and cond.get("reason") == util.PAUSED
        paused = bool(util.spec(d).get("paused"))
        now = self.clock.now()
        if paused and not paused_cond:
            util.set_condition(
                d["status"],
                util.new_condition(util.PROGRESSING, "Unknown", util.PAUSED, "Deployment is paused", now),
            )
        elif not paused and paused_cond:
            util.set_condition(
                d["status"],
                util.new_condition(util.PROGRESSING, "Unknown", util.RESUMED, "Deployment is resumed", now),
            )
        else:
            return
        await rollout.update_status()

    async def _claim_replicasets(self, d: Obj, selector: LabelSelector) -> list[Obj]:
        """``getReplicaSetsForDeployment``."""
        candidates = {key_of(rs): rs for rs in self.replicasets.by_index(CONTROLLER_UID, uid_of(d))}
        for rs in self.replicasets.by_index(podutil.ORPHANS, namespace_of(d)):
            if selector.matches(labels_of(rs)):
                candidates.setdefault(key_of(rs), rs)
        manager = ControllerRefManager(
            self.client,
            REPLICASETS,
            d,
            selector,
            API_VERSION,
            KIND,
            recheck_deletion_timestamp(self.client, DEPLOYMENTS, d),
        )
        return await manager.claim(list(candidates.values()))

    def _pod_map(self, d: Obj, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """``getPodMapForDeployment``: the pods of each ReplicaSet, by the ReplicaSet's uid."""
        return {uid_of(rs): list(self.pods.by_index(CONTROLLER_UID, uid_of(rs))) for rs in rs_list}
