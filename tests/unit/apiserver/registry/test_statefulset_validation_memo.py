"""A StatefulSet create's validation remembered per shape (``statefulset_spec_memo``,
``statefulset_scheduling_memo``).

The memos must be invisible: for every set — ones that differ from a remembered one only in the
per-set strings (selector and template label values, service, name), ones whose selector no
longer matches its template, and ones with errors anywhere — they answer exactly what a full
validation answers (the same errors, fields, details and order), under every gate mix.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.registry.strategies.apps import default_statefulset, validate_statefulset_spec
from apiserver.registry.strategies.statefulset_create_memo import StatefulSetCreateMemo
from apiserver.registry.strategies.statefulset_scheduling import validate_scheduling
from apiserver.registry.strategies.statefulset_scheduling_memo import SchedulingMemo
from apiserver.registry.strategies.statefulset_spec_memo import StatefulSetSpecMemo
from apiserver.rest.strategy import StrategyContext
from bench.workloads.statefulsets import statefulset
from featuregates import (
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    STATEFULSET_WORKLOAD_PARTITION,
    STATEFULSET_WORKLOAD_USER_MIN_COUNT,
    FeatureGate,
)

GATES = [
    FeatureGate(),
    FeatureGate().with_overrides({STATEFULSET_WORKLOAD_USER_MIN_COUNT: True}),
    FeatureGate().with_overrides({STATEFULSET_WORKLOAD_PARTITION: True}),
    FeatureGate().with_overrides({DRA_WORKLOAD_RESOURCE_CLAIMS: False}),
]
LABEL_VALUES: list[Any] = ["gang-1", "gang-2", "", "Bad Value!", "a" * 64, "x.y_z", 5]
SERVICES: list[Any] = ["gang-1", "web", "", "Bad_Name", "a.b", "a" * 64, 5, None]
NAMES: list[Any] = ["gang-1", "gang-2", "", None]
SCHEDULING: list[Any] = [
    {"schedulingPolicy": {"gang": {}}},
    {"schedulingPolicy": {"gang": {"minCount": 2}}},
    {"schedulingPolicy": {"gang": {"minCount": 9}}},
    {"schedulingPolicy": {"basic": {}}},
    {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}},
    {"schedulingPolicy": {"gang": {}, "basic": {}}},
    {},
    "gang",
    None,
]
#: (path in spec, value) pairs that break or bend other rules
BENDS: list[tuple[tuple[str, ...], Any]] = [
    (("podManagementPolicy",), "OrderedReady"),
    (("podManagementPolicy",), "Sometimes"),
    (("replicas",), 0),
    (("replicas",), -1),
    (("replicas",), 2),
    (("replicas",), 12),  # admits gang.minCount 9 under StatefulSetWorkloadUserMinCount
    (("updateStrategy", "rollingUpdate", "partition"), 2),
    (("updateStrategy", "rollingUpdate", "maxUnavailable"), 0),
    (("template", "spec", "restartPolicy"), "Never"),
    (("template", "spec", "priorityClassName"), "high"),
    (("template", "metadata", "annotations"), {"Bad Key!": "v"}),
    (("revisionHistoryLimit",), -3),
]


def _body(name: str) -> dict[str, Any]:
    """The bench's set, defaulted; unshared (its selector and template labels are one dict)."""
    body: dict[str, Any] = orjson.loads(orjson.dumps(statefulset(name, 3, True, "")))
    default_statefulset(body)
    return body


def _errors(errs: list[Any]) -> list[str]:
    return [f"{e.type}|{e}" for e in errs]


