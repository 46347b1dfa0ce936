"""apps/v1 strategies: StatefulSet defaults/validation/update rules, Deployment, ReplicaSet, DaemonSet, ControllerRevision."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.registry.strategies.apps import STATEFULSET_SPEC_FORBIDDEN, STRATEGIES
from apiserver.rest.strategy import Strategy, StrategyContext
from featuregates import GENERIC_WORKLOAD
from tests.strategy_support import run_create, run_status_update, run_update, strategy_ctx

ctx = strategy_ctx


def strategy(plural: str) -> Strategy:
    return STRATEGIES[("apps", plural)]


def create(plural: str, obj: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    """default -> prepare_for_create -> validate, like the registry; returns the object and messages."""
    return run_create(strategy(plural), obj, c or ctx())


def update(plural: str, new: Obj, old: Obj, c: StrategyContext | None = None) -> tuple[Obj, list[str]]:
    return run_update(strategy(plural), new, old, c or ctx())


def status_update(plural: str, new: Obj, old: Obj) -> tuple[Obj, list[str]]:
    return run_status_update(strategy(plural), new, old, ctx())


def template(labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    pod_spec: Obj = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    pod_spec.update(spec)
    return {"metadata": {"labels": {"app": "web"} if labels is None else labels}, "spec": pod_spec}


def sts(**spec: Any) -> Obj:
    base: Obj = {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template()}
    base.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": base,
    }


def mutated(obj: Obj, f: Callable[[Obj], None]) -> Obj:
    out = copy.deepcopy(obj)
    f(out)
    return out


# ----------------------------------------------------------------------------- StatefulSet defaults


def test_statefulset_defaults() -> None:
    vct = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    obj, errs = create("statefulsets", sts(volumeClaimTemplates=[vct], scheduling={"anything": "kept"}))
    assert errs == []
    spec = obj["spec"]
    assert {
        k: spec[k]
        for k in (
            "replicas",
            "podManagementPolicy",
            "updateStrategy",
            "revisionHistoryLimit",
            "persistentVolumeClaimRetentionPolicy",
        )
    } == {
        "replicas": 1,
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
        "revisionHistoryLimit": 10,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }
    assert "minReadySeconds" not in spec  # int32 zero, omitted on the wire
    assert spec["scheduling"] == {"anything": "kept"}  # owned by the KEP-6277 validator
    assert spec["volumeClaimTemplates"] == [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }
    ]
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"], pod_spec["terminationGracePeriodSeconds"]) == (
        "Always",
        "ClusterFirst",
        30,
    )
    assert "enableServiceLinks" not in pod_spec  # a Pod-only default
    assert obj["status"] == {"replicas": 0, "availableReplicas": 0}


@pytest.mark.parametrize(
    ("update_strategy", "expected"),
    [
        (
            {"type": "RollingUpdate"},
            {"type": "RollingUpdate"},
        ),  # explicit type, no rollingUpdate: nothing to default
        (
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 2, "maxUnavailable": 1}},
        ),
        ({"type": "OnDelete"}, {"type": "OnDelete"}),
    ],
)
def test_statefulset_update_strategy_defaults(update_strategy: Obj, expected: Obj) -> None:
    obj, errs = create("statefulsets", sts(updateStrategy=update_strategy))
    assert errs == []
    assert obj["spec"]["updateStrategy"] == expected


# ----------------------------------------------------------------------------- StatefulSet validation


def _spec(**kv: Any) -> Callable[[Obj], None]:
    return lambda o: o["spec"].update(kv)


STS_CASES: list[tuple[str, Callable[[Obj], None], list[str]]] = [
    (
        "selector missing",
        lambda o: o["spec"].pop("selector"),
        [
            "spec.selector: Required value",
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
        ],
    ),
    (
        "empty selector",
        _spec(selector={}),
        ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"],
    ),
    (
        "selector mismatch",
        _spec(selector={"matchLabels": {"app": "db"}}),
        [
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'
        ],
    ),
    (
        "selector expressions mismatch",
        _spec(selector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe"]}]}),
        [
            'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'
        ],
    ),
    (
        "negative replicas",
        _spec(replicas=-1),
        ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "negative minReadySeconds",
        _spec(minReadySeconds=-5),
        ["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
    ),
    (
        "pod management policy",
        _spec(podManagementPolicy="Random"),
        ["spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"],
    ),
    (
        "update strategy type",
        _spec(updateStrategy={"type": "Recreate"}),
        [
            "spec.updateStrategy: Invalid value: {\"type\":\"Recreate\"}: must be 'RollingUpdate' or 'OnDelete'"
        ],
    ),
    (
        "OnDelete with rollingUpdate",
        _spec(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
        [
            "spec.updateStrategy.rollingUpdate: Invalid value: {\"partition\":1}: only allowed for updateStrategy 'RollingUpdate'"
        ],
    ),
    (
        "negative partition",
        _spec(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}),
        [
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"
        ],
    ),
    (
        "maxUnavailable zero",
        _spec(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
        ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0"],
    ),
    (
        "maxUnavailable over 100%",
        _spec(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "150%"}}),
        [
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%'
        ],
    ),
    (
        "maxUnavailable not a percent",
        _spec(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "half"}}),
        [
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "half": a valid percent string must be a numeric string '
            "followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "half": cannot be 0',
        ],
    ),
    (
        "ordinals start",
        _spec(ordinals={"start": -1}),
        ["spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        "retention policy",
        _spec(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Keep"}),
        [
            'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"'
        ],
    ),
    (
        "restart policy must be Always",
        _spec(template=template(restartPolicy="Never")),
        ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ),
    (
        "activeDeadlineSeconds",
        _spec(template=template(activeDeadlineSeconds=10)),
        [
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported"
        ],
    ),
    (
        "template labels are validated",
        _spec(selector={"matchLabels": {"app": "a b"}}, template=template(labels={"app": "a b"})),
        [
            'spec.selector.matchLabels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
            "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            'spec.selector: Invalid value: {"matchLabels":{"app":"a b"}}',  # LabelSelectorAsSelector failed: no detail
        ],
    ),
    # kube does not validate a StatefulSet's pod spec (only Pods created from it fail)
    ("pod spec is not validated", _spec(template=template(containers=[])), []),
]


@pytest.mark.parametrize(("name", "mutate", "expected"), STS_CASES, ids=[c[0] for c in STS_CASES])
def test_statefulset_validation(name: str, mutate: Callable[[Obj], None], expected: list[str]) -> None:
    obj = sts()
    mutate(obj)
    _, errs = create("statefulsets", obj)
    assert errs == expected


# ----------------------------------------------------------------------------- StatefulSet updates


def _stored_sts(**spec: Any) -> Obj:
    obj, errs = create("statefulsets", sts(**spec))
    assert errs == []
    return obj


@pytest.mark.parametrize(
    ("name", "mutate", "allowed"),
    [
        ("replicas", _spec(replicas=5), True),
        (
            "template image",
            lambda o: o["spec"]["template"]["spec"]["containers"][0].__setitem__("image", "nginx:2"),
            True,
        ),
        ("update strategy", _spec(updateStrategy={"type": "OnDelete"}), True),
        ("revision history", _spec(revisionHistoryLimit=3), True),
        (
            "retention policy",
            _spec(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Retain"}),
            True,
        ),
        ("minReadySeconds", _spec(minReadySeconds=10), True),
        ("ordinals", _spec(ordinals={"start": 3}), True),
        ("serviceName", _spec(serviceName="other"), False),
        ("podManagementPolicy", _spec(podManagementPolicy="Parallel"), False),
        (
            "selector",
            _spec(
                selector={"matchLabels": {"app": "web", "x": "y"}},
                template=template(labels={"app": "web", "x": "y"}),
            ),
            False,
        ),
        (
            "volumeClaimTemplates",
            _spec(
                volumeClaimTemplates=[{"metadata": {"name": "d"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]
            ),
            False,
        ),
    ],
)
def test_statefulset_update_rules(name: str, mutate: Callable[[Obj], None], allowed: bool) -> None:
    old = _stored_sts()
    _, errs = update("statefulsets", mutated(old, mutate), old)
    assert errs == ([] if allowed else [f"spec: Forbidden: {STATEFULSET_SPEC_FORBIDDEN}"])


def test_statefulset_scheduling_changes_are_judged_by_the_kep_validator_not_the_spec_rule() -> None:
    """spec.scheduling is not in kube's mutable list, yet the generic forbidden-spec error must not fire
    for it: the whole-field immutability of KEP-6277 reports it at spec.scheduling instead."""
    old = _stored_sts()
    _, errs = update("statefulsets", mutated(old, _spec(scheduling={})), old)
    assert errs and all(e.startswith("spec.scheduling") for e in errs)


def test_statefulset_forbidden_message_is_kubes() -> None:
    assert STATEFULSET_SPEC_FORBIDDEN == (
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )


def test_statefulset_update_revalidates_the_spec() -> None:
    old = _stored_sts()
    _, errs = update("statefulsets", mutated(old, _spec(replicas=-2)), old)
    assert errs == ["spec.replicas: Invalid value: -2: must be greater than or equal to 0"]


def test_statefulset_status_and_spec_separation() -> None:
    old = _stored_sts()
    new = mutated(old, lambda o: o.update(status={"replicas": 9}))
    new["spec"]["replicas"] = 3
    got, errs = update("statefulsets", new, old)
    assert errs == []
    assert got["status"] == old["status"] and got["spec"]["replicas"] == 3
    s = strategy("statefulsets")
    assert s.generation_relevant(got) != s.generation_relevant(old)
    assert s.generation_relevant(
        mutated(old, lambda o: o.update(status={"replicas": 1}))
    ) == s.generation_relevant(old)

    new = mutated(old, lambda o: o.update(status={"replicas": 3, "readyReplicas": 2, "availableReplicas": 2}))
    new["spec"]["replicas"] = 7
    got, errs = status_update("statefulsets", new, old)
    assert errs == []
    assert got["spec"] == old["spec"] and got["status"]["readyReplicas"] == 2


@pytest.mark.parametrize(
    ("status", "old_status", "expected"),
    [
        (
            {"replicas": 1, "readyReplicas": 2, "availableReplicas": 0},
            {},
            ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"],
        ),
        (
            {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
            {},
            ["status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas"],
        ),
        (
            {"replicas": 0, "updatedReplicas": -1},
            {},
            ["status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"replicas": 0, "collisionCount": 1},
            {"collisionCount": 2},
            ["status.collisionCount: Invalid value: 1: cannot be decremented"],
        ),
    ],
)
def test_statefulset_status_validation(status: Obj, old_status: Obj, expected: list[str]) -> None:
    old = _stored_sts()
    old["status"] = old_status
    _, errs = status_update("statefulsets", mutated(old, lambda o: o.__setitem__("status", status)), old)
    assert errs == expected


def test_statefulset_template_scheduling_group_follows_the_gate() -> None:
    obj, _ = create(
        "statefulsets",
        sts(template=template(schedulingGroup={"podGroupName": "pg"})),
        ctx({GENERIC_WORKLOAD: False}),
    )
    assert "schedulingGroup" not in obj["spec"]["template"]["spec"]
    obj, _ = create("statefulsets", sts(template=template(schedulingGroup={"podGroupName": "pg"})))
    assert obj["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "pg"}


# ----------------------------------------------------------------------------- Deployment / ReplicaSet


def deployment(**spec: Any) -> Obj:
    base: Obj = {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
    base.update(spec)
    return {"metadata": {"name": "web", "namespace": "default"}, "spec": base}


def test_deployment_defaults() -> None:
    obj, errs = create("deployments", deployment())
    assert errs == []
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    assert obj["status"] == {}
    recreate, errs = create("deployments", deployment(strategy={"type": "Recreate"}))
    assert errs == [] and recreate["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
        ({"template": template(containers=[])}, ["spec.template.spec.containers: Required value"]),
        (
            {"strategy": {"type": "Recreate", "rollingUpdate": {}}},
            [
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
            ],
        ),
        (
            {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"
            ],
        ),
        (
            {"strategy": {"type": "Blue"}},
            [
                'spec.strategy: Unsupported value: {"type":"Blue"}: supported values: "Recreate", "RollingUpdate"'
            ],
        ),
        (
            {"progressDeadlineSeconds": 5, "minReadySeconds": 10},
            ["spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds"],
        ),
        (
            {"template": template(restartPolicy="OnFailure")},
            ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
        ),
    ],
)
def test_deployment_validation(spec: Obj, expected: list[str]) -> None:
    _, errs = create("deployments", deployment(**spec))
    assert errs == expected


def test_deployment_selector_is_immutable() -> None:
    old, _ = create("deployments", deployment())
    new = mutated(
        old,
        _spec(
            selector={"matchLabels": {"app": "web", "v": "2"}},
            template=template(labels={"app": "web", "v": "2"}),
        ),
    )
    _, errs = update("deployments", new, old)
    assert errs == ['spec.selector: Invalid value: {"matchLabels":{"app":"web","v":"2"}}: field is immutable']


def test_replicaset() -> None:
    obj, errs = create("replicasets", deployment())
    assert errs == []
    assert obj["spec"]["replicas"] == 1 and obj["status"] == {"replicas": 0}
    _, errs = create("replicasets", deployment(selector={}))
    assert errs == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    ]  # kube's wording
    old = obj
    new = mutated(old, lambda o: o.update(status={"replicas": 1, "fullyLabeledReplicas": 2}))
    _, errs = status_update("replicasets", new, old)
    assert errs == ["status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas"]


# ----------------------------------------------------------------------------- DaemonSet


def test_daemonset_defaults_and_template_generation() -> None:
    obj, errs = create("daemonsets", deployment())
    assert errs == []
    assert obj["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert obj["spec"]["revisionHistoryLimit"] == 10
    assert obj["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    assert obj["status"] == {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    same, errs = update(
        "daemonsets", mutated(obj, lambda o: o["metadata"].__setitem__("labels", {"a": "b"})), obj
    )
    assert errs == [] and same["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    changed = mutated(
        obj, lambda o: o["spec"]["template"]["spec"]["containers"][0].__setitem__("image", "nginx:2")
    )
    got, errs = update("daemonsets", changed, obj)
    assert errs == [] and got["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1},
                }
            },
            [
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
            ],
        ),
        (
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0},
                }
            },
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
            ],
        ),
        ({"selector": {}}, ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]),
        (
            {"template": template(activeDeadlineSeconds=5)},
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"
            ],
        ),
    ],
)
def test_daemonset_validation(spec: Obj, expected: list[str]) -> None:
    _, errs = create("daemonsets", deployment(**spec))
    assert errs == expected


# ----------------------------------------------------------------------------- ControllerRevision


def test_controller_revision() -> None:
    rev = {"metadata": {"name": "web-abc"}, "data": {"spec": {"template": {}}}, "revision": 1}
    obj, errs = create("controllerrevisions", rev)
    assert errs == []
    _, errs = create("controllerrevisions", {"metadata": {"name": "r"}, "revision": -1})
    assert errs == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0",
    ]
    _, errs = update("controllerrevisions", mutated(obj, lambda o: o.__setitem__("data", {"x": 1})), obj)
    assert errs == ['data: Invalid value: {"x":1}: field is immutable']
    _, errs = update("controllerrevisions", mutated(obj, lambda o: o.__setitem__("revision", 2)), obj)
    assert errs == []


def test_strategy_table() -> None:
    assert set(STRATEGIES) == {
        ("apps", p)
        for p in ("statefulsets", "deployments", "replicasets", "daemonsets", "controllerrevisions")
    }
    assert all(
        STRATEGIES[("apps", p)].has_status
        for p in ("statefulsets", "deployments", "replicasets", "daemonsets")
    )
    assert not STRATEGIES[("apps", "controllerrevisions")].has_status
