"""Lease, PodDisruptionBudget, PriorityClass and events.k8s.io/v1 Event strategies and Event conversion."""

from __future__ import annotations

import copy

import pytest

from apiserver.api.types import Obj
from apiserver.field import Path
from apiserver.registry.strategies.misc import (
    STRATEGIES,
    core_event_to_events_v1,
    events_v1_to_core_event,
    validate_conditions,
)
from apiserver.rest.strategy import Strategy, StrategyContext
from featuregates import FeatureGate


def ctx(namespace: str = "default") -> StrategyContext:
    return StrategyContext(gates=FeatureGate(), namespace=namespace, now="2026-01-01T00:00:00Z")


def strategy(key: tuple[str, str]) -> Strategy:
    return STRATEGIES[key]


def create(key: tuple[str, str], obj: Obj, namespace: str = "default") -> tuple[Obj, list[str]]:
    c = ctx(namespace)
    s = strategy(key)
    obj = copy.deepcopy(obj)
    s.default(obj)
    s.prepare_for_create(c, obj)
    return obj, [str(e) for e in s.validate(c, obj)]


def update(key: tuple[str, str], new: Obj, old: Obj) -> tuple[Obj, list[str]]:
    c = ctx()
    s = strategy(key)
    new = copy.deepcopy(new)
    s.default(new)
    s.prepare_for_update(c, new, old)
    return new, [str(e) for e in s.validate_update(c, new, old)]


LEASE = ("coordination.k8s.io", "leases")
PDB = ("policy", "poddisruptionbudgets")
PC = ("scheduling.k8s.io", "priorityclasses")
EVENTS = ("events.k8s.io", "events")


# ----------------------------------------------------------------------------- Lease


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"holderIdentity": "kube-scheduler", "leaseDurationSeconds": 15, "leaseTransitions": 0}, []),
        (
            {"leaseDurationSeconds": 0},
            ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
        ),
        (
            {"leaseTransitions": -1},
            ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"preferredHolder": "a"},
            ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"],
        ),
        (
            {"strategy": "Newest"},
            ['spec.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'],
        ),
    ],
)
def test_lease(spec: Obj, expected: list[str]) -> None:
    _, errs = create(
        LEASE, {"metadata": {"name": "kube-scheduler", "namespace": "kube-system"}, "spec": spec}
    )
    assert errs == expected


# ----------------------------------------------------------------------------- PodDisruptionBudget


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}, []),
        ({"maxUnavailable": "25%", "unhealthyPodEvictionPolicy": "AlwaysAllow"}, []),
        (
            {"minAvailable": 1, "maxUnavailable": 1},
            [
                'spec: Invalid value: {"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set'
            ],
        ),
        ({"minAvailable": -1}, ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]),
        (
            {"maxUnavailable": "120%"},
            ['spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%'],
        ),
        (
            {"minAvailable": "most"},
            [
                "spec.minAvailable: Invalid value: \"most\": a valid percent string must be a numeric string followed by an ending '%' "
                "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ],
        ),
        (
            {"unhealthyPodEvictionPolicy": "Never"},
            [
                'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'
            ],
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
            [
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
    ],
)
def test_pdb_validation(spec: Obj, expected: list[str]) -> None:
    _, errs = create(PDB, {"metadata": {"name": "db"}, "spec": spec})
    assert errs == expected


def test_pdb_status_is_the_controllers() -> None:
    obj, errs = create(
        PDB, {"metadata": {"name": "db"}, "spec": {"minAvailable": 1}, "status": {"disruptionsAllowed": 5}}
    )
    assert errs == []
    assert obj["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
    new = copy.deepcopy(obj)
    new["spec"]["minAvailable"] = 2
    new["status"]["disruptionsAllowed"] = 3
    got, errs = update(PDB, new, obj)
    assert errs == [] and got["status"]["disruptionsAllowed"] == 0 and got["spec"]["minAvailable"] == 2
    s = strategy(PDB)
    bad = copy.deepcopy(obj)
    bad["status"] = {
        "disruptionsAllowed": -1,
        "conditions": [{"type": "DisruptionAllowed", "status": "Maybe", "reason": "x y"}],
    }
    errs = [str(e) for e in s.validate_status_update(ctx(), bad, obj)]
    assert errs[:2] == [
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
        "status.conditions[0].lastTransitionTime: Required value: must be set",
    ]
    assert errs[-1] == "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"


def test_validate_conditions() -> None:
    good = {
        "type": "Ready",
        "status": "True",
        "reason": "AllGood",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    assert validate_conditions([good], Path("status", "conditions")) == []
    errs = [str(e) for e in validate_conditions([good, dict(good, reason="")], Path("status", "conditions"))]
    assert errs == [
        "status.conditions[1].reason: Required value: must be set",
        'status.conditions[1].type: Duplicate value: "Ready"',
    ]


# ----------------------------------------------------------------------------- PriorityClass


def test_priority_class_defaults() -> None:
    obj, errs = create(PC, {"metadata": {"name": "high"}, "value": 1000})
    assert errs == []
    assert obj["preemptionPolicy"] == "PreemptLowerPriority"


@pytest.mark.parametrize(
    ("name", "value", "extra", "expected"),
    [
        ("high", 1_000_000_000, {}, []),
        (
            "too-high",
            1_000_000_001,
            {},
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
        ),
        ("system-node-critical", 2_000_001_000, {}, []),
        ("system-cluster-critical", 2_000_000_000, {}, []),
        (
            "system-custom",
            5,
            {},
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-custom is not a known system priority class"
            ],
        ),
        (
            "system-node-critical",
            10,
            {},
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                "error: value of system-node-critical PriorityClass must be 2000001000"
            ],
        ),
        (
            "system-cluster-critical",
            2_000_000_000,
            {"globalDefault": True},
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                "error: globalDefault of system-cluster-critical PriorityClass must be false"
            ],
        ),
        (
            "never",
            1,
            {"preemptionPolicy": "Always"},
            [
                'preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"'
            ],
        ),
    ],
)
def test_priority_class_validation(name: str, value: int, extra: Obj, expected: list[str]) -> None:
    _, errs = create(PC, {"metadata": {"name": name}, "value": value, **extra})
    assert errs == expected