def _set_at(spec: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    d = spec
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value


def _variant(rnd: random.Random) -> dict[str, Any]:
    n = rnd.randint(0, 3)
    body = _body(f"gang-{n}")
    spec = body["spec"]
    name = rnd.choice(NAMES) if rnd.random() < 0.3 else f"gang-{n}"
    if name is None:
        del body["metadata"]["name"]
    else:
        body["metadata"]["name"] = name
    app = rnd.choice(LABEL_VALUES) if rnd.random() < 0.3 else f"gang-{rnd.randint(0, 3)}"
    spec["selector"]["matchLabels"]["app"] = app
    spec["template"]["metadata"]["labels"]["app"] = app if rnd.random() < 0.8 else rnd.choice(LABEL_VALUES)
    if rnd.random() < 0.15:
        spec["template"]["metadata"]["labels"]["tier"] = rnd.choice(LABEL_VALUES)
    if rnd.random() < 0.1:
        spec["selector"]["matchLabels"]["tier"] = "t"
    if rnd.random() < 0.1:
        spec["selector"]["matchExpressions"] = [{"key": "app", "operator": "In", "values": [app]}]
    if rnd.random() < 0.05:
        spec["selector"] = rnd.choice([{}, None, {"matchLabels": {}}])
    if rnd.random() < 0.05:
        del spec["template"]["metadata"]["labels"]
    service = rnd.choice(SERVICES) if rnd.random() < 0.3 else f"gang-{rnd.randint(0, 3)}"
    if service is None:
        del spec["serviceName"]
    else:
        spec["serviceName"] = service
    if rnd.random() < 0.3:
        sched = rnd.choice(SCHEDULING)
        if sched is None:
            del spec["scheduling"]
        else:
            spec["scheduling"] = copy.deepcopy(sched)
    if rnd.random() < 0.3:
        path, value = rnd.choice(BENDS)
        _set_at(spec, path, copy.deepcopy(value))
    return body


@pytest.mark.parametrize("seed", range(6))
def test_remembered_answers_equal_full_validations(seed: int) -> None:
    rnd = random.Random(seed)
    specs = StatefulSetSpecMemo(validate_statefulset_spec)
    scheduling = SchedulingMemo()
    answered = [0, 0]
    for _ in range(800):
        body = _variant(rnd)
        ctx = StrategyContext(gates=rnd.choice(GATES))
        want_spec = _errors(validate_statefulset_spec(copy.deepcopy(body["spec"])))
        want_sched = _errors(validate_scheduling(ctx, copy.deepcopy(body)))
        before = copy.deepcopy(body)
        known = len(specs._valid), len(scheduling._valid)
        assert _errors(specs.validate(body["spec"])) == want_spec
        assert _errors(scheduling.validate(ctx, body)) == want_sched
        assert body == before  # the keys copy, never modify
        answered[0] += not want_spec and len(specs._valid) == known[0]
        answered[1] += not want_sched and len(scheduling._valid) == known[1]
    # most valid sets were answered from a remembered shape
    assert answered[0] > 150 and answered[1] > 150


def test_a_selector_that_stops_matching_is_reported() -> None:
    """Same blanked text, but the template's label no longer equals the selector's."""
    specs = StatefulSetSpecMemo(validate_statefulset_spec)
    ok = _body("gang-1")
    assert specs.validate(ok["spec"]) == []
    bad = copy.deepcopy(ok)
    bad["spec"]["template"]["metadata"]["labels"]["app"] = "gang-2"
    got = _errors(specs.validate(bad["spec"]))
    assert got == _errors(validate_statefulset_spec(bad["spec"])) and got


def test_an_invalid_per_set_string_is_reported() -> None:
    specs = StatefulSetSpecMemo(validate_statefulset_spec)
    ok = _body("gang-1")
    assert specs.validate(ok["spec"]) == []
    for key, value in (("serviceName", "Bad_Name"), ("app", "Bad Value!")):
        bad = copy.deepcopy(ok)
        if key == "app":
            bad["spec"]["selector"]["matchLabels"]["app"] = value
            bad["spec"]["template"]["metadata"]["labels"]["app"] = value
        else:
            bad["spec"][key] = value
        got = _errors(specs.validate(bad["spec"]))
        assert got == _errors(validate_statefulset_spec(bad["spec"])) and got


def test_an_empty_name_is_not_answered_by_a_named_set() -> None:
    scheduling = SchedulingMemo()
    ctx = StrategyContext(gates=FeatureGate())
    ok = _body("gang-1")
    ok["spec"]["podManagementPolicy"] = "OrderedReady"  # an error the semantic layer shares
    named = _errors(scheduling.validate(ctx, ok))
    nameless = copy.deepcopy(ok)
    nameless["metadata"]["name"] = ""
    assert _errors(scheduling.validate(ctx, nameless)) == _errors(validate_scheduling(ctx, nameless))
    assert named == _errors(validate_scheduling(ctx, ok))


@pytest.mark.parametrize("seed", range(4))
def test_one_key_for_both_validations_answers_as_the_full_ones(seed: int) -> None:
    """``StatefulSetCreateMemo``: the spec key with the name's emptiness and the gates stands for
    both answers; random sets (names, label values, services, scheduling stanzas, bends, gate
    mixes) get the errors of the two full validations, spec's first, in order."""
    rnd = random.Random(100 + seed)
    creates = StatefulSetCreateMemo(StatefulSetSpecMemo(validate_statefulset_spec), SchedulingMemo())
    answered = 0
    for _ in range(800):
        body = _variant(rnd)
        ctx = StrategyContext(gates=rnd.choice(GATES))
        want = _errors(validate_statefulset_spec(copy.deepcopy(body["spec"])))
        want += _errors(validate_scheduling(ctx, copy.deepcopy(body)))
        before = copy.deepcopy(body)
        known = len(creates._valid)
        assert _errors(creates.validate(ctx, body)) == want
        assert body == before
        answered += not want and len(creates._valid) == known
    assert answered > 150


def test_one_key_tells_apart_what_scheduling_reads() -> None:
    """A remembered set does not answer for one that differs only in what the scheduling
    validation alone reads: a gate, the replicas its minCount is checked against."""
    creates = StatefulSetCreateMemo(StatefulSetSpecMemo(validate_statefulset_spec), SchedulingMemo())
    ok = _body("gang-1")
    ok["spec"]["scheduling"] = {"schedulingPolicy": {"gang": {"minCount": 9}}}
    ok["spec"]["replicas"] = 12
    user_min = StrategyContext(
        gates=FeatureGate().with_overrides({STATEFULSET_WORKLOAD_USER_MIN_COUNT: True})
    )
    assert creates.validate(user_min, ok) == []
    fewer = copy.deepcopy(ok)
    fewer["spec"]["replicas"] = 3
    for ctx, body in ((StrategyContext(gates=FeatureGate()), ok), (user_min, fewer)):
        want = _errors(validate_statefulset_spec(body["spec"])) + _errors(validate_scheduling(ctx, body))
        assert want
        assert _errors(creates.validate(ctx, body)) == want
