"""KEP-5547: the Job controller's Workload / PodGroup lifecycle (gate ``WorkloadWithJob``).

The 1.37 Job integration as upstream-facts §6 describes ``job_scheduling_manager.go``:

* **management mode**, decided before any work:

  - *none*: the pod template already names a PodGroup (``spec.schedulingGroup``, bring your own),
    or the Job has a controller owner (other than a CronJob) without
    ``scheduling.k8s.io/group-template-name`` — pods are created from the template as they are;
  - *PodGroup only*: a controller owner **and** that annotation — the parent owns the Workload
    (found through ``spec.controllerRef`` = the parent); the Job instantiates only its PodGroup
    from the named template, with no ownerReference to the parent's Workload, and waits (no
    event) while the parent's Workload or template is not there;
  - *both*: everything else, CronJob-created Jobs included (each gets its own objects). A Job
    without ``spec.scheduling`` compiles to the Basic policy.

* **discovery by reference**: Workloads by ``spec.controllerRef`` (``batch``/``Job``/name; a
  user's Workload naming the Job is used, never mutated), PodGroups by
  ``spec.workloadRef.workloadName`` and controlled by the Job;
* **creation only for a new Job** (no pods, no ``status.startTime``, nothing succeeded or failed),
  Workload → PodGroup → pods, each on the synchronous create response; AlreadyExists rediscovers
  through a live list; any error blocks pod creation for this sync;
* **names**: Workload ``<job>-<hash(uid)>``, template ``<job>-pgt-0``, PodGroup
  ``<workload>-<template>-<hash>``; the PodGroup → Workload ownerReference has
  ``blockOwnerDeletion`` unset (so Workload deletion never waits on PodGroups);
* **gang minCount** follows ``spec.parallelism`` (or the user's ``gang.minCount``) on objects the
  Job controls: Workload first, then PodGroup;
* **events** on the Job: ``WorkloadCreated``, ``PodGroupCreated``, ``FailedWorkloadCompilation``,
  ``FailedWorkloadCreate`` (upstream's strings), ``UnsupportedWorkloadStructure`` (1.36's).

Nothing is ever deleted here: ownerReferences and the garbage collector clean up.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING
from apiserver.client.interface import GVR, PODGROUPS, WORKLOADS
from apiserver.meta import (
    annotations_of,
    controller_ref,
    is_being_deleted,
    is_controlled_by,
    name_of,
    namespace_of,
    uid_of,
)
from apiserver.workloadbuilder import (
    BuildError,
    BuildOptions,
    new_builder,
    new_builder_from_existing_workload,
    pod_group_name,
)
from apiserver.workloadbuilder.job import job_build_options, job_controller_ref, job_workload_item
from controllers import workloadrefs as wr
from controllers.base import Requeue
from controllers.job import utils as ju
from controllers.job.hooks import PodDecorator
from controllers.workloadhook import WorkloadHookBase
from featuregates import GENERIC_WORKLOAD, WORKLOAD_WITH_JOB, FeatureGate

if TYPE_CHECKING:
    from apiserver.client.context import ComponentContext
    from controllers.job.controller import JobController

log = logging.getLogger("gangplane.job.workload")

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
JOB_GROUP, JOB_KIND = "batch", "Job"
CRONJOB_KIND = "CronJob"

WORKLOAD_CREATED = "WorkloadCreated"
POD_GROUP_CREATED = "PodGroupCreated"
FAILED_WORKLOAD_COMPILATION = "FailedWorkloadCompilation"
FAILED_WORKLOAD_CREATE = "FailedWorkloadCreate"
UNSUPPORTED_WORKLOAD_STRUCTURE = "UnsupportedWorkloadStructure"

NONE, POD_GROUP_ONLY, BOTH = "none", "podGroupOnly", "both"


def _message(err: BaseException) -> str:
    return err.message if isinstance(err, errors.StatusError) else str(err)


def _ref(job: Obj) -> str:
    return f"{namespace_of(job)}/{name_of(job)}"


def job_key(job: Obj) -> str:
    return wr.reference_key(namespace_of(job), JOB_GROUP, JOB_KIND, name_of(job))


def management_mode(job: Obj) -> str:
    """manageNone / managePodGroupOnly / manageBoth (module docstring)."""
    pod_spec = (ju.spec_of(job).get("template") or {}).get("spec") or {}
    if pod_spec.get("schedulingGroup") is not None:
        return NONE
    owner = controller_ref(job)
    if owner is None or (owner.get("kind") == CRONJOB_KIND and wr.owner_group(owner) == JOB_GROUP):
        return BOTH
    return POD_GROUP_ONLY if annotations_of(job).get(wr.GROUP_TEMPLATE_NAME_ANNOTATION) else NONE


def is_new_job(job: Obj, pods: list[Obj]) -> bool:
    """Objects are created only before the Job ever ran (upstream's "new Job" rule)."""
    status = ju.status_of(job)
    return (
        not pods and not status.get("startTime") and not status.get("succeeded") and not status.get("failed")
    )


def _left_over(obj: Obj, job: Obj) -> bool:
    """Controlled by a Job of another UID (a predecessor of the same name awaiting GC)."""
    ref = controller_ref(obj)
    return (
        ref is not None
        and ref.get("kind") == JOB_KIND
        and wr.owner_group(ref) == JOB_GROUP
        and ref.get("uid") != uid_of(job)
    )


def _usable(obj: Obj, job: Obj) -> bool:
    return not is_being_deleted(obj) and not _left_over(obj, job)


class WorkloadSchedulingHook(WorkloadHookBase):
    """The :class:`~controllers.job.hooks.JobSchedulingHook` for KEP-5547 (module docstring); its
    informers, recently created objects and rediscovery are :class:`WorkloadHookBase`'s, as the
    StatefulSet's hook's are."""

    def __init__(self, gates: FeatureGate, *, api_available: bool = True) -> None:
        super().__init__()
        self.enabled = gates.enabled(WORKLOAD_WITH_JOB) and gates.enabled(GENERIC_WORKLOAD) and api_available
        self.gates = gates
        self.controller: JobController | None = None

    # ------------------------------------------------------------------ hook protocol
    def attach(self, controller: JobController) -> None:
        self.controller = controller
        if not self.enabled:
            return
        self._watch_workloads_and_pod_groups(
            controller.informers,
            (self._on_workload, lambda old, new: self._on_workload(new), self._on_workload),
            (self._on_pod_group, lambda old, new: self._on_pod_group(new), self._on_pod_group),
        )
        controller.jobs.add_event_handler(None, None, self._forget)

    def wants(self, job: Obj) -> bool:
        return self.enabled and management_mode(job) != NONE

    async def prepare(self, job: Obj, pods: list[Obj], ctx: Any) -> PodDecorator | None:
        may_create = is_new_job(job, pods)
        if management_mode(job) == POD_GROUP_ONLY:
            pg = await self._pod_group_only(job, may_create)
        else:
            pg = await self._both(job, may_create)
        if pg is None:
            return None
        return functools.partial(wr.decorate_pod, pg=pg)

    # ------------------------------------------------------------------ manageBoth
    async def _both(self, job: Obj, may_create: bool) -> Obj | None:
        found = self._workloads(job, job_key(job))
        if len(found) > 1:
            log.warning(
                "found %d Workloads referencing Job %s, falling back to default scheduling",
                len(found),
                _ref(job),
            )
            return None
        compiled: Obj | None = None
        if found:
            wl = found[0]
        elif may_create:
            compiled = self._compile(job)
            wl = await self._create_workload(job, compiled)
        else:
            return None
        why = wr.unsupported_structure(wl)
        if why is not None:
            self._warn(job, UNSUPPORTED_WORKLOAD_STRUCTURE, f"{why}, falling back to normal scheduling")
            return None
        template = wr.pod_group_templates(wl)[0]
        if is_controlled_by(wl, job):
            wl = await self._sync_workload_min_count(job, wl, template, compiled)
            template = wr.pod_group_templates(wl)[0]
        template_name = str(template.get("name") or "")
        groups = self._pod_groups(job, wl, template_name)
        if len(groups) > 1:
            log.warning(
                "found %d PodGroups referencing Workload %s/%s, falling back to default scheduling",
                len(groups),
                namespace_of(wl),
                name_of(wl),
            )
            return None
        if not groups:
            if not may_create:
                return None
            return await self._create_pod_group(job, wl, template_name, link_workload=True)
        return await self._sync_pod_group_min_count(groups[0], wr.gang_min_count(template))

    # ------------------------------------------------------------------ managePodGroupOnly
    async def _pod_group_only(self, job: Obj, may_create: bool) -> Obj | None:
        parent = controller_ref(job) or {}
        template_name = annotations_of(job).get(wr.GROUP_TEMPLATE_NAME_ANNOTATION) or ""
        key = wr.reference_key(
            namespace_of(job),
            wr.owner_group(parent),
            str(parent.get("kind") or ""),
            str(parent.get("name") or ""),
        )
        found = self._workloads(job, key)
        template = wr.find_leaf_template(found[0], template_name) if len(found) == 1 else None
        if template is None:
            log.info(
                "job %s: parent Workload or template %q not found yet; retrying later",
                _ref(job),
                template_name,
            )
            raise Requeue(f"parent Workload of Job {_ref(job)} not found")
        wl = found[0]
        groups = self._pod_groups(job, wl, template_name)
        if len(groups) > 1:
            return None
        if not groups:
            if not may_create:
                return None
            return await self._create_pod_group(job, wl, template_name, link_workload=False)
        return await self._sync_pod_group_min_count(groups[0], wr.gang_min_count(template))

    # ------------------------------------------------------------------ discovery
    def _workloads(self, job: Obj, key: str) -> list[Obj]:
        assert self.workloads is not None
        cached = self.workloads.by_index(wr.WORKLOAD_BY_CONTROLLER, key)
        extra = [o for o in self._recent(job, "Workload", cached) if key in wr.workload_controller_index(o)]
        seen: dict[str, Obj] = {uid_of(o): o for o in [*cached, *extra] if _usable(o, job)}
        return sorted(seen.values(), key=name_of)

    def _pod_groups(self, job: Obj, wl: Obj, template_name: str) -> list[Obj]:
        assert self.pod_groups is not None
        cached = self.pod_groups.by_index(wr.POD_GROUP_BY_WORKLOAD, f"{namespace_of(wl)}/{name_of(wl)}")
        extra = self._recent(job, "PodGroup", cached)
        seen = {uid_of(o): o for o in [*cached, *extra] if self._pod_group_matches(o, job, wl, template_name)}
        return sorted(seen.values(), key=name_of)

    @staticmethod
    def _pod_group_matches(pg: Obj, job: Obj, wl: Obj, template_name: str) -> bool:
        ref = (pg.get("spec") or {}).get("workloadRef") or {}
        return (
            namespace_of(pg) == namespace_of(wl)
            and ref.get("workloadName") == name_of(wl)
            and ref.get("templateName") == template_name
            and is_controlled_by(pg, job)
            and not is_being_deleted(pg)
        )

    async def _rediscover(self, job: Obj, gvr: GVR, match: Any) -> list[Obj]:
        assert self.controller is not None
        return await self._rediscover_live(self.controller.client, job, gvr, match, lambda o: _usable(o, job))

    # ------------------------------------------------------------------ creation
    def _compile(self, job: Obj) -> Obj:
        try:
            return new_builder(job_workload_item(job, self.gates), job_build_options(job)).build_workload()
        except BuildError as e:
            self._warn(
                job, FAILED_WORKLOAD_COMPILATION, f"Failed to compile Workload for Job {_ref(job)}: {e}"
            )
            raise

    async def _create_workload(self, job: Obj, compiled: Obj) -> Obj:
        assert self.controller is not None
        try:
            wl = await self.controller.client.create(WORKLOADS, compiled, namespace_of(job), read_only=True)
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                again = await self._rediscover(
                    job, WORKLOADS, lambda o: job_key(job) in wr.workload_controller_index(o)
                )
                if len(again) == 1:
                    self._remember(job, again[0])
                    return again[0]
            self._warn(
                job, FAILED_WORKLOAD_CREATE, f"Failed to create Workload for Job {_ref(job)}: {_message(e)}"
            )
            raise
        self._remember(job, wl)
        self._event(job, NORMAL, WORKLOAD_CREATED, f"Created Workload {name_of(wl)} for Job {_ref(job)}")
        return wl

    async def _create_pod_group(self, job: Obj, wl: Obj, template_name: str, *, link_workload: bool) -> Obj:
        assert self.controller is not None
        builder = new_builder_from_existing_workload(wl, BuildOptions(owner=job_controller_ref(job)))
        name = pod_group_name(name_of(wl), template_name)
        try:
            pg = builder.new_pod_group(name, template_name)
        except BuildError as e:
            self._warn(
                job, FAILED_WORKLOAD_COMPILATION, f"Failed to compile PodGroup for Job {_ref(job)}: {e}"
            )
            raise
        if link_workload:
            pg["metadata"].setdefault("ownerReferences", []).append(
                wr.workload_owner_ref(wl, block_owner_deletion=False)
            )
        try:
            created = await self.controller.client.create(PODGROUPS, pg, namespace_of(job), read_only=True)
        except errors.StatusError as e:
            if errors.is_already_exists(e):
                again = await self._rediscover(
                    job, PODGROUPS, lambda o: self._pod_group_matches(o, job, wl, template_name)
                )
                if len(again) == 1:
                    self._remember(job, again[0])
                    return again[0]
            self._warn(
                job,
                FAILED_WORKLOAD_CREATE,
                f"Failed to create PodGroup {name} for Job {_ref(job)}: {_message(e)}",
            )
            raise
        self._remember(job, created)
        self._event(
            job, NORMAL, POD_GROUP_CREATED, f"Created PodGroup {name_of(created)} for Job {_ref(job)}"
        )
        return created

    # ------------------------------------------------------------------ minCount
    async def _sync_workload_min_count(self, job: Obj, wl: Obj, template: Obj, compiled: Obj | None) -> Obj:
        """``syncGangMinCount``: recompile from the current Job; a gang's minCount follows it."""
        have = wr.gang_min_count(template)
        if have is None:
            return wl
        want = wr.gang_min_count(wr.pod_group_templates(compiled or self._compile(job))[0])
        if want is None or want == have:
            return wl
        assert self.controller is not None
        patch = wr.workload_min_count_patch(0, str(template.get("name") or ""), want)
        return await self.controller.client.patch(
            WORKLOADS, name_of(wl), patch, namespace_of(wl), patch_type=JSON_PATCH
        )

    async def _sync_pod_group_min_count(self, pg: Obj, want: int | None) -> Obj:
        have = wr.gang_min_count(pg.get("spec"))
        if want is None or have is None or have == want:
            return pg
        assert self.controller is not None
        return await self.controller.client.patch(
            PODGROUPS,
            name_of(pg),
            wr.pod_group_min_count_patch(want),
            namespace_of(pg),
            patch_type=MERGE_PATCH,
        )

    # ------------------------------------------------------------------ events and handlers
    def _event(self, job: Obj, etype: str, reason: str, message: str) -> None:
        if self.controller is not None:
            self.controller.recorder.event(job, etype, reason, message)

    def _warn(self, job: Obj, reason: str, message: str) -> None:
        log.info("job %s: %s: %s", _ref(job), reason, message)
        self._event(job, WARNING, reason, message)

    def _enqueue_owner(self, obj: Obj) -> None:
        if self.controller is None:
            return
        ref = controller_ref(obj)
        if ref is not None and ref.get("kind") == JOB_KIND and wr.owner_group(ref) == JOB_GROUP:
            self.controller.enqueue(f"{namespace_of(obj)}/{ref.get('name', '')}")

    def _on_workload(self, wl: Obj) -> None:
        self._enqueue_owner(wl)
        ref = (wl.get("spec") or {}).get("controllerRef") or {}
        if ref.get("apiGroup") == JOB_GROUP and ref.get("kind") == JOB_KIND and self.controller is not None:
            self.controller.enqueue(f"{namespace_of(wl)}/{ref.get('name', '')}")

    def _on_pod_group(self, pg: Obj) -> None:
        self._enqueue_owner(pg)


def new_scheduling_hook(ctx: ComponentContext) -> WorkloadSchedulingHook:
    """Called by :mod:`controllers.manager` for every Job controller it builds.

    ``ctx`` is the Job controller's context: its own gate view (a skew test can turn the feature
    off for the controller alone) and whether discovery lists Workloads and PodGroups.
    """
    return WorkloadSchedulingHook(
        ctx.gates, api_available=ctx.is_served(WORKLOADS) and ctx.is_served(PODGROUPS)
    )
