"""KEP-5547: the Job's mapping onto the workloadbuilder, shared by Job admission and the Job controller.

Upstream builds the same ``WorkloadItem`` in the API server (semantic validation with
``DisableDeclarativeValidation``) and in ``job_scheduling_manager.go`` (``BuildWorkload``), so
what admission accepted is exactly what the controller compiles. This module is that single
construction for gangplane (upstream-facts §6):

* template name ``<job>-pgt-0``; default policy Basic;
* a resolved gang without ``minCount`` gets ``spec.parallelism`` (``defaultMinCountForJob``),
  clamped to 1 so a Job suspended with parallelism 0 still compiles a valid PodGroup;
* Workload ``<job>-<hash(uid)>``, controller ownerReference to the Job, Basic and Gang allowed,
  both disruption modes allowed.

Unlike the StatefulSet integration, a user may set ``gang.minCount`` (at most ``parallelism``)
and change it later; the Job's pod template ``priorityClassName`` is copied into the template so
the PodGroup's priority matches its pods (decisions.md).
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.api.types import as_int as _int
from apiserver.meta import new_controller_ref
from apiserver.workloadbuilder.integration import (
    SCHEDULING_PATH,
    leaf_workload_item,
    owned_build_options,
    scheduling_of,
)
from apiserver.workloadbuilder.integration import spec_of as _spec
from apiserver.workloadbuilder.types import (
    BuildOptions,
    DisruptionModeOption,
    SchedulingConfig,
    SchedulingConfigFunc,
    SchedulingPolicyOption,
    WorkloadItem,
)
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, FeatureGate

JOB_API_VERSION = "batch/v1"
JOB_KIND = "Job"


def parallelism_of(job: Obj) -> int:
    """``ptr.Deref(spec.parallelism, 1)``."""
    p = _int(_spec(job).get("parallelism"))
    return 1 if p is None else p


def pod_group_template_name(job_name: str) -> str:
    """``podGroupTemplateName(job)``: ``<job>-pgt-0`` (1.37; 1.36 used ``<job>-worker-0``)."""
    return f"{job_name}-pgt-0"


def default_min_count_for_job(parallelism: int) -> SchedulingConfigFunc:
    """``defaultMinCountForJob``: a resolved gang with no minCount gets ``max(parallelism, 1)``."""

    def callback(cfg: SchedulingConfig) -> None:
        gang = cfg.policy.gang if cfg.policy is not None else None
        if gang is not None and gang.min_count is None:
            gang.min_count = max(parallelism, 1)

    return callback


def job_workload_item(job: Obj, gates: FeatureGate) -> WorkloadItem:
    """The single leaf WorkloadItem of a Job (never written back to the Job spec)."""
    meta = job.get("metadata") or {}
    template = _spec(job).get("template")
    return leaf_workload_item(
        pod_group_template_name(str(meta.get("name") or "")),
        SCHEDULING_PATH,
        scheduling_of(job),
        template.get("spec") if isinstance(template, dict) else None,
        include_resource_claims=gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS),
        min_count_default=default_min_count_for_job(parallelism_of(job)),
    )


def job_controller_ref(job: Obj) -> Obj:
    """``metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))``."""
    return new_controller_ref(job, JOB_API_VERSION, JOB_KIND)


ALLOWED_POLICIES = (SchedulingPolicyOption.BASIC, SchedulingPolicyOption.GANG)
ALLOWED_DISRUPTION_MODES = (DisruptionModeOption.SINGLE, DisruptionModeOption.ALL)


def job_build_options(job: Obj) -> BuildOptions:
    """Workload ``<job>-<hash(uid)>`` in the Job's namespace, owned by the Job."""
    return owned_build_options(job, job_controller_ref(job), ALLOWED_POLICIES, ALLOWED_DISRUPTION_MODES)


def validation_options() -> BuildOptions:
    """What admission passes to ``Builder.validate``: allow-lists only, DV already ran."""
    return BuildOptions(
        allowed_policies=ALLOWED_POLICIES,
        allowed_disruption_modes=ALLOWED_DISRUPTION_MODES,
        disable_declarative_validation=True,
    )
