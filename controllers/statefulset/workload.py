"""KEP-6277: the StatefulSet controller's Workload / PodGroup lifecycle, as a scheduling hook.

The StatefulSet controller calls :meth:`WorkloadSchedulingHook.prepare` once per sync, after it
has claimed the set's pods and before it creates or deletes any (see
:mod:`controllers.statefulset.hooks`). The hook implements "Controller Workflow":

1. **Existing pods block creation.** Only a StatefulSet with no pods at all (active or terminal)
   may get a Workload or PodGroup created for it; once pods exist the hook discovers and uses
   what is there and creates nothing. A restart between "Workload created" and "PodGroup
   created" therefore resumes where it stopped (no pod could have been created in between).
2. **Delegation** ("Composition by Higher-Level Controllers"): a parent controller
   ownerReference plus ``scheduling.k8s.io/group-template-name`` means the parent owns the
   Workload. The hook finds it (``spec.controllerRef`` = the parent), instantiates only its own
   PodGroup from the named template (optionally under
   ``scheduling.k8s.io/parent-compositepodgroup``), never creates a Workload, and falls back to
   default scheduling with a Warning event when the parent's Workload or template cannot be
   resolved unambiguously.
3. **StatefulSet-managed path**: the Workload is discovered by ``spec.controllerRef`` (apps,
   StatefulSet, name) or compiled with the workloadbuilder and created; two matches are
   ambiguous, a Workload whose podGroupTemplates count is not 1 is unsupported — both fall back
   with an event and touch nothing.
4. **PodGroup** discovered by ``spec.workloadRef`` (workloadName + the target templateName) or
   instantiated from the template; more than one is unsupported (fall back with an event).
5. **minCount** ("Scale Lifecycle"): on objects this controller created, gang minCount is derived
   from ``spec.replicas`` (clamped to 1, never written back) and patched into the Workload's
   single template first, then into the PodGroup (whose target is always its template's value,
   so under a user's or parent's Workload the template is authoritative). Only after both
   writes succeed does the sync go on to create or delete pods; a failed write raises, so the
   sync backs off and no pod changes until a retry succeeds. Nothing else of an existing
   Workload or PodGroup is ever written, and nothing is ever deleted: ownerReferences and the
   garbage collector clean up (OwnerReferences Relationship).
6. **Pods** get ``spec.schedulingGroup.podGroupName`` and a non-controller ownerReference to the
   PodGroup. A fall-back leaves them undecorated (default scheduling).

Creation proceeds on the synchronous create response (no wait for the informer): the created
objects are remembered until the informer has them, and AlreadyExists re-discovers by reference
through a live list (``retry.OnError(IsAlreadyExists)`` in the Job integration). Any API error
while creating raises: the sync backs off and, as "Troubleshooting" requires for gang sets, no
pod is created without its PodGroup.

A StatefulSet without ``spec.scheduling``, or a controller whose gate view has
``WorkloadWithStatefulSet`` (or ``GenericWorkload``) off, is not wanted: no compilation, no
minCount sync, no API call, pods created exactly as before ("Feature Enablement and Rollback").
"""

from __future__ import annotations

import functools
import logging
import time
import weakref
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.context import ComponentContext
from apiserver.client.events import NORMAL, WARNING, EventRecorder
from apiserver.client.interface import GVR, PODGROUPS, WORKLOADS, Client
from apiserver.meta import (
    controller_ref,
    is_being_deleted,
    key_of,
    name_of,
    namespace_of,
    resource_version_of,
    uid_of,
)
from apiserver.workloadbuilder import (
    Builder,
    BuildError,
    BuildOptions,
    pod_group_name,
    workload_name,
)
from apiserver.workloadbuilder.statefulset import (
    statefulset_controller_ref,
)
from controllers.statefulset import workload_beta as beta
from controllers.statefulset import workload_utils as wu
from controllers.statefulset.compiled import WorkloadShapes
from controllers.statefulset.hooks import PROCEED, SchedulingPlan
from controllers.statefulset.resolved import Resolved, ResolvedMemo, views
from controllers.workloadhook import WorkloadHookBase
from featuregates import (
    GENERIC_WORKLOAD,
    STATEFULSET_WORKLOAD_BETA_METRICS,
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE,
    STATEFULSET_WORKLOAD_STATUS_CONDITION,
    WORKLOAD_WITH_STATEFULSET,
    FeatureGate,
)

if TYPE_CHECKING:
    from controllers.statefulset.controller import StatefulSetController

log = logging.getLogger("gangplane.statefulset.workload")

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"


