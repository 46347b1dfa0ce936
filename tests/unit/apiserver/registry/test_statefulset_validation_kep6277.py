"""KEP-6277 Test Plan, unit tests, ``pkg/apis/apps/validation``: one test per bullet.

Each test quotes its bullet and asserts the rendered error strings the KEP quotes. Helpers for
the gate-dependent behaviour and the controller-shared WorkloadItem follow at the end.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.registry.strategies.statefulset_scheduling import (
    drop_disabled_scheduling_fields,
    scheduling_warnings,
    statefulset_build_options,
    statefulset_workload_item,
    validate_scheduling,
    validate_scheduling_update,
)
from apiserver.rest.strategy import StrategyContext
from apiserver.workloadbuilder import new_builder
from featuregates import FeatureGate

GANG_NEEDS_PARALLEL = (
    "spec.scheduling.schedulingPolicy.gang: Forbidden: gang scheduling requires podManagementPolicy: Parallel; "
    "OrderedReady creates pods sequentially, which can never satisfy a gang"
)
PARTITION = (
    "spec.updateStrategy.rollingUpdate.partition: Forbidden: partitioned rollouts are not supported for "
    "StatefulSets with spec.scheduling set"
)
MIN_COUNT = (
    "spec.scheduling.schedulingPolicy.gang.minCount: Forbidden: gang minCount is derived from spec.replicas "
    "and may not be set (a user-configurable minCount is planned for Beta)"
)
BASIC_ALL = (
    'spec.scheduling.disruptionMode: Invalid value: "": '
    "the disruptionMode `all` is not supported with the Basic scheduling policy"
)
IMMUTABLE = "spec.scheduling: Invalid value: null: field is immutable"

UNSET = object()


def ctx(**overrides: bool) -> StrategyContext:
    return StrategyContext(gates=FeatureGate().with_overrides(overrides) if overrides else FeatureGate())


def sts(
    scheduling: Any = UNSET,
    *,
    policy: str | None = "Parallel",
    replicas: int | None = 3,
    partition: int | None = None,
    pod_claims: list[dict[str, Any]] | None = None,
    priority_class: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
    }
    if scheduling is not UNSET:
        spec["scheduling"] = scheduling
    if policy is not None:
        spec["podManagementPolicy"] = policy
    if replicas is not None:
        spec["replicas"] = replicas
    if partition is not None:
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}
    if pod_claims is not None:
        spec["template"]["spec"]["resourceClaims"] = pod_claims
    if priority_class is not None:
        spec["template"]["spec"]["priorityClassName"] = priority_class
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns", "uid": "3f0b4c2e-1111-2222-3333-444455556666"},
        "spec": spec,
    }


def create_errors(obj: dict[str, Any], c: StrategyContext | None = None) -> list[str]:
    return [str(e) for e in validate_scheduling(c or ctx(), obj)]


def update_errors(new: dict[str, Any], old: dict[str, Any], c: StrategyContext | None = None) -> list[str]:
    return [str(e) for e in validate_scheduling_update(c or ctx(), new, old)]


GANG = {"schedulingPolicy": {"gang": {}}}
BASIC = {"schedulingPolicy": {"basic": {}}}
TOPOLOGY = {"topology": [{"key": "topology.kubernetes.io/rack"}]}


def claim(name: str, **source: str) -> dict[str, Any]:
    return {"name": name, **source}


# -- the Test Plan bullets --------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy", ["OrderedReady", None], ids=["explicit-ordered-ready", "unset-defaults-ordered-ready"]
)
def test_reject_orderedready_plus_gang(policy: str | None) -> None:
    """ "Reject OrderedReady + scheduling.schedulingPolicy.gang combination"."""
    assert create_errors(sts(GANG, policy=policy)) == [GANG_NEEDS_PARALLEL]


def test_reject_user_set_gang_mincount() -> None:
    """ "Reject user-set gang.minCount (Alpha only — must be nil, derived from replicas)"."""
    assert create_errors(sts({"schedulingPolicy": {"gang": {"minCount": 3}}})) == [MIN_COUNT]
    # With OrderedReady both cross-field rules apply.
    assert create_errors(sts({"schedulingPolicy": {"gang": {"minCount": 3}}}, policy="OrderedReady")) == [
        GANG_NEEDS_PARALLEL,
        MIN_COUNT,
    ]


def test_reject_partition_with_scheduling_on_create_and_update() -> None:
    """ "Reject rollingUpdate.partition > 0 together with spec.scheduling, on create and on update"."""
    assert create_errors(sts(BASIC, partition=2)) == [PARTITION]
    assert create_errors(sts(BASIC, partition=0)) == []
    assert create_errors(sts(partition=2)) == []  # no spec.scheduling: partitions are fine
    old = sts(BASIC)
    assert update_errors(sts(BASIC, partition=1), old) == [PARTITION]
    assert update_errors(sts(BASIC, partition=0), old) == []


@pytest.mark.parametrize(
    "scheduling",
    [
        {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}},
        {"disruptionMode": {"all": {}}},
    ],
    ids=["explicit-basic", "omitted-policy-resolves-to-basic"],
)
def test_reject_disruption_mode_all_with_basic(scheduling: dict[str, Any]) -> None:
    """ "Reject disruptionMode: all with the basic policy (delegated to workloadbuilder)"."""
    assert create_errors(sts(scheduling)) == [BASIC_ALL]


@pytest.mark.parametrize(
    "scheduling",
    [
        GANG,
        {**GANG, "disruptionMode": {"all": {}}},
        {**GANG, "disruptionMode": {"single": {}}, "schedulingConstraints": TOPOLOGY},
        {**GANG, "resourceClaims": [claim("shared", resourceClaimTemplateName="accel")]},
    ],
    ids=["gang", "gang-all", "gang-single-topology", "gang-claims"],
)
def test_accept_parallel_gang(scheduling: dict[str, Any]) -> None:
    """ "Accept valid Parallel + scheduling.schedulingPolicy.gang combinations"."""
    assert create_errors(sts(scheduling, policy="Parallel")) == []


@pytest.mark.parametrize("policy", ["OrderedReady", None])
def test_accept_orderedready_basic_with_topology_and_claims(policy: str | None) -> None:
    """ "Accept OrderedReady + scheduling.schedulingPolicy.basic, including with topology constraints
    and shared ResourceClaims"."""
    scheduling = {
        **BASIC,
        "schedulingConstraints": TOPOLOGY,
        "disruptionMode": {"single": {}},
        "resourceClaims": [claim("shared", resourceClaimName="pre-made")],
    }
    assert create_errors(sts(scheduling, policy=policy)) == []


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_accept_empty_scheduling(policy: str) -> None:
    """ "Accept scheduling: {}"."""
    assert create_errors(sts({}, policy=policy)) == []
    assert update_errors(sts({}, policy=policy, replicas=5), sts({}, policy=policy)) == []


