"""A Workload's and a PodGroup's create validation remembered per shape
(:mod:`apiserver.registry.strategies.scheduling_memo`).

The memo must be invisible: for random specs that differ from remembered ones in their per-set
names (valid, invalid, empty, of other types), in other fields, in their gates, or that have
errors, it answers exactly what a full validation answers (the same errors, in order), and it
answers a good share of them from memory.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.registry.strategies.scheduling import validate_pod_group_spec, validate_workload_spec
from apiserver.registry.strategies.scheduling_memo import SpecMemo, _pod_group_names, _workload_names
from apiserver.rest.strategy import StrategyContext
from featuregates import FeatureGate

#: per-set names, mostly valid, and the odd ones every rule must still catch
NAMES: list[Any] = [
    "gang-1",
    "gang-2",
    "inner",
    "g.example",
    "Gang",
    "-bad",
    "a" * 64,
    "a" * 254,
    "a/b",
    "",
    7,
    None,
]
GATES = ["CompositePodGroup", "PodGroupPreemptionPolicy", "TopologyAwareWorkloadScheduling"]


def _name(rnd: random.Random) -> Any:
    return rnd.choice(NAMES) if rnd.random() < 0.25 else f"gang-{rnd.randint(0, 999)}"


def _ctx(rnd: random.Random) -> StrategyContext:
    overrides = {g: rnd.random() < 0.7 for g in GATES if rnd.random() < 0.5}
    return StrategyContext(gates=FeatureGate().with_overrides(overrides) if overrides else FeatureGate())


def _policy(rnd: random.Random) -> Any:
    if rnd.random() < 0.1:
        return rnd.choice([{"basic": {}}, {"gang": {"minCount": 0}}, {}, None, {"gang": {"minCount": True}}])
    return {"gang": {"minCount": rnd.choice([3, 3, 3, 5])}}


def _extras(rnd: random.Random, spec: dict[str, Any]) -> None:
    if rnd.random() < 0.1:
        spec["priorityClassName"] = rnd.choice(["high", "Bad_", ""])
    if rnd.random() < 0.1:
        spec["preemptionPolicy"] = rnd.choice(["Never", "Sometimes"])
    if rnd.random() < 0.1:
        spec["disruptionMode"] = rnd.choice([{"single": {}}, {"all": {}}, {}])
    if rnd.random() < 0.05:
        spec["priority"] = rnd.choice([10, 2_000_000_000, "x"])


def pod_group_spec(rnd: random.Random) -> Any:
    if rnd.random() < 0.02:
        return rnd.choice([None, "x", []])
    spec: dict[str, Any] = {"schedulingPolicy": _policy(rnd), "disruptionMode": {"single": {}}}
    if rnd.random() < 0.95:
        ref: Any = {"workloadName": _name(rnd), "templateName": _name(rnd)}
        if rnd.random() < 0.05:
            ref = rnd.choice([{"workloadName": "w"}, "w", {"workloadName": "w", "templateName": "t", "x": 1}])
        spec["workloadRef"] = ref
    if rnd.random() < 0.05:
        spec["parentCompositePodGroupName"] = _name(rnd)
    if rnd.random() < 0.03:
        spec["podGroupTemplateRef"] = {"workloadName": "w"}
    _extras(rnd, spec)
    return spec


def workload_spec(rnd: random.Random) -> Any:
    if rnd.random() < 0.02:
        return rnd.choice([None, "x", []])
    tmpl: dict[str, Any] = {"name": _name(rnd), "schedulingPolicy": _policy(rnd)}
    _extras(rnd, tmpl)
    templates: Any = [tmpl]
    if rnd.random() < 0.08:  # two templates: their names' uniqueness is read
        templates.append({"name": rnd.choice([tmpl["name"], "other"]), "schedulingPolicy": _policy(rnd)})
    if rnd.random() < 0.03:
        templates = rnd.choice([[], ["x"], "x"])
    spec: dict[str, Any] = {
        "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": _name(rnd)},
        "podGroupTemplates": templates,
    }
    if rnd.random() < 0.05:
        spec["controllerRef"] = rnd.choice([None, "x", {"kind": "StatefulSet", "name": "n"}])
    if rnd.random() < 0.15:  # a tree: names unique across it, so a blanked name could hide a repeat
        inner = {"name": rnd.choice(["gang-1", "inner"]), "schedulingPolicy": {"gang": {"minCount": 1}}}
        composite = {
            "name": rnd.choice(["gang-1", "gang-2"]),
            "schedulingPolicy": {"gang": {"minGroupCount": 1}},
        }
        spec["compositePodGroupTemplates"] = rnd.choice([[], [{**composite, "podGroupTemplates": [inner]}]])
    return spec


CASES = [
    (pod_group_spec, validate_pod_group_spec, _pod_group_names),
    (workload_spec, validate_workload_spec, _workload_names),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("case", range(len(CASES)))
def test_memo_answers_what_the_full_validation_answers(seed: int, case: int) -> None:
    make, full, blank = CASES[case]
    memo = SpecMemo(blank)
    rnd = random.Random(seed)
    hits = 0
    for _ in range(1500):
        ctx, spec = _ctx(rnd), make(rnd)
        want = [str(e) for e in full(ctx, spec, None, False)]
        known = memo._key(ctx, spec) in memo._valid
        got = [str(e) for e in memo.validate(ctx, spec, full)]
        assert got == want, spec
        hits += known
        if known:
            assert want == []
    assert hits > 300  # most valid specs are answered from memory


def test_the_memo_never_modifies_the_spec() -> None:
    rnd = random.Random(9)
    for make, full, blank in CASES:
        memo = SpecMemo(blank)
        for _ in range(200):
            spec = make(rnd)
            before = repr(spec)
            memo.validate(_ctx(rnd), spec, full)
            assert repr(spec) == before
