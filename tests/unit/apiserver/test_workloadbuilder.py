"""workloadbuilder: resolution, compile, PodGroup materialisation and validation (upstream-facts §4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver.field import Path
from apiserver.workloadbuilder import (
    BasicSchedulingPolicy,
    BlockInput,
    BuildError,
    BuildOptions,
    DisruptionModeOption,
    GangSchedulingPolicy,
    ResourceClaim,
    SchedulingConfig,
    SchedulingPolicy,
    SchedulingPolicyOption,
    ValidationInput,
    WorkloadInput,
    WorkloadItem,
    input_from_scheduling,
    new_builder,
    new_builder_from_existing_workload,
)
from apiserver.workloadbuilder._resolve import resolve_scheduling_config

SCHED = Path("spec").child("scheduling")
OWNER = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "name": "db",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
ALL_POLICIES = (SchedulingPolicyOption.BASIC, SchedulingPolicyOption.GANG)
ALL_MODES = (DisruptionModeOption.SINGLE, DisruptionModeOption.ALL)


def basic_default(**kw: Any) -> SchedulingConfig:
    return SchedulingConfig(policy=SchedulingPolicy(basic=BasicSchedulingPolicy()), **kw)


def set_min_count(n: int):  # noqa: ANN201
    def cb(cfg: SchedulingConfig) -> None:
        if cfg.policy is not None and cfg.policy.gang is not None:
            cfg.policy.gang.min_count = n

    return cb


def item(
    scheduling: dict[str, Any] | None = None, *, name: str = "db", callbacks=None, default=None
) -> WorkloadItem:  # noqa: ANN001
    return WorkloadItem(
        name=name,
        path=SCHED,
        default_config=basic_default() if default is None else default,
        input=input_from_scheduling(scheduling),
        callbacks=list(callbacks or []),
    )


def opts(**kw: Any) -> BuildOptions:
    base: dict[str, Any] = {
        "name": "db-wl",
        "namespace": "ns",
        "owner": OWNER,
        "allowed_policies": ALL_POLICIES,
        "allowed_disruption_modes": ALL_MODES,
    }
    base.update(kw)
    return BuildOptions(**base)


def strs(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


# -- resolution -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheduling", "callbacks", "want"),
    [
        pytest.param(None, [], {"basic": {}}, id="nil-input-uses-default-basic"),
        pytest.param({}, [], {"basic": {}}, id="empty-scheduling-basic"),
        pytest.param({"schedulingPolicy": {}}, [], {"basic": {}}, id="empty-union-means-unspecified"),
        pytest.param(
            {"schedulingPolicy": {"gang": {}}},
            [set_min_count(3)],
            {"gang": {"minCount": 3}},
            id="gang-callback",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {"minCount": 2}}},
            [],
            {"gang": {"minCount": 2}},
            id="gang-user-count",
        ),
        pytest.param(
            {"schedulingPolicy": {"basic": {}}},
            [set_min_count(3)],
            {"basic": {}},
            id="callback-ignores-basic",
        ),
    ],
)
def test_resolved_policy(scheduling: Any, callbacks: list[Any], want: dict[str, Any]) -> None:
    wl = new_builder(item(scheduling, callbacks=callbacks), opts()).build_workload()
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == want


@pytest.mark.parametrize(
    ("scheduling", "absent"),
    [
        ({"schedulingConstraints": {"topology": []}}, "schedulingConstraints"),
        ({"schedulingConstraints": {}}, "schedulingConstraints"),
        ({"disruptionMode": {}}, "disruptionMode"),
        ({"resourceClaims": []}, "resourceClaims"),
        ({}, "priorityClassName"),
    ],
)
def test_empty_blocks_compile_to_nothing(scheduling: dict[str, Any], absent: str) -> None:
    tmpl = new_builder(item(scheduling), opts()).build_workload()["spec"]["podGroupTemplates"][0]
    assert absent not in tmpl


def test_no_default_config_and_no_policy_compiles_to_basic() -> None:
    it = WorkloadItem(name="x", path=SCHED)
    tmpl = new_builder(it, opts()).build_workload()["spec"]["podGroupTemplates"][0]
    assert tmpl == {"name": "x", "schedulingPolicy": {"basic": {}}}


def test_user_blocks_override_defaults_field_by_field() -> None:
    default = basic_default(
        resource_claims=[ResourceClaim(name="d", resource_claim_name="default-claim")],
        priority_class_name="high",
    )
    it = item({"disruptionMode": {"single": {}}}, default=default)
    cfg = resolve_scheduling_config(it)
    assert cfg.policy == SchedulingPolicy(basic=BasicSchedulingPolicy())
    assert cfg.disruption_mode is not None and cfg.disruption_mode.single
    assert cfg.resource_claims == [ResourceClaim(name="d", resource_claim_name="default-claim")]
    assert cfg.priority_class_name == "high"
    it2 = item({"resourceClaims": [{"name": "u", "resourceClaimTemplateName": "t"}]}, default=default)
    assert resolve_scheduling_config(it2).resource_claims == [
        ResourceClaim(name="u", resource_claim_template_name="t")
    ]


def test_callbacks_never_mutate_the_callers_input_or_default() -> None:
    scheduling = {"schedulingPolicy": {"gang": {"minCount": 2}}}
    before = copy.deepcopy(scheduling)
    default = SchedulingConfig(policy=SchedulingPolicy(gang=GangSchedulingPolicy(min_count=9)))
    it = item(scheduling, callbacks=[set_min_count(7)], default=default)
    assert resolve_scheduling_config(it).policy == SchedulingPolicy(gang=GangSchedulingPolicy(min_count=7))
    assert scheduling == before
    assert default.policy == SchedulingPolicy(gang=GangSchedulingPolicy(min_count=9))


# -- build_workload ---------------------------------------------------------------------------


def test_build_workload_full_shape() -> None:
    it = item(
        {
            "schedulingPolicy": {"gang": {}},
            "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
            "disruptionMode": {"all": {}},
            "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "accel"}],
        },
        callbacks=[set_min_count(5)],
        default=basic_default(priority_class_name="high"),
    )
    assert new_builder(it, opts()).build_workload() == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "db-wl", "namespace": "ns", "ownerReferences": [OWNER]},
        "spec": {
            "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "db"},
            "podGroupTemplates": [
                {
                    "name": "db",
                    "schedulingPolicy": {"gang": {"minCount": 5}},
                    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
                    "disruptionMode": {"all": {}},
                    "priorityClassName": "high",
                    "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "accel"}],
                }
            ],
        },
    }


@pytest.mark.parametrize(
    ("it", "options", "message"),
    [
        pytest.param(
            item({"schedulingPolicy": {"gang": {}}}),
            opts(),
            "gang scheduling requires minCount to be set after resolution",
            id="gang-without-count",
        ),
        pytest.param(
            item(),
            opts(owner=None),
            "a Workload must be owned by its controller for garbage collection",
            id="no-owner",
        ),
        pytest.param(
            item(),
            opts(owner={**OWNER, "apiVersion": "a/b/c"}),
            'invalid owner apiVersion "a/b/c": unexpected GroupVersion string: a/b/c',
            id="bad-owner-api-version",
        ),
        pytest.param(
            WorkloadItem(name="", path=SCHED), opts(), "workload item name cannot be empty", id="empty-name"
        ),
        pytest.param(None, opts(), "workload item cannot be nil", id="nil-root"),
        pytest.param(
            WorkloadItem(
                name="root",
                children=[
                    WorkloadItem(
                        name="leaf",
                        input=WorkloadInput(policy=BlockInput(composite_pod_group_data={"basic": {}})),
                    )
                ],
                input=WorkloadInput(policy=BlockInput(composite_pod_group_data={"gang": {}})),
            ),
            opts(),
            'leaf workload item "leaf" sets composite building block: policy',
            id="leaf-with-composite-block",
        ),
        pytest.param(
            WorkloadItem(
                name="root",
                children=[WorkloadItem(name="a")],
                input=input_from_scheduling({"disruptionMode": {}}),
            ),
            opts(),
            'composite workload item "root" sets leaf building block: disruptionMode',
            id="composite-with-leaf-block",
        ),
        pytest.param(
            WorkloadItem(name="root", children=[WorkloadItem(name="a"), WorkloadItem(name="a")]),
            opts(),
            'duplicate workload item name "a": template names must be unique across the Workload',
            id="duplicate-names",
        ),
        pytest.param(
            WorkloadItem(
                name="root",
                children=[WorkloadItem(name="a")],
                input=WorkloadInput(policy=BlockInput(composite_pod_group_data={"gang": {}})),
            ),
            opts(),
            "composite gang scheduling requires minGroupCount to be set after resolution",
            id="composite-gang-without-count",
        ),
    ],
)
def test_build_errors(it: WorkloadItem | None, options: BuildOptions, message: str) -> None:
    with pytest.raises(BuildError) as exc:
        new_builder(it, options).build_workload()
    assert str(exc.value) == message


def test_core_group_owner_has_no_api_group() -> None:
    wl = new_builder(item(), opts(owner={"apiVersion": "v1", "kind": "Pod", "name": "p"})).build_workload()
    assert wl["spec"]["controllerRef"] == {"kind": "Pod", "name": "p"}


def test_build_is_cached_and_returns_independent_copies() -> None:
    calls: list[int] = []
    b = new_builder(item(callbacks=[lambda cfg: calls.append(1)]), opts())
    first = b.build_workload()
    first["spec"]["podGroupTemplates"][0]["name"] = "mutated"
    assert b.build_workload()["spec"]["podGroupTemplates"][0]["name"] == "db"
    assert calls == [1]


def test_composite_tree_compiles_to_one_composite_template() -> None:
    root = WorkloadItem(
        name="root",
        input=WorkloadInput(policy=BlockInput(composite_pod_group_data={"gang": {"minGroupCount": 2}})),
        children=[
            WorkloadItem(name="leader"),
            WorkloadItem(name="workers", children=[WorkloadItem(name="w0")]),
        ],
    )
    b = new_builder(root, opts())
    spec = b.build_workload()["spec"]
    assert spec["compositePodGroupTemplates"] == [
        {
            "name": "root",
            "schedulingPolicy": {"gang": {"minGroupCount": 2}},
            "podGroupTemplates": [{"name": "leader", "schedulingPolicy": {"basic": {}}}],
            "compositePodGroupTemplates": [
                {
                    "name": "workers",
                    "schedulingPolicy": {"basic": {}},
                    "podGroupTemplates": [{"name": "w0", "schedulingPolicy": {"basic": {}}}],
                }
            ],
        }
    ]
    assert "podGroupTemplates" not in spec
    assert b.new_pod_group("pg-w0", "w0")["spec"]["workloadRef"] == {
        "workloadName": "db-wl",
        "templateName": "w0",
    }
    cpg = b.new_composite_pod_group("cpg", "workers")
    assert cpg["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert cpg["spec"] == {
        "workloadRef": {"workloadName": "db-wl", "templateName": "workers"},
        "schedulingPolicy": {"basic": {}},
    }


# -- new_pod_group ----------------------------------------------------------------------------


def test_new_pod_group_copies_the_template() -> None:
    it = item(
        {
            "schedulingPolicy": {"gang": {}},
            "schedulingConstraints": {"topology": [{"key": "zone"}]},
            "resourceClaims": [{"name": "shared", "resourceClaimName": "c"}],
        },
        callbacks=[set_min_count(3)],
        default=basic_default(priority_class_name="high"),
    )
    b = new_builder(it, opts())
    wl = b.build_workload()
    pg = b.new_pod_group("db-pg", "db")
    assert pg == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "db-pg", "namespace": "ns", "ownerReferences": [OWNER]},
        "spec": {
            "workloadRef": {"workloadName": "db-wl", "templateName": "db"},
            "schedulingPolicy": {"gang": {"minCount": 3}},
            "schedulingConstraints": {"topology": [{"key": "zone"}]},
            "resourceClaims": [{"name": "shared", "resourceClaimName": "c"}],
            "priorityClassName": "high",
        },
    }
    pg["spec"]["schedulingPolicy"]["gang"]["minCount"] = 99
    assert b.build_workload() == wl


@pytest.mark.parametrize(
    ("prepare", "template", "message"),
    [
        pytest.param(
            False,
            "db",
            "no Workload available: call BuildWorkload or use NewBuilderFromExistingWorkload first",
            id="before-build",
        ),
        pytest.param(
            True, "nope", 'podGroupTemplate "nope" not found in workload "db-wl" (have [db])', id="unknown"
        ),
    ],
)
def test_new_pod_group_errors(prepare: bool, template: str, message: str) -> None:
    b = new_builder(item(), opts())
    if prepare:
        b.build_workload()
    with pytest.raises(BuildError) as exc:
        b.new_pod_group("pg", template)
    assert str(exc.value) == message


def test_existing_workload_builder_only_materialises() -> None:
    persisted = new_builder(
        item({"schedulingPolicy": {"gang": {}}}, callbacks=[set_min_count(4)]), opts()
    ).build_workload()
    persisted["metadata"]["uid"] = "wl-uid"
    b = new_builder_from_existing_workload(persisted, opts(owner={**OWNER, "name": "child"}))
    with pytest.raises(BuildError) as exc:
        b.build_workload()
    assert str(exc.value) == (
        "BuildWorkload is not available on a Builder created from an existing Workload: "
        "it materializes from the supplied Workload"
    )
    assert strs(b.validate(ValidationInput())) == [
        "Internal error: cannot validate a builder constructed from an existing workload"
    ]
    pg = b.new_pod_group("child-pg", "db")
    assert pg["metadata"]["ownerReferences"] == [{**OWNER, "name": "child"}]
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}


# -- validate ---------------------------------------------------------------------------------


def test_validate_invocation_errors() -> None:
    assert strs(new_builder(None, opts()).validate()) == [
        "Invalid value: null: invalid builder: missing root WorkloadItem"
    ]
    old = item(name="other")
    assert strs(new_builder(item(), opts()).validate(ValidationInput(old_root=old))) == [
        'spec.scheduling: Internal error: old root name "other" does not match new root name "db"'
    ]
    dup = WorkloadItem(name="r", path=SCHED, children=[WorkloadItem(name="r")])
    assert strs(new_builder(dup, opts()).validate()) == [
        'spec.scheduling: Internal error: duplicate workload item name "r": '
        "template names must be unique across the Workload"
    ]


@pytest.mark.parametrize(
    ("scheduling", "want"),
    [
        pytest.param(
            {"schedulingPolicy": {}},
            ['spec.scheduling.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'],
            id="policy-none-set",
        ),
        pytest.param(
            {"schedulingPolicy": {"basic": {}, "gang": {}}},
            [
                'spec.scheduling.schedulingPolicy: Invalid value: "{basic, gang}": '
                "must specify exactly one of: `basic`, `gang`"
            ],
            id="policy-both-set",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {"minCount": 0}}},
            [
                "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 0: must be greater than or equal to 1"
            ],
            id="min-count-zero",
        ),
        pytest.param(
            {"disruptionMode": {"single": {}, "all": {}}},
            [
                'spec.scheduling.disruptionMode: Invalid value: "{single, all}": must specify exactly one of: `single`, `all`'
            ],
            id="mode-both",
        ),
        pytest.param(
            {"schedulingConstraints": {"topology": [{"key": "a"}, {"key": "b"}]}},
            ["spec.scheduling.schedulingConstraints.topology: Too many: 2: must have at most 1 item"],
            id="topology-max-1",
        ),
        pytest.param(
            {"schedulingConstraints": {"topology": [{}]}},
            ["spec.scheduling.schedulingConstraints.topology[0].key: Required value"],
            id="topology-key-required",
        ),
        pytest.param(
            {"resourceClaims": [{"name": "c"}]},
            [
                'spec.scheduling.resourceClaims[0]: Invalid value: "": '
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            ],
            id="claim-no-source",
        ),
    ],
)
def test_declarative_validation_of_input_blocks(scheduling: dict[str, Any], want: list[str]) -> None:
    it = item(scheduling, callbacks=[set_min_count(1)])
    assert strs(new_builder(it, opts()).validate()) == want
    # In-tree callers already ran DV on the API object and disable it here.
    assert new_builder(it, opts(disable_declarative_validation=True)).validate() == []


def test_declarative_validation_ratchets_on_update() -> None:
    bad = {"schedulingPolicy": {"basic": {}, "gang": {}}}
    errs = new_builder(item(bad), opts()).validate(ValidationInput(old_root=item(copy.deepcopy(bad))))
    assert errs == []


@pytest.mark.parametrize(
    ("scheduling", "policies", "modes", "want"),
    [
        pytest.param(
            {},
            (SchedulingPolicyOption.GANG,),
            ALL_MODES,
            [
                "spec.scheduling.schedulingPolicy: Forbidden: basic scheduling policy is not supported by this controller"
            ],
            id="basic-not-allowed-even-by-default",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {}}},
            (SchedulingPolicyOption.BASIC,),
            ALL_MODES,
            [
                "spec.scheduling.schedulingPolicy: Forbidden: gang scheduling policy is not supported by this controller"
            ],
            id="gang-not-allowed",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {}}, "disruptionMode": {"single": {}}},
            ALL_POLICIES,
            (DisruptionModeOption.ALL,),
            [
                "spec.scheduling.disruptionMode: Forbidden: the disruptionMode `single` is not supported by this controller"
            ],
            id="single-not-allowed",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {}}, "disruptionMode": {"all": {}}},
            ALL_POLICIES,
            (),
            [
                "spec.scheduling.disruptionMode: Forbidden: the disruptionMode `all` is not supported by this controller"
            ],
            id="empty-allow-list-allows-nothing",
        ),
        pytest.param(
            {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}},
            ALL_POLICIES,
            ALL_MODES,
            [
                'spec.scheduling.disruptionMode: Invalid value: "": '
                "the disruptionMode `all` is not supported with the Basic scheduling policy"
            ],
            id="basic-plus-all",
        ),
        pytest.param(
            {"disruptionMode": {"all": {}}},
            ALL_POLICIES,
            ALL_MODES,
            [
                'spec.scheduling.disruptionMode: Invalid value: "": '
                "the disruptionMode `all` is not supported with the Basic scheduling policy"
            ],
            id="omitted-policy-resolves-basic-plus-all",
        ),
        pytest.param(
            {"schedulingPolicy": {"gang": {}}, "disruptionMode": {"all": {}}},
            ALL_POLICIES,
            ALL_MODES,
            [],
            id="gang-plus-all",
        ),
    ],
)
def test_controller_policy_checks_on_resolved_config(
    scheduling: dict[str, Any], policies: Any, modes: Any, want: list[str]
) -> None:
    it = item(scheduling, callbacks=[set_min_count(2)])
    options = opts(
        allowed_policies=policies, allowed_disruption_modes=modes, disable_declarative_validation=True
    )
    assert strs(new_builder(it, options).validate()) == want


# ------------------------------------------------------------------ SchedulingConfig.deep_copy
def _filled(cls: type, salt: int = 0) -> Any:
    """An instance of a workloadbuilder dataclass with every field set, none to its default."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for i, f in enumerate(dataclasses.fields(cls)):
        kwargs[f.name] = _value(hints[f.name], f"{f.name}-{salt}-{i}", salt + i + 1)
    return cls(**kwargs)