@pytest.mark.parametrize(
    ("old_scheduling", "new_scheduling"),
    [
        pytest.param(UNSET, BASIC, id="add-after-create"),
        pytest.param(UNSET, {}, id="add-empty-after-create"),
        pytest.param(BASIC, UNSET, id="unset"),
        pytest.param({}, UNSET, id="unset-empty"),
        pytest.param(BASIC, GANG, id="basic-to-gang"),
        pytest.param(GANG, BASIC, id="gang-to-basic"),
        pytest.param({}, GANG, id="empty-to-gang"),
        pytest.param(
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="y")]},
            id="resource-claims-edit",
        ),
        pytest.param(
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            {
                **GANG,
                "resourceClaims": [claim("a", resourceClaimName="x"), claim("b", resourceClaimName="y")],
            },
            id="resource-claims-add",
        ),
        pytest.param(
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]}, GANG, id="resource-claims-remove"
        ),
        pytest.param({**GANG, "schedulingConstraints": TOPOLOGY}, GANG, id="constraints-remove"),
        pytest.param(GANG, {**GANG, "disruptionMode": {"all": {}}}, id="disruption-mode-add"),
    ],
)
def test_reject_any_scheduling_mutation(old_scheduling: Any, new_scheduling: Any) -> None:
    """ "Reject spec.scheduling mutations of any kind (whole-field immutability), including
    add-after-create, unset, basic↔gang switch, and resourceClaims list edits"."""
    errs = update_errors(sts(new_scheduling), sts(old_scheduling))
    assert errs == [IMMUTABLE]


