"""Placements decided by capacity without a pod cycle (scheduler/placement_certain.py).

On random clusters the PodGroup algorithm chooses the same placement, the same node per pod and
the same failure text with and without the decisions (ties broken alike, since a decided
placement draws no random numbers), and every decided placement, evaluated pod by pod, is
feasible with every pod placed and the score that was computed for it. Groups the arithmetic
cannot speak for (different pods, a nominated pod, a Filter that reads the node's pods, room
for fewer than all the pods) are evaluated as before.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from scheduler.cache import Cache
from scheduler.interfaces import CycleState, Placement
from scheduler.placement_certain import CertainPlacements
from scheduler.podgroup_algorithm import PodGroupAlgorithm, _shared_signatures
from scheduler.records.recorder import Recorder
from scheduler.testing import make_node, make_pod
from tests.unit.scheduler.test_placement_capacity import (
    GPU,
    RACK,
    FirstOfTies,
    cache_with,
    framework_for,
    group_info,
    member,
    outcome,
    pg,
)

NO_SCHEDULE = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
SOFT = {"key": "soft", "value": "y", "effect": "PreferNoSchedule"}


def random_case(seed: int) -> tuple[Cache, list[Obj]]:
    """Racks of random nodes (some tainted, some cordoned, some partly used) and a group of
    mostly identical pods, sometimes tolerating the taint, sometimes asking for a GPU."""
    rnd = random.Random(seed)
    racks = rnd.randint(2, 6)
    nodes, bound = [], []
    for i in range(rnd.randint(4, 30)):
        r = rnd.random()
        taints = [NO_SCHEDULE] if r < 0.1 else [SOFT] if r < 0.2 else None
        nodes.append(
            make_node(
                f"n{i:02d}",
                cpu=str(rnd.randint(1, 8)),
                memory=f"{rnd.randint(1, 8)}Gi",
                pods=str(rnd.randint(1, 8)),
                labels={RACK: f"r{rnd.randrange(racks)}"} if rnd.random() < 0.9 else {},
                taints=taints,
                unschedulable=rnd.random() < 0.05,
                extra={GPU: str(rnd.randint(0, 2))} if rnd.random() < 0.3 else None,
            )
        )
        for j in range(rnd.randint(0, 3)):
            bound.append(
                make_pod(f"b{i}-{j}", requests={"cpu": f"{rnd.randint(0, 3000)}m"}, node_name=f"n{i:02d}")
            )
    size = rnd.randint(1, 14)
    min_count = rnd.choice([None, rnd.randint(1, size), size])
    requests = {"cpu": f"{rnd.randint(100, 2000)}m", "memory": f"{rnd.randint(64, 1024)}Mi"}
    if rnd.random() < 0.15:
        requests[GPU] = "1"
    tolerations = [{"key": "dedicated", "operator": "Exists"}] if rnd.random() < 0.3 else None
    odd = rnd.randrange(size) if rnd.random() < 0.15 else -1  # one pod unlike the others
    pods = [
        member(
            f"m{k}",
            requests={**requests, "cpu": "50m"} if k == odd else requests,
            tolerations=tolerations,
        )
        for k in range(size)
    ]
    return cache_with(nodes, pg(min_count), bound), pods


def _run(c: Cache, pods: list[Obj], decide: bool) -> Any:
    fw = framework_for(c, rng=FirstOfTies())
    return PodGroupAlgorithm(fw, decide_certain=decide).run(CycleState(), group_info(c, pods), c.snapshot())


@pytest.mark.parametrize("seed", range(250))
def test_random_clusters_decide_as_the_full_search(seed: int) -> None:
    c, pods = random_case(seed)
    decided = _run(c, pods, True)
    full = _run(c, pods, False)
    assert not full.decided
    assert outcome(c, pods, decided) == outcome(c, pods, full)
    if decided.success:
        assert decided.placement.score == full.placement.score
    # every decided placement is what its evaluation finds: all pods placed, the same score
    snap = c.snapshot()
    fw = framework_for(c, rng=FirstOfTies())
    algo = PodGroupAlgorithm(fw)
    group = group_info(c, pods)
    for d in decided.decided:
        mark = snap.backup()
        snap.scope = snap.domains(RACK).domains[d.placement.value]
        try:
            tried = algo.evaluate(CycleState(), group, d.placement, snap)
            assert tried.feasible and len(tried.fitting()) == d.fit == len(pods), d.placement.name
            score, s = fw.run_placement_score_plugins(CycleState(), group, tried, snap)
            assert s is None and score == d.score, d.placement.name
            assert score <= decided.placement.score
        finally:
            snap.restore(mark)
            snap.scope = None


def test_random_clusters_do_decide_placements_and_leave_others_to_the_search() -> None:
    decided = undecided = 0
    for seed in range(250):
        c, pods = random_case(seed)
        r = _run(c, pods, True)
        if r.success and len(r.evaluated) + len(r.decided) > 1:
            if r.decided:
                decided += 1
            else:
                undecided += 1
    assert decided >= 10 and undecided >= 10


def _racks(n: int = 3, per_rack: int = 4, **kw: Any) -> list[Obj]:
    return [
        make_node(f"n{r}{i}", cpu="4", labels={RACK: f"r{r}"}, **kw)
        for r in range(n)
        for i in range(per_rack)
    ]


def test_empty_racks_after_the_first_are_decided_and_listed_in_the_scheduling_record() -> None:
    c = cache_with(_racks(), pg(8))
    pods = [member(f"m{k}", requests={"cpu": "1"}) for k in range(8)]
    r = _run(c, pods, True)
    assert r.success and r.placement.placement.name == "r0"
    assert [e.placement.name for e in r.evaluated] == ["r0"]
    assert [(d.placement.name, d.fit, d.score) for d in r.decided] == [
        ("r1", 8, r.placement.score),
        ("r2", 8, r.placement.score),
    ]
    records = Recorder(None, None)  # type: ignore[arg-type]  # kept in memory
    listed = records._placements(r.evaluated, r.skipped, r.placement, r.decided)
    assert [(p["name"], p["outcome"]) for p in listed] == [
        ("r0", "Chosen"),
        ("r1", "Dropped"),
        ("r2", "Dropped"),
    ]
    assert "computed from the domain's free capacity" in listed[1]["why"]


def test_a_rack_that_would_score_higher_is_evaluated_and_chosen() -> None:
    # r2 is partly used: the tightest fit, so it is evaluated (and wins) though r1 was decided
    c = cache_with(
        _racks(), pg(4), [make_pod(f"b{i}", requests={"cpu": "2"}, node_name=f"n2{i}") for i in range(4)]
    )
    pods = [member(f"m{k}", requests={"cpu": "1"}) for k in range(4)]
    r = _run(c, pods, True)
    assert [e.placement.name for e in r.evaluated] == ["r0", "r2"]
    assert [d.placement.name for d in r.decided] == ["r1"]
    assert r.placement.placement.name == "r2"
    assert outcome(c, pods, r) == outcome(c, pods, _run(c, pods, False))


def _decide(c: Cache, pods: list[Obj], value: str = "r1") -> Any:
    fw = framework_for(c)
    group = group_info(c, pods)
    certain = CertainPlacements.of(fw, group, _shared_signatures(fw, group.pods))
    if certain is None:
        return None
    snap = c.snapshot()
    names = snap.domains(RACK).domains[value].node_names()
    return certain.decide(Placement(value, names, RACK, value), snap)


def test_what_the_arithmetic_cannot_speak_for_is_left_to_the_search() -> None:
    c = cache_with(_racks(), pg(4))
    same = [member(f"m{k}", requests={"cpu": "1"}) for k in range(4)]
    assert _decide(c, same) is not None
    # pods unlike each other
    assert _decide(c, [*same[:3], member("m3", requests={"cpu": "2"})]) is None
    # a nominated pod (a Filter would count it on its node)
    assert _decide(c, [*same[:3], member("m3", requests={"cpu": "1"}, nominated_node_name="n10")]) is None
    # a Filter that reads the node's pods: a hard spreading constraint
    spread = [member(f"s{k}", requests={"cpu": "1"}, labels={"app": "s"}) for k in range(4)]
    for p in spread:
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "s"}},
            }
        ]
    assert _decide(c, spread) is None
    # a pod with required anti-affinity anywhere: whether it repels a member reads the member's labels
    guard = make_pod("guard", node_name="n00")
    guard["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"role": "x"}}, "topologyKey": RACK}
            ]
        }
    }
    assert _decide(cache_with(_racks(), pg(4), [guard]), same) is None
    # room for fewer than all the pods: 4 nodes of 4 cpu hold 16 of 17
    many = [member(f"m{k}", requests={"cpu": "1"}) for k in range(17)]
    assert _decide(cache_with(_racks(), pg(4)), many) is None


def test_nodes_a_node_only_filter_rejects_hold_no_pods() -> None:
    # r1: two of its four nodes carry a taint the pods do not tolerate, so 8 cpu for 8 pods
    nodes = _racks(2) + [
        make_node(f"t{i}", cpu="4", labels={RACK: "r1"}, taints=[NO_SCHEDULE]) for i in range(2)
    ]
    c = cache_with(nodes, pg(8))
    fits = [member(f"m{k}", requests={"cpu": "1"}) for k in range(16)]
    assert _decide(c, fits) is not None
    assert _decide(c, [*fits, member("m16", requests={"cpu": "1"})]) is None