def _value(tp: Any, text: str, n: int) -> Any:
    import dataclasses
    import types
    import typing

    args = typing.get_args(tp)
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return _value(next(a for a in args if a is not type(None)), text, n)
    if typing.get_origin(tp) is list:
        return [_value(args[0], f"{text}-a", n), _value(args[0], f"{text}-b", n + 1)]
    if tp is bool:
        return True
    if tp is int:
        return 100 + n
    if tp is str:
        return text
    assert dataclasses.is_dataclass(tp), f"no test value for {tp!r}: extend _value"
    return _filled(tp, n)


def _objects(value: Any) -> list[Any]:
    """Every dataclass instance and list inside ``value`` (for aliasing checks)."""
    import dataclasses

    out: list[Any] = []
    if dataclasses.is_dataclass(value):
        out.append(value)
        for f in dataclasses.fields(value):
            out.extend(_objects(getattr(value, f.name)))
    elif isinstance(value, list):
        out.append(value)
        for v in value:
            out.extend(_objects(v))
    return out


def test_scheduling_config_deep_copy_copies_every_field_of_every_class() -> None:
    """The field-by-field copy equals ``copy.deepcopy`` with every field set (a field added to
    any of the classes later fails here until the copy carries it) and shares no object."""
    from apiserver.workloadbuilder.types import SchedulingConfig

    full = _filled(SchedulingConfig)
    assert full.policy.gang is not None and full.constraints.topology and full.resource_claims
    dup = full.deep_copy()
    assert dup == copy.deepcopy(full)
    mine = {id(o) for o in _objects(full)}
    assert not any(id(o) in mine for o in _objects(dup))
    assert SchedulingConfig().deep_copy() == SchedulingConfig()
