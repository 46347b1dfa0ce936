"""workloadbuilder: compile a controller's scheduling intent into Workload / PodGroup objects.

The Python counterpart of ``k8s.io/component-helpers/scheduling/schedulingv1/workloadbuilder``
(KEP-6089), shared by API admission (``Builder.validate``) and the StatefulSet controller
(``Builder.build_workload`` / ``Builder.new_pod_group``) so both see the same resolved config.
Pure: no I/O, plain wire dicts in and out.
"""

from apiserver.workloadbuilder.builder import (
    BASIC_WITH_ALL_MESSAGE,
    Builder,
    new_builder,
    new_builder_from_existing_workload,
)
from apiserver.workloadbuilder.naming import pod_group_name, workload_name
from apiserver.workloadbuilder.types import (
    BasicSchedulingPolicy,
    BlockInput,
    BuildError,
    BuildOptions,
    ConstraintsInput,
    DisruptionMode,
    DisruptionModeInput,
    DisruptionModeOption,
    GangSchedulingPolicy,
    PolicyInput,
    ResourceClaim,
    ResourceClaimsInput,
    SchedulingConfig,
    SchedulingConfigFunc,
    SchedulingConstraints,
    SchedulingPolicy,
    SchedulingPolicyOption,
    TopologyConstraint,
    ValidationInput,
    WorkloadInput,
    WorkloadItem,
    input_from_scheduling,
)

__all__ = [
    "BASIC_WITH_ALL_MESSAGE",
    "BasicSchedulingPolicy",
    "BlockInput",
    "BuildError",
    "BuildOptions",
    "Builder",
    "ConstraintsInput",
    "DisruptionMode",
    "DisruptionModeInput",
    "DisruptionModeOption",
    "GangSchedulingPolicy",
    "PolicyInput",
    "ResourceClaim",
    "ResourceClaimsInput",
    "SchedulingConfig",
    "SchedulingConfigFunc",
    "SchedulingConstraints",
    "SchedulingPolicy",
    "SchedulingPolicyOption",
    "TopologyConstraint",
    "ValidationInput",
    "WorkloadInput",
    "WorkloadItem",
    "input_from_scheduling",
    "new_builder",
    "new_builder_from_existing_workload",
    "pod_group_name",
    "workload_name",
]