def test_accept_valid_resource_claims() -> None:
    """ "Accept valid spec.scheduling.resourceClaims entries (one of name/template set)"."""
    claims = [
        claim("a", resourceClaimName="claim-a"),
        claim("b", resourceClaimTemplateName="template-b"),
        claim("c", resourceClaimName="claim.c.example"),
        claim("d", resourceClaimTemplateName="template-d"),
    ]
    assert create_errors(sts({**GANG, "resourceClaims": claims})) == []


@pytest.mark.parametrize(
    ("entry", "want"),
    [
        pytest.param(
            claim("shared", resourceClaimName="c", resourceClaimTemplateName="t"),
            'spec.scheduling.resourceClaims[0]: Invalid value: "{resourceClaimName, resourceClaimTemplateName}": '
            "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`",
            id="both",
        ),
        pytest.param(
            claim("shared"),
            'spec.scheduling.resourceClaims[0]: Invalid value: "": '
            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            id="neither",
        ),
    ],
)
def test_reject_claim_with_both_or_neither_source(entry: dict[str, Any], want: str) -> None:
    """ "Reject spec.scheduling.resourceClaims entries with both or neither source set"."""
    assert create_errors(sts({**GANG, "resourceClaims": [entry]})) == [want]


def test_reject_more_than_four_claims() -> None:
    """ "Reject more than 4 entries in spec.scheduling.resourceClaims"."""
    claims = [claim(f"c{i}", resourceClaimName=f"claim-{i}") for i in range(5)]
    assert create_errors(sts({**GANG, "resourceClaims": claims})) == [
        "spec.scheduling.resourceClaims: Too many: 5: must have at most 4 items"
    ]


# -- around the bullets: structural details, gates, warnings, the shared WorkloadItem ---------


