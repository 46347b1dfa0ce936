"""The gate registry and its parsing. See the package docstring."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ALPHA = "ALPHA"
BETA = "BETA"
GA = ""  # component-base reports GA as an empty stage label
DEPRECATED = "DEPRECATED"

WORKLOAD_WITH_STATEFULSET = "WorkloadWithStatefulSet"
WORKLOAD_WITH_JOB = "WorkloadWithJob"
GENERIC_WORKLOAD = "GenericWorkload"
DRA_WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling"
COMPOSITE_POD_GROUP = "CompositePodGroup"
POD_GROUP_PREEMPTION_POLICY = "PodGroupPreemptionPolicy"
SCHEDULER_PRE_ENQUEUE_POD_STATUS = "SchedulerPreEnqueuePodStatus"

# gangplane's own gates for the open questions of KEP-6277's Beta (docs/kep-6277-beta.md) and
# the KEP-6413 proposal: none of them exists upstream. They register as ALPHA so that
# ``AllAlpha=true`` turns them on as kube's AllAlpha does, and carry a ``proposal`` label that
# ``--help`` and the README show instead of an upstream stage.
STATEFULSET_WORKLOAD_USER_MIN_COUNT = "StatefulSetWorkloadUserMinCount"
STATEFULSET_WORKLOAD_PARTITION = "StatefulSetWorkloadPartition"
STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE = "StatefulSetWorkloadGangRollingUpdate"
STATEFULSET_WORKLOAD_CLAIM_RELEASE = "StatefulSetWorkloadClaimRelease"
STATEFULSET_WORKLOAD_STATUS_CONDITION = "StatefulSetWorkloadStatusCondition"
STATEFULSET_WORKLOAD_BETA_METRICS = "StatefulSetWorkloadBetaMetrics"
POD_GROUP_RUNTIME_SATISFACTION = "PodGroupRuntimeSatisfaction"
POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY = "PodGroupReplacementsScheduleFreely"

#: the ``proposal`` label of the gangplane gates above
KEP_6277_BETA_PROPOSAL = "gangplane, KEP-6277 Beta proposal"
KEP_6413_PROPOSAL = "gangplane, KEP-6413 proposal"


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value that names an unknown gate, a bad value, or a locked gate."""


@dataclass(frozen=True)
class FeatureSpec:
    """A gate's registration: its default, stage and whether it is locked to that default."""

    default: bool
    stage: str
    lock_to_default: bool = False
    description: str = ""
    #: set for a gangplane-only gate: what ``--help`` and the README show as its stage
    proposal: str = ""

    @property
    def display_stage(self) -> str:
        """The stage ``--help`` prints: the proposal of a gangplane gate, else kube's stage name."""
        return self.proposal or self.stage or "GA"

    @property
    def stage_label(self) -> str:
        """The ``stage`` label of ``kubernetes_feature_enabled`` (``ALPHA``, ``BETA``, ``""`` for GA)."""
        return self.stage


