"""scheduling.k8s.io strategies: Workload, PodGroup, CompositePodGroup (1.37 rules, upstream-facts §1)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.registry.strategies.scheduling import (
    KEP_REF_WARNING,
    CompositePodGroupStrategy,
    PodGroupStrategy,
    WorkloadStrategy,
)
from apiserver.rest.strategy import StrategyContext
from featuregates import FeatureGate

IMMUTABLE = "Invalid value: null: field is immutable"
BASIC_ALL = 'Invalid value: "": the disruptionMode `all` is not supported with the Basic scheduling policy'


def ctx(**overrides: bool) -> StrategyContext:
    return StrategyContext(gates=FeatureGate().with_overrides(overrides) if overrides else FeatureGate())


def strs(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def template(name: str = "tpl", **fields: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": 3}}, **fields}


def workload(*templates: dict[str, Any], **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "db"},
        "podGroupTemplates": list(templates) or [template()],
    }
    body.update(spec)
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "db-wl", "namespace": "ns"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def pod_group(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "workloadRef": {"workloadName": "db-wl", "templateName": "tpl"},
        "schedulingPolicy": {"gang": {"minCount": 3}},
    }
    body.update(spec)
    obj = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "db-pg", "namespace": "ns"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }
    PodGroupStrategy().default(obj)
    return obj


def create(strategy: Any, obj: dict[str, Any], c: StrategyContext | None = None) -> list[str]:
    c = c or ctx()
    strategy.default(obj)
    strategy.prepare_for_create(c, obj)
    return strs(strategy.validate(c, obj))


def update(
    strategy: Any, new: dict[str, Any], old: dict[str, Any], c: StrategyContext | None = None
) -> list[str]:
    c = c or ctx()
    strategy.default(new)
    strategy.prepare_for_update(c, new, old)
    return strs(strategy.validate_update(c, new, old))


# -- Workload ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(workload(), [], id="valid"),
        pytest.param(
            workload(
                template(
                    schedulingConstraints={"topology": [{"key": "zone"}]},
                    disruptionMode={"all": {}},
                    resourceClaims=[{"name": "c", "resourceClaimTemplateName": "t"}],
                    priorityClassName="high",
                    priority=1000,
                )
            ),
            [],
            id="valid-all-fields",
        ),
        pytest.param(workload(controllerRef=None), [], id="controller-ref-optional"),
        pytest.param(
            workload(podGroupTemplates=[]),
            [
                'spec: Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`'
            ],
            id="no-templates",
        ),
        pytest.param(
            workload(
                compositePodGroupTemplates=[
                    {"name": "c", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [template("x")]}
                ]
            ),
            [
                'spec: Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": '
                "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`"
            ],
            id="both-template-kinds",
        ),
        pytest.param(
            workload(*[template(f"t{i}") for i in range(9)]),
            ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"],
            id="too-many-templates",
        ),
        pytest.param(
            workload(template("a"), template("a")),
            [
                'spec.podGroupTemplates[1]: Duplicate value: {"name":"a","schedulingPolicy":{"gang":{"minCount":3}}}',
            ],
            id="duplicate-template-names",
        ),
        pytest.param(
            workload(template("Bad_Name")),
            [
                'spec.podGroupTemplates[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist '
                "of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character "
                "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
            id="template-name-format",
        ),
        pytest.param(
            workload({"name": "tpl", "schedulingPolicy": {"gang": {"minCount": 0}}}),
            ["spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value"],
            id="min-count-zero-is-required",
        ),
        pytest.param(
            workload({"name": "tpl", "schedulingPolicy": {"gang": {"minCount": -2}}}),
            [
                "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -2: "
                "must be greater than or equal to 1"
            ],
            id="min-count-negative",
        ),
        pytest.param(
            workload({"name": "tpl"}),
            ["spec.podGroupTemplates[0].schedulingPolicy: Required value"],
            id="policy-required",
        ),
        pytest.param(
            workload(template(schedulingPolicy={"basic": {}}, disruptionMode={"all": {}})),
            [f"spec.podGroupTemplates[0].disruptionMode: {BASIC_ALL}"],
            id="basic-with-all",
        ),
        pytest.param(
            workload(controllerRef={"apiGroup": "apps", "name": "a/b"}),
            [
                "spec.controllerRef.kind: Required value",
                "spec.controllerRef.name: Invalid value: \"a/b\": may not contain '/'",
            ],
            id="controller-ref-fields",
        ),
        pytest.param(
            workload(template(priority=1_000_000_001)),
            [
                "spec.podGroupTemplates[0].priority: Invalid value: 1000000001: must be less than or equal to 1000000000"
            ],
            id="priority-max",
        ),
        pytest.param(
            workload(template(preemptionPolicy="Never")),
            ["spec.podGroupTemplates[0].preemptionPolicy: Forbidden"],
            id="preemption-policy-gate-off-by-default",
        ),
    ],
)
def test_workload_create(obj: dict[str, Any], want: list[str]) -> None:
    assert create(WorkloadStrategy(), obj) == want


def composite(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"basic": {}}, **fields}


def test_workload_composite_tree_rules() -> None:
    # Depth counts every level, leaves included (the scheduler walks at most 4 groups up a leaf).
    level3 = composite("l3", podGroupTemplates=[template("leaf")])
    level2 = composite("l2", compositePodGroupTemplates=[level3])
    root = composite("l1", compositePodGroupTemplates=[level2])
    obj = workload(podGroupTemplates=None, compositePodGroupTemplates=[root])
    assert create(WorkloadStrategy(), copy.deepcopy(obj)) == []

    level3["compositePodGroupTemplates"] = [composite("l4", podGroupTemplates=[template("deep")])]
    obj = workload(podGroupTemplates=None, compositePodGroupTemplates=[root])
    assert create(WorkloadStrategy(), obj) == [
        "spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].compositePodGroupTemplates[0]"
        ".compositePodGroupTemplates[0].podGroupTemplates: Forbidden: "
        "the Workload template tree may be at most 4 levels deep"
    ]

    dup = workload(
        podGroupTemplates=None,
        compositePodGroupTemplates=[
            composite(
                "root",
                podGroupTemplates=[template("x")],
                compositePodGroupTemplates=[composite("inner", podGroupTemplates=[template("x")])],
            )
        ],
    )
    assert create(WorkloadStrategy(), dup) == [
        'spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates[0].name: Duplicate value: "x"'
    ]

    childless = workload(podGroupTemplates=None, compositePodGroupTemplates=[composite("root")])
    assert create(WorkloadStrategy(), childless) == [
        'spec.compositePodGroupTemplates[0]: Invalid value: "": '
        "must specify at least one of: `podGroupTemplates`, `compositePodGroupTemplates`"
    ]
    gated = workload(
        podGroupTemplates=None, compositePodGroupTemplates=[composite("c", podGroupTemplates=[template("x")])]
    )
    assert create(WorkloadStrategy(), gated, ctx(CompositePodGroup=False)) == [
        "spec.compositePodGroupTemplates: Forbidden"
    ]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(workload(), workload(), [], id="no-change"),
        pytest.param(
            workload(template(schedulingPolicy={"gang": {"minCount": 3}})),
            workload(template(schedulingPolicy={"gang": {"minCount": 5}})),
            [],
            id="min-count-mutable",
        ),
        pytest.param(
            workload(),
            workload(controllerRef={"apiGroup": "apps", "kind": "StatefulSet", "name": "other"}),
            [f"spec.controllerRef: {IMMUTABLE}"],
            id="controller-ref-immutable",
        ),
        pytest.param(
            workload(controllerRef=None),
            workload(),
            [f"spec.controllerRef: {IMMUTABLE}"],
            id="controller-ref-cannot-be-set",
        ),
        pytest.param(
            workload(template("a")),
            workload(template("a"), template("b")),
            ["spec.podGroupTemplates[1]: Forbidden: item may not be added"],
            id="no-add-template",
        ),
        pytest.param(
            workload(template("a"), template("b")),
            workload(template("a")),
            ["spec.podGroupTemplates: Forbidden: item may not be removed"],
            id="no-remove-template",
        ),
        pytest.param(
            workload(template(schedulingPolicy={"basic": {}})),
            workload(template(schedulingPolicy={"gang": {"minCount": 2}})),
            [
                f"spec.podGroupTemplates[0].schedulingPolicy.basic: {IMMUTABLE}",
                "spec.podGroupTemplates[0].schedulingPolicy.gang: Invalid value: null: field cannot be set once created",
            ],
            id="basic-to-gang",
        ),
        pytest.param(
            workload(template()),
            workload(template(schedulingPolicy={"basic": {}})),
            [
                f"spec.podGroupTemplates[0].schedulingPolicy.basic: {IMMUTABLE}",
                "spec.podGroupTemplates[0].schedulingPolicy.gang: Invalid value: null: field cannot be cleared once set",
            ],
            id="gang-to-basic",
        ),
        pytest.param(
            workload(template()),
            workload(template(schedulingConstraints={"topology": [{"key": "zone"}]})),
            [f"spec.podGroupTemplates[0].schedulingConstraints: {IMMUTABLE}"],
            id="constraints-immutable",
        ),
        pytest.param(
            workload(template(resourceClaims=[{"name": "c", "resourceClaimName": "x"}])),
            workload(template(resourceClaims=[{"name": "c", "resourceClaimName": "y"}])),
            [f"spec.podGroupTemplates[0].resourceClaims: {IMMUTABLE}"],
            id="claims-immutable",
        ),
        pytest.param(
            workload(template()),
            workload(template(disruptionMode={"single": {}}, priorityClassName="high", priority=5)),
            [
                f"spec.podGroupTemplates[0].disruptionMode: {IMMUTABLE}",
                f"spec.podGroupTemplates[0].priorityClassName: {IMMUTABLE}",
                f"spec.podGroupTemplates[0].priority: {IMMUTABLE}",
            ],
            id="mode-and-priority-immutable",
        ),
    ],
)
def test_workload_update(old: dict[str, Any], new: dict[str, Any], want: list[str]) -> None:
    assert update(WorkloadStrategy(), new, old) == want


def test_workload_topology_gate_forbids_new_constraints_but_keeps_stored_ones() -> None:
    c = ctx(TopologyAwareWorkloadScheduling=False)
    with_tc = workload(template(schedulingConstraints={"topology": [{"key": "zone"}]}))
    assert create(WorkloadStrategy(), copy.deepcopy(with_tc), c) == [
        "spec.podGroupTemplates[0].schedulingConstraints: Forbidden"
    ]
    assert update(WorkloadStrategy(), copy.deepcopy(with_tc), copy.deepcopy(with_tc), c) == []


def test_workload_dra_gate_drops_claims_unless_stored() -> None:
    c = ctx(DRAWorkloadResourceClaims=False)
    claims = [{"name": "c", "resourceClaimName": "x"}]
    obj = workload(template(resourceClaims=claims))
    assert create(WorkloadStrategy(), obj, c) == []
    assert "resourceClaims" not in obj["spec"]["podGroupTemplates"][0]
    old = workload(template(resourceClaims=claims))
    new = workload(template(resourceClaims=claims))
    assert update(WorkloadStrategy(), new, old, c) == []
    assert new["spec"]["podGroupTemplates"][0]["resourceClaims"] == claims


# -- PodGroup ---------------------------------------------------------------------------------


def test_pod_group_defaults_disruption_mode_single_only_when_unset() -> None:
    s = PodGroupStrategy()
    obj: dict[str, Any] = {"spec": {"schedulingPolicy": {"basic": {}}}}
    s.default(obj)
    assert obj["spec"]["disruptionMode"] == {"single": {}}
    obj = {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"all": {}}}}
    s.default(obj)
    assert obj["spec"]["disruptionMode"] == {"all": {}}
    wl = workload()
    WorkloadStrategy().default(wl)
    assert "disruptionMode" not in wl["spec"]["podGroupTemplates"][0]


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(pod_group(), [], id="valid"),
        pytest.param(pod_group(workloadRef=None), [], id="standalone"),
        pytest.param(
            pod_group(schedulingPolicy=None), ["spec.schedulingPolicy: Required value"], id="policy-required"
        ),
        pytest.param(
            pod_group(schedulingPolicy={"gang": {}}),
            ["spec.schedulingPolicy.gang.minCount: Required value"],
            id="min-count-required",
        ),
        pytest.param(
            pod_group(schedulingPolicy={"basic": {}}, disruptionMode={"all": {}}),
            [f"spec.disruptionMode: {BASIC_ALL}"],
            id="basic-with-all",
        ),
        pytest.param(
            pod_group(workloadRef={"workloadName": "Bad.", "templateName": ""}),
            [
                'spec.workloadRef.workloadName: Invalid value: "Bad.": a lowercase RFC 1123 subdomain must consist of '
                "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.workloadRef.templateName: Required value",
            ],
            id="workload-ref-fields",
        ),
        pytest.param(
            pod_group(resourceClaims=[{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)]),
            ["spec.resourceClaims: Too many: 5: must have at most 4 items"],
            id="too-many-claims",
        ),
        pytest.param(
            pod_group(
                resourceClaims=[{"name": "c", "resourceClaimName": "x", "resourceClaimTemplateName": "t"}]
            ),
            [
                'spec.resourceClaims[0]: Invalid value: "{resourceClaimName, resourceClaimTemplateName}": '
                "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`"
            ],
            id="claim-both-sources",
        ),
        pytest.param(
            pod_group(schedulingConstraints={"topology": [{"key": "a"}, {"key": "b"}]}),
            ["spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item"],
            id="topology-max-one",
        ),
        pytest.param(
            pod_group(parentCompositePodGroupName="parent", workloadRef=None),
            ["spec.workloadRef: Required value: required when `parentCompositePodGroupName` is set"],
            id="parent-needs-workload-ref",
        ),
    ],
)
def test_pod_group_create(obj: dict[str, Any], want: list[str]) -> None:
    assert create(PodGroupStrategy(), obj) == want


@pytest.mark.parametrize(
    ("gates", "spec", "want"),
    [
        (
            {"CompositePodGroup": False},
            {"parentCompositePodGroupName": "p"},
            ["spec.parentCompositePodGroupName: Forbidden"],
        ),
        (
            {"TopologyAwareWorkloadScheduling": False},
            {"schedulingConstraints": {"topology": [{"key": "zone"}]}},
            ["spec.schedulingConstraints: Forbidden"],
        ),
        ({}, {"preemptionPolicy": "Never"}, ["spec.preemptionPolicy: Forbidden"]),
        (
            {"PodGroupPreemptionPolicy": True},
            {"preemptionPolicy": "Sometimes"},
            [
                'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'
            ],
        ),
        ({"PodGroupPreemptionPolicy": True}, {"preemptionPolicy": "Never"}, []),
    ],
)
def test_pod_group_gated_fields(gates: dict[str, bool], spec: dict[str, Any], want: list[str]) -> None:
    assert create(PodGroupStrategy(), pod_group(**spec), ctx(**gates)) == want


def test_pod_group_dra_gate_drops_claims_unless_stored() -> None:
    c = ctx(DRAWorkloadResourceClaims=False)
    claims = [{"name": "c", "resourceClaimName": "x"}]
    obj = pod_group(resourceClaims=claims)
    assert create(PodGroupStrategy(), obj, c) == []
    assert "resourceClaims" not in obj["spec"]
    new, old = pod_group(resourceClaims=claims), pod_group(resourceClaims=claims)
    assert update(PodGroupStrategy(), new, old, c) == []
    assert new["spec"]["resourceClaims"] == claims


@pytest.mark.parametrize(
    ("change", "want"),
    [
        pytest.param({"schedulingPolicy": {"gang": {"minCount": 7}}}, [], id="min-count-mutable"),
        pytest.param(
            {"workloadRef": {"workloadName": "other", "templateName": "tpl"}},
            [f"spec.workloadRef: {IMMUTABLE}"],
            id="workload-ref",
        ),
        pytest.param(
            {"schedulingConstraints": {"topology": [{"key": "zone"}]}},
            [f"spec.schedulingConstraints: {IMMUTABLE}"],
            id="constraints",
        ),
        pytest.param(
            {"resourceClaims": [{"name": "c", "resourceClaimName": "x"}]},
            [f"spec.resourceClaims: {IMMUTABLE}"],
            id="claims",
        ),
        pytest.param(
            {"disruptionMode": {"all": {}}}, [f"spec.disruptionMode: {IMMUTABLE}"], id="disruption-mode"
        ),
        pytest.param(
            {"priorityClassName": "high"}, [f"spec.priorityClassName: {IMMUTABLE}"], id="priority-class"
        ),
        pytest.param({"priority": 10}, [f"spec.priority: {IMMUTABLE}"], id="priority"),
        pytest.param(
            {"schedulingPolicy": {"basic": {}}},
            [
                f"spec.schedulingPolicy.basic: {IMMUTABLE}",
                "spec.schedulingPolicy.gang: Invalid value: null: field cannot be cleared once set",
            ],
            id="gang-to-basic",
        ),
    ],
)
def test_pod_group_update(change: dict[str, Any], want: list[str]) -> None:
    old = pod_group()
    new = copy.deepcopy(old)
    new["spec"].update(change)
    assert update(PodGroupStrategy(), new, old) == want


def test_kep_spelling_is_converted_with_a_warning() -> None:
    c = ctx()
    obj = pod_group(
        workloadRef=None, podGroupTemplateRef={"workloadName": "db-wl", "podGroupTemplateName": "tpl"}
    )
    assert create(PodGroupStrategy(), obj, c) == []
    assert obj["spec"]["workloadRef"] == {"workloadName": "db-wl", "templateName": "tpl"}
    assert "podGroupTemplateRef" not in obj["spec"]
    assert c.warnings == [KEP_REF_WARNING]
    assert KEP_REF_WARNING == (
        "spec.podGroupTemplateRef is the KEP-6277 spelling; stored as spec.workloadRef (scheduling.k8s.io/v1beta1)"
    )

    # Same on update: a client that always speaks the KEP spelling can still update.
    c2 = ctx()
    new = pod_group(
        workloadRef=None, podGroupTemplateRef={"workloadName": "db-wl", "podGroupTemplateName": "tpl"}
    )
    new["spec"]["schedulingPolicy"] = {"gang": {"minCount": 4}}
    assert update(PodGroupStrategy(), new, pod_group(), c2) == []
    assert new["spec"]["workloadRef"] == {"workloadName": "db-wl", "templateName": "tpl"}
    assert c2.warnings == [KEP_REF_WARNING]


def test_conflicting_spellings_are_rejected() -> None:
    c = ctx()
    obj = pod_group(podGroupTemplateRef={"workloadName": "other", "podGroupTemplateName": "tpl"})
    assert create(PodGroupStrategy(), obj, c) == [
        'spec.podGroupTemplateRef: Invalid value: {"workloadName":"other","podGroupTemplateName":"tpl"}: '
        "conflicts with spec.workloadRef; set only spec.workloadRef"
    ]
    assert c.warnings == []


def test_pod_group_main_resource_keeps_status_and_status_keeps_spec() -> None:
    s = PodGroupStrategy()
    old = pod_group()
    old["status"] = {
        "conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled"}]
    }
    new = copy.deepcopy(old)
    new["status"] = {}
    s.prepare_for_update(ctx(), new, old)
    assert new["status"] == old["status"]

    status_write = copy.deepcopy(old)
    status_write["spec"]["schedulingPolicy"] = {"gang": {"minCount": 9}}
    status_write["status"] = {"conditions": []}
    s.prepare_for_status_update(ctx(), status_write, old)
    assert status_write["spec"] == old["spec"]
    assert status_write["status"] == {"conditions": []}


@pytest.mark.parametrize(
    ("conditions", "want"),
    [
        ([{"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable"}], []),
        ([{"status": "True"}], ["status.conditions[0].type: Required value"]),
        ([{"type": "X"}], ["status.conditions[0].status: Required value"]),
        (
            [{"type": "X", "status": "Maybe"}],
            [
                'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"'
            ],
        ),
        (
            [{"type": "X", "status": "True"}, {"type": "X", "status": "False"}],
            ['status.conditions[1]: Duplicate value: {"type":"X","status":"False"}'],
        ),
    ],
)
def test_status_conditions(conditions: list[dict[str, Any]], want: list[str]) -> None:
    old = pod_group()
    new = copy.deepcopy(old)
    new["status"] = {"conditions": conditions}
    assert strs(PodGroupStrategy().validate_status_update(ctx(), new, old)) == want
    cpg_old = composite_pod_group()
    cpg_new = copy.deepcopy(cpg_old)
    cpg_new["status"] = {"conditions": conditions}
    assert strs(CompositePodGroupStrategy().validate_status_update(ctx(), cpg_new, cpg_old)) == want


def test_pod_group_resource_claim_statuses() -> None:
    old = pod_group()
    new = copy.deepcopy(old)
    new["status"] = {
        "resourceClaimStatuses": [{"name": "c", "resourceClaimName": "db-pg-c-abcde"}, {"name": ""}]
    }
    assert strs(PodGroupStrategy().validate_status_update(ctx(), new, old)) == [
        "status.resourceClaimStatuses[1].name: Required value"
    ]


# -- CompositePodGroup ------------------------------------------------------------------------


def composite_pod_group(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "workloadRef": {"workloadName": "db-wl", "templateName": "root"},
        "schedulingPolicy": {"gang": {"minGroupCount": 2}},
    }
    body.update(spec)
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "cpg", "namespace": "ns"},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


@pytest.mark.parametrize(
    ("obj", "want"),
    [
        pytest.param(composite_pod_group(), [], id="valid"),
        pytest.param(
            composite_pod_group(workloadRef=None),
            ["spec.workloadRef: Required value"],
            id="workload-ref-required",
        ),
        pytest.param(
            composite_pod_group(schedulingPolicy={"gang": {}}),
            ["spec.schedulingPolicy.gang.minGroupCount: Required value"],
            id="min-group-count-required",
        ),
        pytest.param(
            composite_pod_group(schedulingPolicy={"basic": {}}, disruptionMode={"all": {}}),
            [f"spec.disruptionMode: {BASIC_ALL}"],
            id="basic-with-all",
        ),
    ],
)
def test_composite_pod_group_create(obj: dict[str, Any], want: list[str]) -> None:
    assert create(CompositePodGroupStrategy(), obj) == want
    assert "disruptionMode" not in obj["spec"] or obj["spec"]["disruptionMode"] == {"all": {}}


def test_composite_pod_group_update() -> None:
    old = composite_pod_group(parentCompositePodGroupName="top")
    grow = copy.deepcopy(old)
    grow["spec"]["schedulingPolicy"] = {"gang": {"minGroupCount": 3}}
    assert update(CompositePodGroupStrategy(), grow, old) == []
    moved = copy.deepcopy(old)
    moved["spec"]["parentCompositePodGroupName"] = "elsewhere"
    assert update(CompositePodGroupStrategy(), moved, old) == [
        f"spec.parentCompositePodGroupName: {IMMUTABLE}"
    ]
