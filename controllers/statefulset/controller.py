"""StatefulSet controller wiring (kube's ``stateful_set.go``): informers, handlers, ``sync(key)``.

Informers: StatefulSets, Pods, ControllerRevisions and PersistentVolumeClaims. Pod handlers only
enqueue the owning set (resolved from the controller ownerReference, checked against the set's
UID) or, for an orphan, every set whose selector matches it. ``sync`` reads the caches only:

1. the set from the cache (gone => nothing to do);
2. its revisions — owned ones plus orphans matching the selector, which are adopted (both read
   from indexes: the set's controller UID, the orphans of its namespace);
3. its pods — candidates come from two indexes (pods whose controller is this set, pods named
   ``<set>-<n>``), never a namespace scan — claimed by selector (adopt / release); what the
   algorithm reads of each pod is read once per pod version (:mod:`.podfacts`);
4. the scheduling hook (:mod:`controllers.statefulset.hooks`), then the algorithm in
   :mod:`controllers.statefulset.control`.
"""

from __future__ import annotations

import logging
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.events import EventRecorder
from apiserver.client.informer import (
    CONTROLLER_UID,
    Informer,
    InformerFactory,
    controller_uid_index,
    index_reads,
)
from apiserver.client.interface import CONTROLLERREVISIONS, PODS, PVCS, STATEFULSETS, Client
from apiserver.meta import (
    Clock,
    controller_ref,
    is_being_deleted,
    key_of,
    labels_of,
    namespace_of,
    resource_version_of,
    split_key,
    uid_of,
)
from apiserver.selectors import LabelSelector, label_selector_from_dict
from controllers.base import Controller
from controllers.metrics import ControllerMetrics
from controllers.ownerlookup import owners_of_added, owners_of_updated, owners_selecting
from controllers.refmanager import ControllerRefManager, recheck_deletion_timestamp
from controllers.statefulset import utils
from controllers.statefulset.control import StatefulSetControl
from controllers.statefulset.hooks import PROCEED, NoopSchedulingHook, SchedulingHook
from controllers.statefulset.pod_control import StatefulPodControl
from controllers.statefulset.podfacts import PodFactsCache, SetFacts
from controllers.statefulset.quiet import Quiet, keeps_all, still

log = logging.getLogger("gangplane.statefulset")

NAME = "statefulset-controller"
#: pod index: ``namespace/<parent>`` for pods named ``<parent>-<ordinal>``
MEMBER_OF = "statefulset-member"
#: ControllerRevision index: the namespace of each revision without a controller (an orphan)
ORPHAN_IN = "orphan-in-namespace"


@index_reads()  # the name and namespace: the key
def member_index(pod: Obj) -> list[str]:
    parent, ordinal = utils.parent_and_ordinal((pod.get("metadata") or {}).get("name", ""))
    return [f"{namespace_of(pod)}/{parent}"] if ordinal >= 0 else []


@index_reads("metadata.ownerReferences")
def orphan_index(obj: Obj) -> list[str]:
    """An object without a controller ownerReference, under its namespace (adoption candidates).

    Orphans are rare and short-lived, so a sync reads its own revisions from the controller-UID
    index and the orphans of its namespace from this one: never every revision of the namespace,
    which made a namespace of N sets cost O(N) per sync.
    """
    return [namespace_of(obj)] if controller_ref(obj) is None else []