def test_priority_class_value_and_policy_are_immutable() -> None:
    old, _ = create(PC, {"metadata": {"name": "high"}, "value": 1000})
    new = dict(copy.deepcopy(old), value=2000, preemptionPolicy="Never", description="changed")
    _, errs = update(PC, new, old)
    assert errs == [
        "value: Forbidden: may not be changed in an update.",
        'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]
    _, errs = update(PC, dict(copy.deepcopy(old), description="only this"), old)
    assert errs == []


# ----------------------------------------------------------------------------- Events


CORE_EVENT: Obj = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "web-0.1", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0", "apiVersion": "v1"},
    "reason": "Scheduled",
    "message": "Successfully assigned default/web-0 to node-1",
    "source": {"component": "default-scheduler"},
    "firstTimestamp": "2026-01-01T00:00:00Z",
    "lastTimestamp": "2026-01-01T00:00:05Z",
    "count": 2,
    "type": "Normal",
    "eventTime": None,
    "reportingComponent": "default-scheduler",
    "reportingInstance": "sched-1",
    "action": "Binding",
}


def test_core_to_events_v1_mapping() -> None:
    v1 = core_event_to_events_v1(CORE_EVENT)
    assert v1 == {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "web-0.1", "namespace": "default"},
        "eventTime": None,
        "reportingInstance": "sched-1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web-0", "apiVersion": "v1"},
        "note": "Successfully assigned default/web-0 to node-1",
        "deprecatedSource": {"component": "default-scheduler"},
        "reportingController": "default-scheduler",
        "deprecatedCount": 2,
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z",
        "deprecatedLastTimestamp": "2026-01-01T00:00:05Z",
    }
    back = events_v1_to_core_event(v1)
    assert back == CORE_EVENT


def test_events_v1_series_round_trips() -> None:
    v1 = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "series": {"count": 3, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Reconcile",
        "reason": "Synced",
        "regarding": {"kind": "StatefulSet", "namespace": "default", "name": "web"},
        "note": "ok",
        "type": "Normal",
    }
    core_ev = events_v1_to_core_event(v1)
    assert core_ev["reportingComponent"] == "example.com/ctl" and core_ev["involvedObject"]["name"] == "web"
    assert core_ev["message"] == "ok" and "note" not in core_ev and core_ev["series"] == v1["series"]
    assert core_event_to_events_v1(core_ev) == v1
    _, errs = create(EVENTS, core_ev)
    assert errs == []


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"type": "Fatal"}, ['type: Invalid value: "": has invalid value: Fatal']),
        ({"eventTime": None}, ["eventTime: Required value"]),
        ({"count": 3}, ['count: Invalid value: "": needs to be unset']),
        ({"source": {"component": "x"}}, ['source: Invalid value: "": needs to be unset']),
        (
            {"series": {"count": 1}},
            [
                'series.count: Invalid value: "": should be at least 2',
                "series.lastObservedTime: Required value",
            ],
        ),
        (
            {"reportingComponent": ""},
            [
                "reportingController: Required value",
                'reportingController: Invalid value: "": name part must be non-empty',
                "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
                "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ],
        ),
        ({"reason": "R" * 129}, ['reason: Invalid value: "": can have at most 128 characters']),
    ],
)
def test_events_v1_strict_validation(patch: Obj, expected: list[str]) -> None:
    ev = {
        "metadata": {"name": "e", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingComponent": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Reconcile",
        "reason": "Synced",
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
        "type": "Normal",
    }
    ev.update(patch)
    _, errs = create(EVENTS, ev)
    assert errs == expected


def test_events_v1_update_is_mostly_immutable() -> None:
    ev = events_v1_to_core_event(
        {
            "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Reconcile",
            "reason": "Synced",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
            "type": "Normal",
        }
    )
    new = dict(
        copy.deepcopy(ev),
        message="changed",
        series={"count": 2, "lastObservedTime": "2026-01-01T00:02:00.000000Z"},
    )
    _, errs = update(EVENTS, new, ev)
    assert errs == ['message: Invalid value: "changed": field is immutable']


def test_strategy_table() -> None:
    assert set(STRATEGIES) == {LEASE, PDB, PC, EVENTS}
    assert STRATEGIES[PDB].has_status and not STRATEGIES[PC].has_status