@pytest.mark.parametrize(
    ("scheduling", "want"),
    [
        pytest.param(
            {"schedulingPolicy": {"basic": {}, "gang": {}}},
            [
                'spec.scheduling.schedulingPolicy: Invalid value: "{basic, gang}": '
                "must specify exactly one of: `basic`, `gang`",
                GANG_NEEDS_PARALLEL,
            ],
            id="both-policies",
        ),
        pytest.param(
            {"schedulingConstraints": {"topology": [{"key": "bad key!"}]}},
            [
                'spec.scheduling.schedulingConstraints.topology[0].key: Invalid value: "bad key!": name part must '
                "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="topology-key-format",
        ),
        pytest.param(
            {"resourceClaims": [claim("a", resourceClaimName="x"), claim("a", resourceClaimName="y")]},
            [
                'spec.scheduling.resourceClaims[1]: Duplicate value: {"name":"a","resourceClaimName":"y"}',
            ],
            id="duplicate-claim-names",
        ),
    ],
)
def test_structural_errors(scheduling: dict[str, Any], want: list[str]) -> None:
    """Layer 1 (structural) errors come first, then the cross-field rules."""
    assert create_errors(sts(scheduling, policy="OrderedReady")) == want


def test_unset_scheduling_is_not_validated() -> None:
    assert create_errors(sts(policy="OrderedReady", partition=3)) == []
    assert update_errors(sts(), sts()) == []


@pytest.mark.parametrize(
    ("gates", "old", "new", "want"),
    [
        pytest.param({"WorkloadWithStatefulSet": False}, None, GANG, UNSET, id="gate-off-create-clears"),
        pytest.param({"WorkloadWithStatefulSet": False}, GANG, GANG, GANG, id="gate-off-update-keeps-stored"),
        pytest.param({"WorkloadWithStatefulSet": False}, UNSET, GANG, UNSET, id="gate-off-update-cannot-add"),
        pytest.param(
            {"DRAWorkloadResourceClaims": False},
            None,
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            GANG,
            id="dra-off-clears-claims",
        ),
        pytest.param(
            {"DRAWorkloadResourceClaims": False},
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            {**GANG, "resourceClaims": [claim("a", resourceClaimName="x")]},
            id="dra-off-keeps-stored-claims",
        ),
        pytest.param(
            {"TopologyAwareWorkloadScheduling": False},
            None,
            {**GANG, "schedulingConstraints": TOPOLOGY},
            GANG,
            id="tas-off-clears-constraints",
        ),
        pytest.param(
            {"TopologyAwareWorkloadScheduling": False},
            {**GANG, "schedulingConstraints": TOPOLOGY},
            {**GANG, "schedulingConstraints": TOPOLOGY},
            {**GANG, "schedulingConstraints": TOPOLOGY},
            id="tas-off-keeps-stored-constraints",
        ),
        pytest.param(
            {},
            None,
            {**GANG, "schedulingConstraints": TOPOLOGY},
            {**GANG, "schedulingConstraints": TOPOLOGY},
            id="all-on",
        ),
    ],
)
def test_drop_disabled_scheduling_fields(gates: dict[str, bool], old: Any, new: Any, want: Any) -> None:
    new_obj = sts(copy.deepcopy(new))
    old_obj = None if old is None else sts(copy.deepcopy(old))
    drop_disabled_scheduling_fields(ctx(**gates), new_obj, old_obj)
    assert new_obj == sts(want)


def test_gate_off_update_of_stored_object_still_validates_immutability() -> None:
    c = ctx(WorkloadWithStatefulSet=False)
    old, new = sts(GANG), sts(BASIC)
    drop_disabled_scheduling_fields(c, new, old)
    assert update_errors(new, old, c) == [IMMUTABLE]


def test_warns_for_claims_the_pod_template_does_not_match() -> None:
    scheduling = {
        **GANG,
        "resourceClaims": [
            claim("matched", resourceClaimTemplateName="t"),
            claim("other-source", resourceClaimTemplateName="t"),
            claim("missing", resourceClaimName="c"),
        ],
    }
    pod_claims = [
        claim("matched", resourceClaimTemplateName="t"),
        claim("other-source", resourceClaimName="t"),
    ]
    warnings = scheduling_warnings(ctx(), sts(scheduling, pod_claims=pod_claims))
    assert warnings == [
        'spec.scheduling.resourceClaims[1]: spec.template.spec.resourceClaims has no entry with name "other-source" '
        "and the same resourceClaimName/resourceClaimTemplateName; pods will not use this PodGroup-level shared claim",
        'spec.scheduling.resourceClaims[2]: spec.template.spec.resourceClaims has no entry with name "missing" '
        "and the same resourceClaimName/resourceClaimTemplateName; pods will not use this PodGroup-level shared claim",
    ]
    assert scheduling_warnings(ctx(), sts(GANG)) == []
    # A warning never turns into a rejection.
    assert create_errors(sts(scheduling, pod_claims=pod_claims)) == []


@pytest.mark.parametrize(("replicas", "want"), [(5, 5), (0, 1), (None, 1)])
def test_controller_item_derives_min_count_from_replicas(replicas: int | None, want: int) -> None:
    obj = sts(GANG, replicas=replicas)
    builder = new_builder(statefulset_workload_item(obj, FeatureGate()), statefulset_build_options(obj))
    wl = builder.build_workload()
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": want}}
    assert obj["spec"]["scheduling"] == GANG  # never written back


def test_controller_item_compiles_the_kep_workload() -> None:
    scheduling = {
        **GANG,
        "resourceClaims": [claim("shared-device", resourceClaimTemplateName="my-device-template")],
    }
    obj = sts(scheduling, priority_class="high")
    builder = new_builder(statefulset_workload_item(obj, FeatureGate()), statefulset_build_options(obj))
    wl = builder.build_workload()
    owner = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "db",
        "uid": "3f0b4c2e-1111-2222-3333-444455556666",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert wl == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "db-85d846c49b", "namespace": "ns", "ownerReferences": [owner]},
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "db"},
            "podGroupTemplates": [
                {
                    "name": "db",
                    "schedulingPolicy": {"gang": {"minCount": 3}},
                    "priorityClassName": "high",
                    "resourceClaims": [
                        {"name": "shared-device", "resourceClaimTemplateName": "my-device-template"}
                    ],
                }
            ],
        },
    }
    off = statefulset_workload_item(obj, FeatureGate().with_overrides({"DRAWorkloadResourceClaims": False}))
    tmpl = new_builder(off, statefulset_build_options(obj)).build_workload()["spec"]["podGroupTemplates"][0]
    assert "resourceClaims" not in tmpl


def test_empty_scheduling_compiles_to_basic_with_nothing_else() -> None:
    obj = sts({}, policy="OrderedReady")
    wl = new_builder(
        statefulset_workload_item(obj, FeatureGate()), statefulset_build_options(obj)
    ).build_workload()
    assert wl["spec"]["podGroupTemplates"] == [{"name": "db", "schedulingPolicy": {"basic": {}}}]