# ---------------------------------------------------------------------------------- metrics
class WorkloadMetrics:
    """KEP-6277 "Monitoring Requirements": the controller's one SLI for this feature."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.creation_errors = Counter(
            "statefulset_workload_creation_errors_total",
            "Number of times the StatefulSet controller failed to compile or create a Workload or "
            "PodGroup for a StatefulSet with spec.scheduling.",
            registry=registry,
        )


_METRICS: weakref.WeakKeyDictionary[CollectorRegistry, WorkloadMetrics] = weakref.WeakKeyDictionary()


def workload_metrics(registry: CollectorRegistry | None) -> WorkloadMetrics | None:
    """The registry's :class:`WorkloadMetrics`, created once: a restarted StatefulSet controller
    component reuses the collector instead of registering the name twice (which raises)."""
    if registry is None:
        return None
    m = _METRICS.get(registry)
    if m is None:
        m = WorkloadMetrics(registry)
        _METRICS[registry] = m
    return m


def _message(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def _set_ref(sts: Obj) -> str:
    return f"{namespace_of(sts)}/{name_of(sts)}"


def _min_count_of(compiled: Obj) -> int | None:
    """The gang minCount of a compiled Workload's first template (None: none, or not gang)."""
    templates = wu.pod_group_templates(compiled)
    return wu.gang_min_count(templates[0]) if templates else None


# ---------------------------------------------------------------------------------- the hook
def pod_group_builder(wl: Obj, owner: Obj) -> Builder:
    """A builder that instantiates ``wl``'s PodGroupTemplates, ``owner`` their controller.

    ``new_builder_from_existing_workload`` first copies the whole Workload (managedFields and
    all) so that nothing a builder does can reach the caller's object. This hook only asks
    :meth:`Builder.new_pod_group` of it, which reads the Workload and copies each template field
    it puts in the PodGroup: the Workload (a create response or the cache's, shared read-only)
    is read in place, unchanged (``test_statefulset_pod_group_builder.py``).
    """
    return Builder(None, BuildOptions(owner=owner), existing_workload=wl)


