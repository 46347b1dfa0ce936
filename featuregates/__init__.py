"""Feature gates: the one process-wide registry, handed to each component as its own view.

Kubernetes syntax (``--feature-gates=A=true,B=false``), stages, defaults and lock-to-default
follow ``k8s.io/component-base/featuregate``. A component receives a :class:`FeatureGate`
(possibly with its own overrides) so tests can run the API server and the scheduler with
different gates, the way version skew looks in a real cluster.
"""

from featuregates.gates import (
    ALPHA,
    BETA,
    COMPOSITE_POD_GROUP,
    DEPRECATED,
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    GA,
    GENERIC_WORKLOAD,
    KEP_6277_BETA_PROPOSAL,
    KEP_6413_PROPOSAL,
    POD_GROUP_PREEMPTION_POLICY,
    POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY,
    POD_GROUP_RUNTIME_SATISFACTION,
    SCHEDULER_PRE_ENQUEUE_POD_STATUS,
    STATEFULSET_WORKLOAD_BETA_METRICS,
    STATEFULSET_WORKLOAD_CLAIM_RELEASE,
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE,
    STATEFULSET_WORKLOAD_PARTITION,
    STATEFULSET_WORKLOAD_STATUS_CONDITION,
    STATEFULSET_WORKLOAD_USER_MIN_COUNT,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    WORKLOAD_WITH_JOB,
    WORKLOAD_WITH_STATEFULSET,
    FeatureGate,
    FeatureGateError,
    FeatureSpec,
    default_feature_gate,
    parse_feature_gates,
)

__all__ = [
    "ALPHA",
    "BETA",
    "COMPOSITE_POD_GROUP",
    "DEPRECATED",
    "DRA_WORKLOAD_RESOURCE_CLAIMS",
    "GA",
    "GENERIC_WORKLOAD",
    "KEP_6277_BETA_PROPOSAL",
    "KEP_6413_PROPOSAL",
    "POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY",
    "POD_GROUP_RUNTIME_SATISFACTION",
    "STATEFULSET_WORKLOAD_BETA_METRICS",
    "STATEFULSET_WORKLOAD_CLAIM_RELEASE",
    "STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE",
    "STATEFULSET_WORKLOAD_PARTITION",
    "STATEFULSET_WORKLOAD_STATUS_CONDITION",
    "STATEFULSET_WORKLOAD_USER_MIN_COUNT",
    "POD_GROUP_PREEMPTION_POLICY",
    "SCHEDULER_PRE_ENQUEUE_POD_STATUS",
    "TOPOLOGY_AWARE_WORKLOAD_SCHEDULING",
    "WORKLOAD_WITH_JOB",
    "WORKLOAD_WITH_STATEFULSET",
    "FeatureGate",
    "FeatureGateError",
    "FeatureSpec",
    "default_feature_gate",
    "parse_feature_gates",
]
