"""What the Job (KEP-5547) and StatefulSet (KEP-6277) mappings onto the workloadbuilder share.

Both integrations compile their object to one leaf :class:`WorkloadItem` and build one Workload
owned by it, and agree on everything but the template name, the gang ``minCount`` default and
the allow-lists: default policy Basic, the pod template's ``priorityClassName`` copied so the
PodGroup's priority matches its pods (decisions.md), ``spec.scheduling`` mapped by
:func:`input_from_scheduling` (shared claims only while ``DRAWorkloadResourceClaims`` is on), and
a Workload ``<owner>-<hash(uid)>`` in the owner's namespace with the owner's controller reference.
They are written once here so admission and both controllers cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apiserver.api.types import Obj
from apiserver.field import Path
from apiserver.workloadbuilder.naming import workload_name
from apiserver.workloadbuilder.types import (
    BasicSchedulingPolicy,
    BuildOptions,
    DisruptionModeOption,
    SchedulingConfig,
    SchedulingConfigFunc,
    SchedulingPolicy,
    SchedulingPolicyOption,
    WorkloadItem,
    input_from_scheduling,
)

#: where both kinds embed the scheduling intent
SCHEDULING_PATH = Path("spec").child("scheduling")


def spec_of(obj: Obj | None) -> Obj:
    """``spec`` as stored, ``{}`` when absent or not an object."""
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def scheduling_of(obj: Obj | None) -> Any:
    """``spec.scheduling`` as stored: ``None`` when unset; ``{}`` is set (the minimal opt-in)."""
    return spec_of(obj).get("scheduling")


def leaf_workload_item(
    name: str,
    path: Path,
    scheduling: Any,
    pod_spec: Any,
    *,
    include_resource_claims: bool,
    min_count_default: SchedulingConfigFunc,
) -> WorkloadItem:
    """The single leaf item for template ``name``, from a stored ``spec.scheduling`` at ``path``.

    ``scheduling`` and ``pod_spec`` are taken as stored: anything but an object counts as unset;
    ``min_count_default`` is the integration's gang ``minCount`` callback.
    """
    priority_class = pod_spec.get("priorityClassName") if isinstance(pod_spec, dict) else None
    return WorkloadItem(
        name=name,
        path=path,
        default_config=SchedulingConfig(
            policy=SchedulingPolicy(basic=BasicSchedulingPolicy()),
            priority_class_name=priority_class if isinstance(priority_class, str) else "",
        ),
        input=input_from_scheduling(
            scheduling if isinstance(scheduling, dict) else None,
            include_resource_claims=include_resource_claims,
        ),
        callbacks=[min_count_default],
    )


def owned_build_options(
    owner: Obj,
    owner_ref: Obj,
    allowed_policies: Sequence[SchedulingPolicyOption],
    allowed_disruption_modes: Sequence[DisruptionModeOption],
) -> BuildOptions:
    """Workload ``<owner>-<hash(uid)>`` in ``owner``'s namespace, controlled through ``owner_ref``."""
    meta = owner.get("metadata") or {}
    return BuildOptions(
        name=workload_name(str(meta.get("name") or ""), str(meta.get("uid") or "")),
        namespace=str(meta.get("namespace") or ""),
        owner=owner_ref,
        allowed_policies=allowed_policies,
        allowed_disruption_modes=allowed_disruption_modes,
    )