class StatefulSetController(Controller):
    name = NAME
    workers = 5  # kube's --concurrent-statefulset-syncs
    #: A set's sync walks all of its pods, and while a thousand pods start every one of them
    #: changes several times: syncs of one set taking 2 ms or more are spaced by their own cost
    #: (see :class:`controllers.base.Controller`), so one big set cannot take more than half of
    #: the loop from the scheduler and the node agent. Only the status write is delayed: pods
    #: are created in the same sync that finds them missing.
    coalesce_min = 0.002

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
        scheduling_hook: SchedulingHook | None = None,
    ) -> None:
        self.scheduling_hook: SchedulingHook = scheduling_hook or NoopSchedulingHook()
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.sets: Informer = self.informers.informer(STATEFULSETS)
        self.pods: Informer = self.informers.informer(PODS)
        self.revisions: Informer = self.informers.informer(CONTROLLERREVISIONS)
        self.claims: Informer = self.informers.informer(PVCS)
        self.pods.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.pods.add_indexer(MEMBER_OF, member_index)
        self.revisions.add_indexer(CONTROLLER_UID, controller_uid_index)
        self.revisions.add_indexer(ORPHAN_IN, orphan_index)
        self.sets.add_event_handler(self._on_set, lambda old, new: self._on_set(new), self._on_set)
        self.pods.add_event_handler(self._add_pod, self._update_pod, self._delete_pod)
        self.facts = PodFactsCache()
        #: per set key, the state the last sync left when a sync of it writes nothing (:mod:`.quiet`)
        self._quiet: dict[str, Quiet] = {}
        #: return at once from a sync of a vouched state (False: always the full sync; tests
        #: compare the two)
        self.quiet_shortcut = True
        #: set key -> ((uid, generation), parsed selector): see :meth:`_selector`
        self._selectors: dict[str, tuple[tuple[str, int], LabelSelector]] = {}
        self.pod_control = StatefulPodControl(self.client, self.recorder, self.claims)
        self.control = StatefulSetControl(self.client, self.pod_control, self.recorder, self.clock)
        self.scheduling_hook.attach(self)

    def _on_set(self, sts: Obj) -> None:
        self.enqueue(key_of(sts))

    def _resolve(self, namespace: str, ref: Obj | None) -> Obj | None:
        """``resolveControllerRef``: the cached set a controller reference points at, if UIDs agree."""
        if ref is None or ref.get("kind") != utils.KIND or ref.get("apiVersion", "").split("/")[0] != "apps":
            return None
        sts = self.sets.get_by_name(namespace, ref.get("name", ""))
        if sts is None or uid_of(sts) != ref.get("uid"):
            return None
        return sts

    def _sets_for_orphan(self, pod: Obj) -> list[Obj]:
        """``getPodStatefulSets``: the sets in the pod's namespace whose selector matches it."""
        return owners_selecting(self.sets, pod)

    def _add_pod(self, pod: Obj) -> None:
        if is_being_deleted(pod):
            self._delete_pod(pod)
            return
        for sts in owners_of_added(pod, self._resolve, self._sets_for_orphan):
            self.enqueue(key_of(sts))

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (cur.get("metadata") or {}).get(
            "resourceVersion"
        ):
            return
        owners, sts = owners_of_updated(old, cur, self._resolve, self._sets_for_orphan)
        for owner in owners:
            self.enqueue(key_of(owner))
        if sts is not None:
            min_ready = utils.min_ready_seconds(sts)
            if min_ready > 0 and not utils.is_pod_ready(old) and utils.is_pod_ready(cur):
                # one more sync once the pod has been Ready long enough to count as available
                self.enqueue_after(key_of(sts), min_ready + 1)

    def _delete_pod(self, pod: Obj) -> None:
        sts = self._resolve(namespace_of(pod), controller_ref(pod))
        if sts is not None:
            self.enqueue(key_of(sts))

    async def on_synced(self) -> None:
        for key in self.sets.keys():  # noqa: SIM118 - Informer.keys() is a method, not a dict view
            self.enqueue(key)

    # ------------------------------------------------------------------ sync
    async def sync(self, key: str) -> None:
        namespace, name = split_key(key)
        sts = self.sets.get_by_name(namespace, name)
        if sts is None:
            self.facts.forget(key)
            self.control.forget(key)
            self._selectors.pop(key, None)
            self._quiet.pop(key, None)
            return
        sts = self.control.newest(key, sts)
        try:
            selector = self._selector(key, sts)
        except ValueError as e:
            log.warning("statefulset %s has an invalid selector: %s", key, e)
            return  # a non-transient error: no retry
        if self._still_quiet(key, sts, selector):
            self.facts.drop_seeds(key)
            return
        self._quiet.pop(key, None)
        written = self.control.written(key)
        facts = self.facts.begin(key, uid_of(sts), selector)
        claimed = True
        try:
            revisions, adopted = await self._claim_revisions(sts, selector)
            pods, released = await self._claim_pods(sts, selector, facts)
            claimed = not adopted and not released
            plan = PROCEED
            if self.scheduling_hook.wants(sts):
                plan = await self.scheduling_hook.prepare(sts, pods)
            status = await self.control.update(sts, pods, revisions, plan, facts)
        finally:
            facts.end()
        self._vouch(key, sts, selector, written, claimed)
        if plan.requeue_after is not None:
            self.enqueue_after(key, plan.requeue_after)
        spec = self.control.specs.get(key, sts)
        if spec.min_ready > 0 and int(status.get("availableReplicas") or 0) != spec.replicas:
            self.enqueue_after(key, spec.min_ready)

    def _still_quiet(self, key: str, sts: Obj, selector: LabelSelector) -> bool:
        """The set is in the state its last sync left and vouched for (:mod:`.quiet`), and the
        scheduling hook's resolution still holds: a sync would write nothing."""
        q = self._quiet.get(key)
        if q is None or not self.quiet_shortcut:
            return False
        uid, ns = uid_of(sts), namespace_of(sts)
        if not still(
            q,
            sts,
            selector,
            self.pods.by_index(MEMBER_OF, f"{ns}/{sts['metadata']['name']}"),
            self.pods.count_by_index(CONTROLLER_UID, uid),
            self.revisions.by_index(CONTROLLER_UID, uid),
            self.revisions.by_index(ORPHAN_IN, ns),
        ):
            return False
        hook = self.scheduling_hook
        if not hook.wants(sts):
            return True
        settled = getattr(hook, "settled", None)  # optional (hooks module docstring)
        return settled is not None and bool(settled(sts))

    def _vouch(self, key: str, sts: Obj, selector: LabelSelector, written: Obj | None, claimed: bool) -> None:
        """Keep the state this sync left (:mod:`.quiet`) when the algorithm vouched for it, the
        claim changed no object and every pod is one the claim keeps."""
        settled = self.control.settled.pop(key, None)
        if settled is None or not claimed:
            return
        pods, revisions = settled
        if not keeps_all(pods, uid_of(sts), sts["metadata"]["name"], selector):
            return
        mine = self.control.written(key)
        left = mine if mine is not None and mine is not written else sts
        self._quiet[key] = Quiet.vouched((uid_of(left), resource_version_of(left)), pods, revisions)

    def _selector(self, key: str, sts: Obj) -> LabelSelector:
        """The set's parsed ``spec.selector``, parsed once per set UID and generation.

        (``spec.selector`` is immutable in apps/v1, and any spec change bumps the generation
        anyway; a set without a generation, not from an API server, is parsed every time.)
        Raises ValueError for an invalid selector, as parsing does.
        """
        md = sts.get("metadata") or {}
        memo_key = (md.get("uid", ""), int(md.get("generation") or 0))
        hit = self._selectors.get(key)
        if hit is not None and hit[0] == memo_key and memo_key[1]:
            return hit[1]
        selector = label_selector_from_dict((sts.get("spec") or {}).get("selector"))
        self._selectors[key] = (memo_key, selector)
        return selector

    async def _claim_revisions(self, sts: Obj, selector: LabelSelector) -> tuple[list[Obj], bool]:
        """``ListRevisions`` + ``adoptOrphanRevisions``: the revisions matching the selector that this
        set controls, plus matching orphans, which are adopted (then True).

        Read from two indexes (this set's controller UID, the orphans of its namespace), so a
        sync costs the same however many sets share the namespace.
        """
        owned = [
            r for r in self.revisions.by_index(CONTROLLER_UID, uid_of(sts)) if selector.matches(labels_of(r))
        ]
        orphans = [
            r for r in self.revisions.by_index(ORPHAN_IN, namespace_of(sts)) if selector.matches(labels_of(r))
        ]
        if not orphans:
            return owned, False
        manager = self._ref_manager(sts, selector, CONTROLLERREVISIONS)
        adopted = await manager.claim(orphans)
        return [*owned, *adopted], True

    async def _claim_pods(self, sts: Obj, selector: LabelSelector, facts: SetFacts) -> tuple[list[Obj], bool]:
        """``getPodsForStatefulSet``: members and owned pods, adopted/released by selector (and
        whether any pod went through the manager).

        A pod this set controls that is a member and matches the selector is simply kept (what
        ``ControllerRefManager.claim`` does with it); only the others go through the manager.
        """
        uid, name = uid_of(sts), sts["metadata"]["name"]
        members = self.pods.by_index(MEMBER_OF, f"{namespace_of(sts)}/{name}")
        kept, others, controlled = facts.split(members, uid, name)
        if controlled != self.pods.count_by_index(CONTROLLER_UID, uid):
            # pods this set controls that are not named as its members (the cache holds one
            # object per pod: identity tells the two index lookups' pods apart)
            seen = {id(p) for p in members}
            others.extend(p for p in self.pods.by_index(CONTROLLER_UID, uid) if id(p) not in seen)
        if not others:
            return kept, False
        manager = self._ref_manager(sts, selector, PODS)
        return [*kept, *await manager.claim(others, lambda p: utils.is_member_of(sts, p))], True

    def _ref_manager(self, sts: Obj, selector: LabelSelector, gvr: Any) -> ControllerRefManager:
        return ControllerRefManager(
            self.client,
            gvr,
            sts,
            selector,
            utils.API_VERSION,
            utils.KIND,
            recheck_deletion_timestamp(self.client, STATEFULSETS, sts),
        )
