"""The scheduling cycle's array path for Score totals (``Framework.array_scores``) against the
list path: the same hosts, the same evaluated/feasible counts, the same FitError text and the
same random stream, pod after pod, for plain pods, spread pods and gangs on random clusters."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import schedule_one, score_totals
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.plugins.pod_topology_spread import PodTopologySpread
from scheduler.testing import gang_set_pods, make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
RACK = "topology.kubernetes.io/rack"


pytestmark = pytest.mark.usefixtures("arrays_on_small_clusters")


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    labels = {RACK: f"r{i % 5}"}
    if rng.random() < 0.9:
        labels[ZONE] = f"z{rng.randrange(3)}"
    taints = []
    if rng.random() < 0.1:
        taints.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
    return make_node(
        f"n{i:03d}",
        cpu=rng.choice(["2", "4", "7500m", "32"]),
        memory=rng.choice(["2Gi", "8Gi", "64Gi"]),
        pods=rng.choice(["3", "110"]),
        labels=labels,
        taints=taints or None,
    )


def _pod(rng: random.Random, name: str) -> dict[str, Any]:
    app = rng.choice(["web", "web", "db", "batch"])
    p = make_pod(
        name,
        uid=name,
        labels={"app": app},
        requests=rng.choice([{}, {"cpu": "100m", "memory": "128Mi"}, {"cpu": "1"}, {"memory": "3Gi"}]),
    )
    if rng.random() < 0.25:
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice([1, 2]),
                "topologyKey": rng.choice([ZONE, "kubernetes.io/hostname"]),
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if rng.random() < 0.1:
        p["spec"]["tolerations"] = [{"key": "soft", "operator": "Exists"}]
    return p


def _world(seed: int, nodes: int, taints: bool = True) -> tuple[Cache, Handle, Framework]:
    rng = random.Random(seed)
    cache = Cache()
    for i in range(nodes):
        n = _node(rng, i)
        if not taints:
            n["spec"].pop("taints", None)
        cache.add_node(n)
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"].get("app", "")}}
    )
    return cache, handle, Framework(default_profile(), handle, registry=default_registry())


def _pod_cycles(seed: int, arrays: bool, taints: bool) -> list[Any]:
    cache, handle, fw = _world(seed, 60, taints)
    fw.array_scores = arrays
    rng = random.Random(1000 + seed)
    snap = cache.snapshot()
    out: list[Any] = []
    for i in range(120):
        p = _pod(rng, f"p{i}")
        cache.update_snapshot(snap)
        handle.snapshot = snap
        try:
            r = schedule_one.schedule_pod(fw, CycleState(), PodInfo(p), snap)
        except Exception as e:  # the FitError text must match too
            out.append((type(e).__name__, str(e)))
            continue
        out.append((r.suggested_host, r.evaluated_nodes, r.feasible_nodes, handle.rng.random()))
        cache.assume_pod(p, r.suggested_host)
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("taints", [False, True])
def test_pods_are_placed_alike_with_and_without_array_totals(seed: int, taints: bool) -> None:
    with_arrays = _pod_cycles(seed, True, taints)
    assert with_arrays == _pod_cycles(seed, False, taints)
    assert any(len(o) == 4 for o in with_arrays)


def _gang_cycles(seed: int, arrays: bool) -> list[Any]:
    from scheduler.interfaces import PodGroupInfo
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState

    cache, handle, fw = _world(seed, 50)
    fw.array_scores = arrays
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    out: list[Any] = []
    for g in range(25):
        app = f"g{g}"
        pods = [PodInfo(p) for p in gang_set_pods(app)]
        spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": 3}}}
        if g % 3 == 0:
            spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
        pg = {"metadata": {"name": app, "namespace": "default"}, "spec": spec}
        cache.update_snapshot(snap)
        result = algorithm.run(CycleState(), PodGroupInfo("default", app, pg, pods, PodGroupState(app)), snap)
        assert result.success
        assert result.placement is not None
        placed = [(a.pod_info.name, a.node_name) for a in result.placement.fitting()]
        out.append((placed, handle.rng.random()))
        for a in result.placement.fitting():
            cache.assume_pod(a.pod_info.pod, a.node_name)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_gangs_are_placed_alike_with_and_without_array_totals(seed: int) -> None:
    assert _gang_cycles(seed, True) == _gang_cycles(seed, False)


@pytest.mark.parametrize("seed", range(20))
def test_the_array_pick_draws_as_the_list_pick(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(1, 40)
    totals = [rng.choice([0, 5, 7, 300]) for _ in range(n)]
    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(n)]
    handle = Handle(rng=random.Random(seed))
    fw = Framework(default_profile(), handle, registry=default_registry())
    listed = schedule_one.select_from_totals(fw, nodes, totals)
    after_list = handle.rng.getstate()
    handle.rng = random.Random(seed)
    assert schedule_one.select_from_totals(fw, nodes, score_totals.add_columns([totals])) == listed
    assert handle.rng.getstate() == after_list
    # every node with the same total: the uniform answer (None) draws as a column of zeros does
    handle.rng = random.Random(seed)
    zeros = schedule_one.select_from_totals(fw, nodes, [0] * n)
    after_zeros = handle.rng.getstate()
    handle.rng = random.Random(seed)
    assert schedule_one.select_from_totals(fw, nodes, None) == zeros
    assert handle.rng.getstate() == after_zeros


@pytest.mark.parametrize("seed", range(6))
def test_plugin_arrays_equal_their_scored_and_normalized_lists(seed: int) -> None:
    cache, handle, _ = _world(seed, 40)
    rng = random.Random(seed)
    for j in range(60):
        target = f"n{rng.randrange(40):03d}"
        cache.add_pod(make_pod(f"e{j}", uid=f"e{j}", node_name=target, labels={"app": "web"}))
    snap = cache.snapshot()
    handle.snapshot = snap
    plugins = [NodeResourcesFit({}, handle), BalancedAllocation({}, handle), PodTopologySpread({}, handle)]
    ordered = snap.ordered()
    for step in range(10):
        start = rng.randrange(len(ordered))
        window = (ordered[start:] + ordered[:start])[: rng.randrange(8, len(ordered))]
        pi = PodInfo(_pod(rng, f"q{step}"))
        for pl in plugins:
            state = CycleState()
            if pl.pre_score(state, pi, window) is not None:
                continue
            arr = pl.score_array(state, pi, window)
            listed = pl.score_nodes(state, pi, window)
            if hasattr(pl, "normalize_scores"):
                listed = pl.normalize_scores(state, pi, window, listed)
            if isinstance(arr, int):  # every node the same score
                assert listed == [arr] * len(window), (pl.name, seed, step)
            elif arr is not None:
                assert arr.tolist() == listed, (pl.name, seed, step)
        assert [pl.score_array(CycleState(), pi, window[:3]) for pl in plugins] == [None, None, None]