# gangplane exists to run these: its defaults turn the KEP-6277 stack on (decisions.md), while the
# reported stages are upstream's 1.37 stages.
KNOWN_FEATURES: dict[str, FeatureSpec] = {
    WORKLOAD_WITH_STATEFULSET: FeatureSpec(
        True,
        ALPHA,
        description="KEP-6277: StatefulSet spec.scheduling compiled into a Workload and a PodGroup",
    ),
    WORKLOAD_WITH_JOB: FeatureSpec(
        False,
        ALPHA,
        description="KEP-5547: Job spec.scheduling compiled into a Workload and a PodGroup (needs GenericWorkload)",
    ),
    GENERIC_WORKLOAD: FeatureSpec(
        True,
        BETA,
        description="Workload/PodGroup APIs, pod spec.schedulingGroup, gang scheduling, workload-aware preemption",
    ),
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: FeatureSpec(
        True, ALPHA, description="KEP-5732: PodGroup schedulingConstraints.topology"
    ),
    DRA_WORKLOAD_RESOURCE_CLAIMS: FeatureSpec(
        True, BETA, description="KEP-5729: ResourceClaims shared by a PodGroup"
    ),
    COMPOSITE_POD_GROUP: FeatureSpec(
        True, ALPHA, description="KEP-6012: CompositePodGroup and parentCompositePodGroupName"
    ),
    POD_GROUP_PREEMPTION_POLICY: FeatureSpec(
        False, ALPHA, description="preemptionPolicy on PodGroups and their templates"
    ),
    STATEFULSET_WORKLOAD_USER_MIN_COUNT: FeatureSpec(
        False,
        ALPHA,
        description="StatefulSet spec.scheduling gang.minCount set by the user (1..replicas), mutable in place",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    STATEFULSET_WORKLOAD_PARTITION: FeatureSpec(
        False,
        ALPHA,
        description="rollingUpdate.partition > 0 with spec.scheduling: one PodGroup across revisions",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE: FeatureSpec(
        False,
        ALPHA,
        description="a rolling update of a gang StatefulSet waits on, and reports, a replacement that does not fit",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    STATEFULSET_WORKLOAD_CLAIM_RELEASE: FeatureSpec(
        False,
        ALPHA,
        description="at replicas 0 a StatefulSet's PodGroup releases its shared ResourceClaims (off: keeps them)",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    STATEFULSET_WORKLOAD_STATUS_CONDITION: FeatureSpec(
        False,
        ALPHA,
        description="StatefulSet status condition PodGroupScheduled mirroring its PodGroup's scheduling conditions",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    STATEFULSET_WORKLOAD_BETA_METRICS: FeatureSpec(
        False,
        ALPHA,
        description="statefulset_workload_creation/update_duration_seconds and statefulset_workloads{policy}",
        proposal=KEP_6277_BETA_PROPOSAL,
    ),
    POD_GROUP_RUNTIME_SATISFACTION: FeatureSpec(
        False,
        ALPHA,
        description="scheduler: PodGroupSatisfied condition (scheduled members vs minCount), both directions",
        proposal=KEP_6413_PROPOSAL,
    ),
    POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY: FeatureSpec(
        False,
        ALPHA,
        description="scheduler: once a gang was satisfied, replacement members schedule one by one "
        "(off: they must reach minCount again, as 1.37)",
        proposal=KEP_6413_PROPOSAL,
    ),
    SCHEDULER_PRE_ENQUEUE_POD_STATUS: FeatureSpec(
        True,
        BETA,
        description="KEP-5501: a pod held at PreEnqueue reports NotReadyForScheduling (condition and Event)",
    ),
    "AllAlpha": FeatureSpec(False, ALPHA, description="turns on every alpha gate that is not set explicitly"),
    "AllBeta": FeatureSpec(False, BETA, description="turns on every beta gate that is not set explicitly"),
}


def parse_feature_gates(value: str) -> dict[str, bool]:
    """Parse ``A=true,B=false`` (spaces allowed) into a mapping; raise on malformed pairs or values."""
    result: dict[str, bool] = {}
    for raw in value.split(","):
        item = raw.strip()
        if not item:
            continue
        if "=" not in item:
            raise FeatureGateError(f"missing bool value for {item}")
        name, _, val = item.partition("=")
        name, val = name.strip(), val.strip()
        low = val.lower()
        if low in ("true", "t", "1"):
            result[name] = True
        elif low in ("false", "f", "0"):
            result[name] = False
        else:
            raise FeatureGateError(
                f"invalid value of {name}={val}, err: strconv.ParseBool: parsing {val!r}: invalid syntax"
            )
    return result


class FeatureGate:
    """A set of known gates with explicit overrides. Immutable after construction; derive with :meth:`with_overrides`."""

    def __init__(
        self,
        known: Mapping[str, FeatureSpec] | None = None,
        overrides: Mapping[str, bool] | None = None,
    ) -> None:
        self._known: dict[str, FeatureSpec] = dict(KNOWN_FEATURES if known is None else known)
        self._overrides: dict[str, bool] = {}
        for name, enabled in (overrides or {}).items():
            spec = self._known.get(name)
            if spec is None:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if spec.lock_to_default and enabled != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {str(enabled).lower()}, feature is locked to {str(spec.default).lower()}"
                )
            self._overrides[name] = enabled
        #: every gate's answer, decided once (the gate set never changes): components ask per
        #: request and per cycle, 35 times per gang set (all the asking: 0.4 % of gangs-1000x3's phase)
        self._enabled: dict[str, bool] = {
            name: self._decide(name, spec) for name, spec in self._known.items()
        }

    @classmethod
    def from_string(cls, value: str, known: Mapping[str, FeatureSpec] | None = None) -> FeatureGate:
        return cls(known, parse_feature_gates(value))

    def with_overrides(self, overrides: Mapping[str, bool] | str) -> FeatureGate:
        """A new view with extra overrides: a component's own gates, or a test's."""
        extra = parse_feature_gates(overrides) if isinstance(overrides, str) else dict(overrides)
        merged = {**self._overrides, **extra}
        return FeatureGate(self._known, merged)

    def enabled(self, name: str) -> bool:
        got = self._enabled.get(name)
        if got is None:
            raise FeatureGateError(f"feature {name!r} is not registered")
        return got

    def _decide(self, name: str, spec: FeatureSpec) -> bool:
        if name in self._overrides:
            return self._overrides[name]
        if spec.stage == ALPHA and self._overrides.get("AllAlpha") and name != "AllAlpha":
            return True
        if spec.stage == BETA and self._overrides.get("AllBeta") and name != "AllBeta":
            return True
        return spec.default

    def known(self) -> dict[str, FeatureSpec]:
        return dict(self._known)

    def overrides(self) -> dict[str, bool]:
        return dict(self._overrides)

    def items(self) -> Iterable[tuple[str, FeatureSpec, bool]]:
        """``(name, spec, enabled)`` sorted by name, for metrics and docs."""
        for name in sorted(self._known):
            yield name, self._known[name], self.enabled(name)

    def __repr__(self) -> str:
        return f"FeatureGate(overrides={self._overrides!r})"


def default_feature_gate() -> FeatureGate:
    return FeatureGate()