class WorkloadSchedulingHook(WorkloadHookBase):
    """The :class:`~controllers.statefulset.hooks.SchedulingHook` for KEP-6277 (module docstring); its
    informers, recently created objects and rediscovery are :class:`WorkloadHookBase`'s, as the
    Job's hook's are."""

    def __init__(
        self,
        gates: FeatureGate,
        *,
        api_available: bool = True,
        metrics: WorkloadMetrics | None = None,
        beta_metrics: beta.BetaMetrics | None = None,
    ) -> None:
        super().__init__()
        #: the controller's own gate view, read once: a gate change means a component restart
        self.enabled = gates.enabled(WORKLOAD_WITH_STATEFULSET) and gates.enabled(GENERIC_WORKLOAD)
        self.gates = gates
        #: gangplane's KEP-6277 Beta proposals (controllers/statefulset/workload_beta.py)
        self.status_condition = gates.enabled(STATEFULSET_WORKLOAD_STATUS_CONDITION)
        self.gang_rolling_update = gates.enabled(STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE)
        self.beta_metrics = beta_metrics if gates.enabled(STATEFULSET_WORKLOAD_BETA_METRICS) else None
        #: StatefulSet UID -> when the controller first observed it eligible (Beta metric)
        self._eligible_since: dict[str, float] = {}
        #: StatefulSet UID -> (generation, when its change was observed), for the update latency
        self._spec_changed: dict[str, tuple[int, float]] = {}
        #: StatefulSet UIDs whose Workload this process created, until their PodGroup exists
        self._workload_made: set[str] = set()
        #: False when the API server does not serve scheduling.k8s.io/v1beta1 (version skew)
        self.api_available = api_available
        self.metrics = metrics
        self.client: Client | None = None
        self.recorder: EventRecorder | None = None
        self.controller: StatefulSetController | None = None
        #: our last minCount write per object UID: (resourceVersion written, value)
        self._written: dict[str, tuple[str, int]] = {}
        #: the compiled gang minCount per StatefulSet UID: (generation compiled, value); a spec
        #: change (a scale) bumps the generation, so steady syncs skip the recompilation
        self._desired: dict[str, tuple[int, int | None]] = {}
        #: per StatefulSet UID, the last resolution that wrote nothing (:mod:`.resolved`)
        self.resolved = ResolvedMemo()
        #: the compiled Workload spec per scheduling shape (:mod:`.compiled`)
        self.shapes = WorkloadShapes()
        #: hand the Workload and PodGroup bodies to their creates (built privately, never read
        #: again); False: the client copies them (tests compare the two)
        self.handoff = True

    # ------------------------------------------------------------------ SchedulingHook
    def attach(self, controller: StatefulSetController) -> None:
        """Add the Workload/PodGroup informers and their indexes (only when the feature is on)."""
        self.controller = controller
        self.client = controller.client
        self.recorder = controller.recorder
        if not self.enabled or not self.api_available:
            return
        controller.sets.add_indexer(wu.STATEFULSET_BY_PARENT, wu.delegating_parent_index)
        self._watch_workloads_and_pod_groups(
            controller.informers,
            (self._on_workload, self._on_workload_update, self._on_workload_delete),
            (self._on_pod_group, self._on_pod_group_update, self._on_pod_group_delete),
        )
        controller.sets.add_event_handler(None, None, self._on_set_delete)
        if self.beta_metrics is not None:
            self.beta_metrics.policies.clear()  # a restarted controller recounts from its informer
            controller.sets.add_event_handler(self._on_set_seen, self._on_set_changed, None)
            self.workloads.add_event_handler(
                self._track_workload, lambda old, new: self._track_workload(new), self._untrack_workload
            )

    def wants(self, sts: Obj) -> bool:
        """Pure: the gate view allows it and the set opted in (``scheduling: {}`` counts)."""
        return self.enabled and isinstance((sts.get("spec") or {}).get("scheduling"), dict)

    async def prepare(self, sts: Obj, pods: list[Obj]) -> SchedulingPlan:
        """Discover or create the Workload and PodGroup, sync minCount, say how to decorate pods.

        Raises (the sync backs off, no pod is created or deleted) when an object cannot be
        compiled, created or patched. Returns :data:`PROCEED` without decoration to fall back.
        """
        if is_being_deleted(sts):
            return PROCEED  # the StatefulSet controller makes no pod changes; GC does the rest
        if not self.api_available:
            err = errors.StatusError(
                404,
                "NotFound",
                "the server could not find the requested resource (workloads.scheduling.k8s.io)",
            )
            self._creation_failed(sts, "Workload", "", err)
            raise err
        may_create = not pods
        plan = wu.delegation(sts)
        if plan.orphan_annotation:
            self._warn(
                sts,
                wu.INVALID_DELEGATION,
                f"annotation {wu.GROUP_TEMPLATE_NAME_ANNOTATION} is set but StatefulSet {_set_ref(sts)} has no "
                "controller ownerReference to a parent; it manages its own Workload and PodGroup",
            )
        if plan.parent is not None:
            pg = await self._delegated(sts, plan, may_create)
        else:
            pg = await self._managed(sts, may_create)
        if pg is None:
            return PROCEED
        conditions: tuple[Obj, ...] = ()
        if self.status_condition:
            conditions = (beta.statefulset_condition(sts, pg, self._now()),)
        if self.gang_rolling_update:
            for pod, message in beta.unfit_replacements(sts, pods):
                self._warn(
                    sts, beta.REPLACEMENT_UNSCHEDULABLE, beta.replacement_message(sts, pod, pg, message)
                )
        return SchedulingPlan(
            decorate_pod=functools.partial(wu.decorate_pod, pg=pg), reason=name_of(pg), conditions=conditions
        )

    def settled(self, sts: Obj) -> bool:
        """:meth:`prepare` would return a plain proceeding plan (no conditions) without a call
        or an Event: the set is not being deleted, the API is served, it delegates nothing (nor
        warns about an orphan annotation) and its last no-write resolution still holds
        (:meth:`_still_resolved`); the Beta options that add conditions or Events are off."""
        if (
            is_being_deleted(sts)
            or not self.api_available
            or self.status_condition
            or self.gang_rolling_update
        ):
            return False
        plan = wu.delegation(sts)
        if plan.orphan_annotation or plan.parent is not None:
            return False
        return self._still_resolved(sts, wu.statefulset_key(sts)) is not None

    def _now(self) -> float:
        clock = getattr(self.controller, "clock", None)
        return clock.now() if clock is not None else time.time()

    # ------------------------------------------------------------------ the two paths
    async def _managed(self, sts: Obj, may_create: bool) -> Obj | None:
        """StatefulSet-managed path (Controller Workflow steps 3-4)."""
        key = wu.statefulset_key(sts)
        still = self._still_resolved(sts, key)
        if still is not None:
            return still
        found = self._discover_workloads(sts, key)
        if len(found) > 1:
            self._warn(
                sts,
                wu.AMBIGUOUS_WORKLOAD,
                f"found {len(found)} Workloads referencing StatefulSet {_set_ref(sts)}, "
                "falling back to default scheduling",
            )
            return None
        compiled: Obj | None = None
        #: the compiled gang minCount, read before the compiled Workload is handed to its create
        compiled_min: tuple[int | None] | None = None
        if found:
            wl = found[0]
        elif may_create:
            compiled = self._compile(sts)
            compiled_min = (_min_count_of(compiled),)
            wl = await self._create_workload(sts, compiled)
        else:
            return None
        why = wu.unsupported_structure(wl)
        if why is not None:
            self._warn(sts, wu.UNSUPPORTED_WORKLOAD_STRUCTURE, f"{why}, falling back to default scheduling")
            return None
        template = wu.pod_group_templates(wl)[0]
        if wu.created_by_controller(wl, sts) and wu.gang_min_count(template) is not None:
            wl = await self._sync_workload_min_count(
                sts, wl, template, self._desired_min_count(sts, compiled_min)
            )
            template = wu.pod_group_templates(wl)[0]
        template_name = str(template.get("name") or "")
        groups = self._discover_pod_groups(sts, wl, template_name, controlled_only=False)
        if len(groups) > 1:
            self._ambiguous_pod_groups(sts, wl, groups)
            return None
        if not groups:
            if not may_create:
                return None
            # KEP-6277 "OwnerReferences Relationship": PodGroup → Workload only when this controller
            # created the Workload; a user's (BYO) Workload gets no dependents from it, so deleting
            # the StatefulSet collects the PodGroup (and its pods) while the Workload stays.
            created = await self._create_pod_group(
                sts,
                wl,
                template_name,
                pod_group_name(name_of(wl), template_name),
                link_workload=wu.created_by_controller(wl, sts),
                controlled_only=False,
            )
            self._observe_creation(sts)
            if compiled is not None or (found and wl is found[0]):
                # The cache will show this Workload (created or read from it) and this PodGroup:
                # the next sync recognises them there (module docstring of .resolved).
                self._remember_resolution(sts, key, wl, created, created=([wl], [created]))
            return created
        synced = await self._sync_pod_group_min_count(sts, groups[0], wu.gang_min_count(template))
        if synced is not groups[0]:
            self._observe_update(sts)
        elif found and wl is found[0]:
            self._remember_resolution(sts, key, wl, synced)
        return synced

    def _still_resolved(self, sts: Obj, key: str) -> Obj | None:
        """The PodGroup the last no-write resolution used, if nothing it read has changed
        (:mod:`.resolved`): two index lookups and a comparison instead of the walk."""
        uid = uid_of(sts)
        hit = self.resolved.get(uid, int((sts.get("metadata") or {}).get("generation") or 0))
        if hit is None or not self._caught_up(sts):
            return None
        if self._written and (hit.uids[0] in self._written or hit.uids[1] in self._written):
            return None  # a minCount write not yet in the cache: the full check handles it
        assert self.workloads is not None and self.pod_groups is not None
        pg = ResolvedMemo.pick(
            hit,
            self.workloads.by_index(wu.WORKLOAD_BY_CONTROLLER, key),
            self.pod_groups.by_index(wu.POD_GROUP_BY_WORKLOAD, hit.pod_group_key),
        )
        if pg is not None:
            self.resolved.hits += 1
        return pg

    def _remember_resolution(
        self, sts: Obj, key: str, wl: Obj, pg: Obj, *, created: tuple[list[Obj], list[Obj]] | None = None
    ) -> None:
        """Keep what a resolution that patched nothing read (or, for objects it ``created``, the
        buckets the cache will show once it has them: the created objects alone)."""
        uid = uid_of(sts)
        generation = int((sts.get("metadata") or {}).get("generation") or 0)
        self.resolved.forget(uid)
        if not generation or uid_of(wl) in self._written or uid_of(pg) in self._written:
            return
        assert self.workloads is not None and self.pod_groups is not None
        pg_key = f"{namespace_of(wl)}/{name_of(wl)}"
        if created is None:
            wls = self.workloads.by_index(wu.WORKLOAD_BY_CONTROLLER, key)
            pgs = self.pod_groups.by_index(wu.POD_GROUP_BY_WORKLOAD, pg_key)
        else:
            wls, pgs = created
        chosen = next((i for i, o in enumerate(pgs) if o is pg), -1)
        if chosen < 0 or not any(o is wl for o in wls):
            return  # an object from a create response the cache does not have yet
        self.resolved.store(
            uid, Resolved(generation, views(wls), pg_key, views(pgs), chosen, (uid_of(wl), uid_of(pg)))
        )

    async def _delegated(self, sts: Obj, plan: wu.Delegation, may_create: bool) -> Obj | None:
        """Parent-owned Workload: only this StatefulSet's PodGroup is ours (Controller Workflow step 2)."""
        parent = plan.parent or {}
        kind, pname = str(parent.get("kind") or ""), str(parent.get("name") or "")
        key = wu.reference_key(namespace_of(sts), wu.owner_group(parent), kind, pname)
        found = self._discover_workloads(sts, key)
        if len(found) != 1:
            what = "no Workload" if not found else f"{len(found)} Workloads"
            self._warn(
                sts,
                wu.PARENT_WORKLOAD_UNRESOLVED,
                f"found {what} referencing parent {kind} {namespace_of(sts)}/{pname} for PodGroupTemplate "
                f"{plan.template_name}, falling back to default scheduling",
            )
            return None
        wl = found[0]
        template = wu.find_leaf_template(wl, plan.template_name)
        if template is None:
            self._warn(
                sts,
                wu.PARENT_WORKLOAD_UNRESOLVED,
                f"Workload {name_of(wl)} of parent {kind} {namespace_of(sts)}/{pname} has no PodGroupTemplate "
                f"{plan.template_name}, falling back to default scheduling",
            )
            return None
        # A parent's template is shared by its children: only groups this set controls are its own.
        groups = self._discover_pod_groups(sts, wl, plan.template_name, controlled_only=True)
        if len(groups) > 1:
            self._ambiguous_pod_groups(sts, wl, groups)
            return None
        if not groups:
            if not may_create:
                return None
            name = pod_group_name(workload_name(name_of(sts), uid_of(sts)), plan.template_name)
            return await self._create_pod_group(
                sts,
                wl,
                plan.template_name,
                name,
                link_workload=False,
                controlled_only=True,
                parent_composite=plan.parent_composite,
            )
        return await self._sync_pod_group_min_count(sts, groups[0], wu.gang_min_count(template))

    # ------------------------------------------------------------------ discovery
    def _discover_workloads(self, sts: Obj, key: str) -> list[Obj]:
        """Workloads whose ``spec.controllerRef`` is ``key`` (cache plus just-created ones)."""
        assert self.workloads is not None
        cached = self.workloads.by_index(wu.WORKLOAD_BY_CONTROLLER, key)
        extra = [o for o in self._recent(sts, "Workload", cached) if key in wu.workload_controller_index(o)]
        return sorted((o for o in [*cached, *extra] if wu.usable(o, sts)), key=name_of)

    def _discover_pod_groups(
        self, sts: Obj, wl: Obj, template_name: str, *, controlled_only: bool
    ) -> list[Obj]:
        """PodGroups whose ``spec.workloadRef`` names ``wl`` and ``template_name``."""
        assert self.pod_groups is not None
        cached = self.pod_groups.by_index(wu.POD_GROUP_BY_WORKLOAD, f"{namespace_of(wl)}/{name_of(wl)}")
        extra = [o for o in self._recent(sts, "PodGroup", cached) if wu.pod_group_workload_index(o)]
        return sorted(
            (
                o
                for o in [*cached, *extra]
                if self._pod_group_matches(o, sts, wl, template_name, controlled_only)
            ),
            key=name_of,
        )

    @staticmethod
    def _pod_group_matches(pg: Obj, sts: Obj, wl: Obj, template_name: str, controlled_only: bool) -> bool:
        ref = (pg.get("spec") or {}).get("workloadRef") or {}
        return (
            namespace_of(pg) == namespace_of(wl)
            and ref.get("workloadName") == name_of(wl)
            and ref.get("templateName") == template_name
            and wu.usable(pg, sts)
            and (not controlled_only or wu.controls(pg, sts))
        )

    async def _rediscover(self, sts: Obj, gvr: GVR, match: Any) -> list[Obj]:
        """After AlreadyExists: list from the API (the cache may lag) and match by reference."""
        assert self.client is not None
        return await self._rediscover_live(self.client, sts, gvr, match, lambda o: wu.usable(o, sts))

    # ------------------------------------------------------------------ creation
    def _compile(self, sts: Obj) -> Obj:
        """The Workload ``spec.scheduling`` compiles to right now (KEP-6277 "Field Mapping").

        Shares :func:`statefulset_workload_item` with admission, so what was validated is what
        is built; the controller's gate view decides whether shared claims are included. Sets of
        one scheduling shape share the compile (:mod:`.compiled`).
        """
        try:
            wl = self.shapes.workload(sts, self.gates)
        except BuildError as e:
            self._count_error()
            self._warn(
                sts,
                wu.FAILED_WORKLOAD_COMPILATION,
                f"Failed to compile Workload for StatefulSet {_set_ref(sts)}: {e}",
            )
            raise
        return wu.mark_managed(wl)

    async def _create_workload(self, sts: Obj, compiled: Obj) -> Obj:
        """Create ``compiled`` (this sync's own: :meth:`_compile` builds every Workload afresh, its
        spec decoded from the kept shape's bytes) for ``sts``. Handed off: nothing reads
        ``compiled`` after the call (its name is read first, its minCount by the caller)."""
        assert self.client is not None
        ns = namespace_of(sts)
        name = name_of(compiled)
        try:
            wl = await self.client.create(WORKLOADS, compiled, ns, handoff=self.handoff, read_only=True)
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                again = await self._rediscover(
                    sts, WORKLOADS, lambda o: wu.statefulset_key(sts) in wu.workload_controller_index(o)
                )
                if len(again) == 1:
                    self._remember(sts, again[0])
                    return again[0]
            self._creation_failed(sts, "Workload", name, e)
            raise
        self._remember(sts, wl)
        if self.beta_metrics is not None:
            self._workload_made.add(uid_of(sts))
        self._event(
            sts,
            NORMAL,
            wu.WORKLOAD_CREATED,
            f"Created Workload {name_of(wl)} for StatefulSet {_set_ref(sts)}",
        )
        return wl

    async def _create_pod_group(
        self,
        sts: Obj,
        wl: Obj,
        template_name: str,
        name: str,
        *,
        link_workload: bool,
        controlled_only: bool,
        parent_composite: str = "",
    ) -> Obj:
        """Instantiate the template as this set's PodGroup (controller ownerReference to the set).

        ``link_workload`` adds the PodGroup → Workload ownerReference, which only a Workload this
        controller created gets (never a user's or a parent's: they are not given dependents by
        the set). ``controlled_only`` is the discovery rule used to re-find the PodGroup when the
        create races with an existing one.
        """
        assert self.client is not None
        builder = pod_group_builder(wl, statefulset_controller_ref(sts))
        try:
            pg = builder.new_pod_group(name, template_name)
        except BuildError as e:
            self._count_error()
            self._warn(
                sts,
                wu.FAILED_WORKLOAD_COMPILATION,
                f"Failed to compile PodGroup for StatefulSet {_set_ref(sts)}: {e}",
            )
            raise
        wu.mark_managed(pg)
        if link_workload:
            pg["metadata"].setdefault("ownerReferences", []).append(wu.workload_owner_ref(wl))
        if parent_composite:
            pg["spec"]["parentCompositePodGroupName"] = parent_composite
        try:
            # ``pg`` is this call's own (the builder copies what it takes from the Workload, the
            # references are new): handed off, the in-process client need not copy it again
            created = await self.client.create(
                PODGROUPS, pg, namespace_of(sts), handoff=self.handoff, read_only=True
            )
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                again = await self._rediscover(
                    sts,
                    PODGROUPS,
                    lambda o: self._pod_group_matches(o, sts, wl, template_name, controlled_only),
                )
                if len(again) == 1:
                    self._remember(sts, again[0])
                    return again[0]
            self._creation_failed(sts, "PodGroup", name, e)
            raise
        self._remember(sts, created)
        self._event(
            sts,
            NORMAL,
            wu.POD_GROUP_CREATED,
            f"Created PodGroup {name_of(created)} for StatefulSet {_set_ref(sts)}",
        )
        return created

    # ------------------------------------------------------------------ minCount
    def _needs_min_count(self, obj: Obj, have: int | None, want: int) -> bool:
        """Whether the stored minCount may differ from ``want``.

        The cache can lag behind our own last write; until it shows that write, both the cached
        value and the value we wrote must agree with ``want`` to skip the patch (a redundant
        patch is idempotent, a skipped one could let pods change against a stale minCount).
        """
        uid = uid_of(obj)
        last = self._written.get(uid)
        if last is not None and last[0] == resource_version_of(obj):
            del self._written[uid]
            last = None
        return have != want or (last is not None and last[1] != want)

    def _desired_min_count(self, sts: Obj, compiled_min: tuple[int | None] | None) -> int | None:
        """The gang minCount ``spec.scheduling`` compiles to for the current spec.

        Recompiled from the StatefulSet (never read back from it: the derived value is not
        written to the StatefulSet), once per spec generation; only minCount is ever written
        to the existing Workload. ``compiled_min``: this sync's compile's value, when it compiled
        (read from the Workload before its create, which was handed it).
        """
        generation = int((sts.get("metadata") or {}).get("generation") or 0)
        memo = self._desired.get(uid_of(sts))
        if compiled_min is None and memo is not None and memo[0] == generation and generation:
            return memo[1]
        if compiled_min is not None:
            want = compiled_min[0]
        else:
            want = wu.gang_min_count(wu.pod_group_templates(self._compile(sts))[0])
        self._desired[uid_of(sts)] = (generation, want)
        return want

    async def _sync_workload_min_count(self, sts: Obj, wl: Obj, template: Obj, want: int | None) -> Obj:
        """Our Workload's single template gets the replica-derived minCount (gang only)."""
        assert self.client is not None
        have = wu.gang_min_count(template)
        if want is None or have is None or not self._needs_min_count(wl, have, want):
            return wl
        patch = wu.workload_min_count_patch(0, str(template.get("name") or ""), want)
        try:
            out = await self.client.patch(
                WORKLOADS, name_of(wl), patch, namespace_of(wl), patch_type=JSON_PATCH
            )
        except errors.StatusError as e:
            self._min_count_failed(sts, "Workload", wl, want, e)
            raise
        self._written[uid_of(out)] = (resource_version_of(out), want)
        return out

    async def _sync_pod_group_min_count(self, sts: Obj, pg: Obj, want: int | None) -> Obj:
        """Our PodGroup follows its template's minCount; a PodGroup we did not create is used as-is."""
        assert self.client is not None
        if not wu.created_by_controller(pg, sts):
            return pg
        have = wu.gang_min_count(pg.get("spec"))
        if want is None or have is None or not self._needs_min_count(pg, have, want):
            return pg
        try:
            out = await self.client.patch(
                PODGROUPS,
                name_of(pg),
                wu.pod_group_min_count_patch(want),
                namespace_of(pg),
                patch_type=MERGE_PATCH,
            )
        except errors.StatusError as e:
            self._min_count_failed(sts, "PodGroup", pg, want, e)
            raise
        self._written[uid_of(out)] = (resource_version_of(out), want)
        return out

    # ------------------------------------------------------------------ events & metrics
    def _event(self, sts: Obj, etype: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(sts, etype, reason, message)

    def _warn(self, sts: Obj, reason: str, message: str) -> None:
        log.info("statefulset %s: %s: %s", _set_ref(sts), reason, message)
        self._event(sts, WARNING, reason, message)

    def _count_error(self) -> None:
        if self.metrics is not None:
            self.metrics.creation_errors.inc()

    def _creation_failed(self, sts: Obj, kind: str, name: str, err: BaseException) -> None:
        self._count_error()
        what = f"{kind} {name}" if name else kind
        self._warn(
            sts,
            wu.WORKLOAD_CREATION_FAILED,
            f"Failed to create {what} for StatefulSet {_set_ref(sts)}: {_message(err)}",
        )

    def _min_count_failed(self, sts: Obj, kind: str, obj: Obj, want: int, err: BaseException) -> None:
        self._warn(
            sts,
            wu.FAILED_MIN_COUNT_SYNC,
            f"Failed to set minCount of {kind} {name_of(obj)} to {want} for StatefulSet {_set_ref(sts)}: "
            f"{_message(err)}; pods are not created or deleted until it succeeds",
        )

    def _ambiguous_pod_groups(self, sts: Obj, wl: Obj, groups: list[Obj]) -> None:
        self._warn(
            sts,
            wu.AMBIGUOUS_POD_GROUP,
            f"found {len(groups)} PodGroups referencing Workload {namespace_of(wl)}/{name_of(wl)}, "
            "falling back to default scheduling",
        )

    # ------------------------------------------------------------------ informer handlers
    def _enqueue(self, key: str) -> None:
        if self.controller is not None:
            self.controller.enqueue(key)

    def _on_workload(self, wl: Obj) -> None:
        """A Workload concerns the set its controllerRef names, or the children of that parent."""
        assert self.controller is not None
        ref = (wl.get("spec") or {}).get("controllerRef") or {}
        ns = namespace_of(wl)
        if ref.get("apiGroup") == wu.STATEFULSET_GROUP and ref.get("kind") == wu.STATEFULSET_KIND:
            self._enqueue(f"{ns}/{ref.get('name', '')}")
            return
        for key in wu.workload_controller_index(wl):
            for sts in self.controller.sets.by_index(wu.STATEFULSET_BY_PARENT, key):
                self._enqueue(key_of(sts))

    def _on_workload_update(self, old: Obj, new: Obj) -> None:
        if resource_version_of(old) != resource_version_of(new):
            self._on_workload(new)

    def _on_workload_delete(self, wl: Obj) -> None:
        self._written.pop(uid_of(wl), None)
        self._on_workload(wl)

    def _on_pod_group(self, pg: Obj) -> None:
        """A PodGroup concerns the set controlling it and the set(s) its Workload concerns."""
        ref = controller_ref(pg)
        if (
            ref is not None
            and ref.get("kind") == wu.STATEFULSET_KIND
            and wu.owner_group(ref) == wu.STATEFULSET_GROUP
        ):
            self._enqueue(f"{namespace_of(pg)}/{ref.get('name', '')}")
        wl_name = ((pg.get("spec") or {}).get("workloadRef") or {}).get("workloadName")
        if wl_name and self.workloads is not None:
            wl = self.workloads.get_by_name(namespace_of(pg), wl_name)
            if wl is not None:
                self._on_workload(wl)

    def _on_pod_group_update(self, old: Obj, new: Obj) -> None:
        if resource_version_of(old) != resource_version_of(new):
            self._on_pod_group(new)

    def _on_pod_group_delete(self, pg: Obj) -> None:
        self._written.pop(uid_of(pg), None)
        self._on_pod_group(pg)

    def _on_set_delete(self, sts: Obj) -> None:
        self._forget(sts)
        self.resolved.forget(uid_of(sts))
        self._desired.pop(uid_of(sts), None)
        self._eligible_since.pop(uid_of(sts), None)
        self._workload_made.discard(uid_of(sts))
        self._spec_changed.pop(uid_of(sts), None)

    # ------------------------------------------------------------------ Beta metrics
    def _on_set_seen(self, sts: Obj) -> None:
        """A set observed with ``spec.scheduling`` becomes eligible now (first observation only)."""
        if self.wants(sts) and not is_being_deleted(sts):
            self._eligible_since.setdefault(uid_of(sts), self._now())

    def _on_set_changed(self, old: Obj, new: Obj) -> None:
        """A new spec generation (a scale, a minCount change) starts an update-latency clock."""
        self._on_set_seen(new)
        gen = int((new.get("metadata") or {}).get("generation") or 0)
        if gen != int((old.get("metadata") or {}).get("generation") or 0) and self.wants(new):
            self._spec_changed[uid_of(new)] = (gen, self._now())

    def _observe_update(self, sts: Obj) -> None:
        """The PodGroup (after the Workload) now carries the minCount of the generation whose
        change this process saw: observe the update latency once for that change."""
        seen = self._spec_changed.pop(uid_of(sts), None)
        gen = int((sts.get("metadata") or {}).get("generation") or 0)
        if self.beta_metrics is not None and seen is not None and seen[0] == gen:
            self.beta_metrics.update_duration.observe(max(self._now() - seen[1], 0.0))

    def _observe_creation(self, sts: Obj) -> None:
        """Observe the creation latency once the PodGroup exists, if this process also created
        the Workload (after a restart between the two, eligibility would date from the restart)."""
        since = self._eligible_since.pop(uid_of(sts), None)
        made_workload = uid_of(sts) in self._workload_made
        self._workload_made.discard(uid_of(sts))
        if self.beta_metrics is not None and since is not None and made_workload:
            self.beta_metrics.creation_duration.observe(max(self._now() - since, 0.0))

    def _track_workload(self, wl: Obj) -> None:
        assert self.beta_metrics is not None
        managed = ((wl.get("metadata") or {}).get("annotations") or {}).get(
            wu.MANAGED_BY_ANNOTATION
        ) == wu.MANAGED_BY_VALUE
        ref = controller_ref(wl)
        owned = managed and ref is not None and ref.get("kind") == wu.STATEFULSET_KIND
        self.beta_metrics.track(uid_of(wl), beta.resolved_policy(wl) if owned else None)

    def _untrack_workload(self, wl: Obj) -> None:
        assert self.beta_metrics is not None
        self.beta_metrics.track(uid_of(wl), None)


# ---------------------------------------------------------------------------------- factory
def new_scheduling_hook(ctx: ComponentContext) -> WorkloadSchedulingHook:
    """Called by :mod:`controllers.manager` for every StatefulSet controller it builds.

    The hook gets the controller's own gate view (so a skew test can turn the feature off for
    the controller alone), whether discovery lists Workloads and PodGroups, and the shared
    metrics registry. ``ctx`` is the StatefulSet controller's context.
    """
    return WorkloadSchedulingHook(
        ctx.gates,
        api_available=ctx.is_served(WORKLOADS) and ctx.is_served(PODGROUPS),
        metrics=workload_metrics(ctx.metrics_registry),
        beta_metrics=beta.beta_metrics(ctx.metrics_registry)
        if ctx.gates.enabled(STATEFULSET_WORKLOAD_BETA_METRICS)
        else None,
    )
