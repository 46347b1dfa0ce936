"""The Score totals kept as one column per pod shape (:mod:`scheduler.score_fusion`) against the
per-plugin array path and the list path: the same hosts, evaluated/feasible counts, FitError
texts and random stream, pod after pod, on random clusters whose nodes take pods, lose them and
change (allocatable, taints), with LeastAllocated or MostAllocated, resource weights and plugin
weights; and a column whose scores leave ``[0, 100]`` sends the cycle to the general path."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import schedule_one, score_fusion
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.interfaces import ScoreColumn
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"

pytestmark = pytest.mark.usefixtures("arrays_on_small_clusters")


def _node(rng: random.Random, i: int, taints: bool) -> dict[str, Any]:
    t = []
    if taints and rng.random() < 0.15:
        t.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
    return make_node(
        f"n{i:03d}",
        cpu=rng.choice(["2", "4", "7500m", "32"]),
        memory=rng.choice(["2Gi", "8Gi", "64Gi"]),
        pods=rng.choice(["4", "110"]),
        labels={ZONE: f"z{rng.randrange(3)}"},
        taints=t or None,
    )


def _pod(rng: random.Random, name: str) -> dict[str, Any]:
    p = make_pod(
        name,
        uid=name,
        labels={"app": rng.choice(["web", "db"])},
        requests=rng.choice(
            [{}, {"cpu": "100m", "memory": "128Mi"}, {"cpu": "1"}, {"memory": "3Gi"}, {"cpu": "250m"}]
        ),
    )
    if rng.random() < 0.1:
        p["spec"]["tolerations"] = [{"key": "soft", "operator": "Exists"}]
    return p


def _framework(handle: Handle, variant: int) -> Framework:
    profile = default_profile()
    if variant == 1:
        profile.plugin_args["NodeResourcesFit"] = {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
            }
        }
    fw = Framework(profile, handle, registry=default_registry())
    if variant == 2:
        fw.score_weights["NodeResourcesFit"] = 3
        fw.score_weights["NodeResourcesBalancedAllocation"] = 2
    return fw


def _cycles(
    seed: int, mode: str, variant: int, taints: bool, other: int | None = None, spread: bool = False
) -> tuple[list[Any], int]:
    """Schedule random pods on a random cluster that changes between cycles; ``mode``: "fused"
    (as shipped), "columns" (the per-plugin array path: fusion refused) or "lists"; with
    ``other``, every second pod goes to a second profile (that variant) over the same snapshot;
    with ``spread``, default spreading counts the ``web`` pods (PodTopologySpread then scores
    with a per-cycle array that the fused path adds to the kept totals)."""
    rng = random.Random(seed)
    cache = Cache()
    nodes = [_node(rng, i, taints) for i in range(rng.randrange(30, 70))]
    for n in nodes:
        cache.add_node(n)
    handle = Handle(rng=random.Random(seed))
    app = "web" if spread else "none"
    handle.default_spread_selector = lambda p: compile_selector({"matchLabels": {"app": app}})
    fws = [_framework(handle, variant)] + ([_framework(handle, other)] if other is not None else [])
    for fw in fws:
        fw.array_scores = mode != "lists"
    real = score_fusion.fused_totals
    fused = 0

    def counted(*args: Any) -> Any:
        nonlocal fused
        if mode != "fused":
            return score_fusion.NOT_FUSED
        out = real(*args)
        fused += out is not score_fusion.NOT_FUSED
        return out

    schedule_one.fused_totals = counted  # type: ignore[assignment]
    try:
        snap = cache.snapshot()
        placed: list[tuple[dict[str, Any], str]] = []
        out: list[Any] = []
        for i in range(150):
            roll = rng.random()
            if roll < 0.15 and placed:  # a pod leaves its node
                pod, host = placed.pop(rng.randrange(len(placed)))
                cache.remove_pod({**pod, "spec": {**pod["spec"], "nodeName": host}})
            elif roll < 0.2:  # a node changes: allocatable, taints
                j = rng.randrange(len(nodes))
                old, nodes[j] = nodes[j], _node(rng, j, taints)
                cache.update_node(old, nodes[j])
            p = _pod(rng, f"p{i}")
            cache.update_snapshot(snap)
            handle.snapshot = snap
            try:
                r = schedule_one.schedule_pod(fws[i % len(fws)], CycleState(), PodInfo(p), snap)
            except Exception as e:  # the FitError text must match too
                out.append((type(e).__name__, str(e)))
                continue
            out.append((r.suggested_host, r.evaluated_nodes, r.feasible_nodes, handle.rng.random()))
            cache.assume_pod(p, r.suggested_host)
            placed.append((p, r.suggested_host))
    finally:
        schedule_one.fused_totals = real  # type: ignore[assignment]
    return out, fused


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("taints", [False, True])
def test_fused_totals_place_pods_as_the_columns_and_the_lists_do(
    seed: int, variant: int, taints: bool
) -> None:
    fused, used = _cycles(seed, "fused", variant, taints)
    columns, _ = _cycles(seed, "columns", variant, taints)
    lists, _ = _cycles(seed, "lists", variant, taints)
    assert fused == columns == lists
    # the fused path decided most cycles (with soft taints TaintToleration has no column form)
    assert taints or used > 20
    assert any(type(o[0]) is str and o[0].startswith("n") for o in fused)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("variant", [0, 2])
@pytest.mark.parametrize("taints", [False, True])
def test_fused_totals_with_spreading_arrays_place_pods_as_the_columns_and_the_lists_do(
    seed: int, variant: int, taints: bool
) -> None:
    fused, used = _cycles(seed, "fused", variant, taints, spread=True)
    columns, _ = _cycles(seed, "columns", variant, taints, spread=True)
    lists, _ = _cycles(seed, "lists", variant, taints, spread=True)
    assert fused == columns == lists
    assert taints or used > 20


def test_the_spreading_array_is_added_to_the_kept_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    """PodTopologySpread's per-cycle array joins the fused totals; one of its scores out of
    ``[0, 100]`` sends the cycle to the general path, which reports it as kube does."""
    rng = random.Random(11)
    cache = Cache()
    for i in range(30):
        cache.add_node(_node(rng, i, False))
    for i in range(12):  # web pods to spread from
        cache.add_pod(
            {
                **make_pod(f"w{i}", uid=f"w{i}", labels={"app": "web"}),
                "spec": {"nodeName": f"n{rng.randrange(30):03d}", "containers": [{"name": "c"}]},
            }
        )
    handle = Handle(rng=random.Random(11))
    handle.default_spread_selector = lambda p: compile_selector({"matchLabels": {"app": "web"}})
    fw = _framework(handle, 0)
    snap = cache.snapshot()
    cache.update_snapshot(snap)
    handle.snapshot = snap
    pi = PodInfo(make_pod("p", uid="p", labels={"app": "web"}, requests={"cpu": "1"}))
    nodes = snap.ordered()[:20]
    state = CycleState()
    assert fw.run_pre_score_plugins(state, pi, nodes) is None
    spread = next(pl for pl in fw.score_plugins if pl.name == "PodTopologySpread")
    column = spread.score_array(state, pi, nodes)  # type: ignore[attr-defined]
    assert column is not None and not isinstance(column, int) and min(column) < max(column)
    got = score_fusion.fused_totals(fw, state, pi, nodes)
    assert got is not score_fusion.NOT_FUSED and list(got) == _sum_of_columns(fw, state, pi, nodes)
    bounded = spread.score_array_bounded(state, pi, nodes)  # type: ignore[attr-defined]
    assert bounded is not None and (bounded[1], bounded[2]) == (min(column), max(column))
    monkeypatch.setattr(type(spread), "score_array", lambda self, st, p, ns: column + 101)
    monkeypatch.setattr(
        type(spread),
        "score_array_bounded",
        lambda self, st, p, ns: (column + 101, min(column) + 101, max(column) + 101),
    )
    assert score_fusion.fused_totals(fw, state, pi, nodes) is score_fusion.NOT_FUSED
    monkeypatch.delattr(type(spread), "score_array_bounded")  # the array alone: its bounds read from it
    assert score_fusion.fused_totals(fw, state, pi, nodes) is score_fusion.NOT_FUSED
    with pytest.raises(schedule_one.SchedulingError, match="PodTopologySpread"):
        schedule_one._totals(fw, state, pi, nodes, True)


@pytest.mark.parametrize("seed", range(4))
def test_two_profiles_weighting_the_same_columns_differently_keep_their_own_totals(seed: int) -> None:
    fused, used = _cycles(seed, "fused", 0, False, other=2)
    assert fused == _cycles(seed, "lists", 0, False, other=2)[0]
    assert used > 20


def test_a_score_out_of_range_takes_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    cache = Cache()
    for i in range(30):
        cache.add_node(_node(rng, i, False))
    handle = Handle(rng=random.Random(7))
    fw = _framework(handle, 0)
    snap = cache.snapshot()
    cache.update_snapshot(snap)
    handle.snapshot = snap
    state = CycleState()
    pi = PodInfo(make_pod("p", uid="p", requests={"cpu": "1"}))
    nodes = snap.ordered()[:20]
    assert fw.run_pre_score_plugins(state, pi, nodes) is None
    fine = score_fusion.fused_totals(fw, state, pi, nodes)
    assert fine is not score_fusion.NOT_FUSED and fine is not None and len(fine) == 20
    real = NodeResourcesFit.score_column

    def beyond(self: Any, state: CycleState, pod_info: PodInfo, nodes: list[Any]) -> ScoreColumn | None:
        spec = real(self, state, pod_info, nodes)
        assert spec is not None
        return ScoreColumn(
            spec.table, spec.rows, ("beyond", spec.key), lambda rows: spec.compute(rows) + 101, spec.rescore
        )

    monkeypatch.setattr(NodeResourcesFit, "score_column", beyond)
    assert score_fusion.fused_totals(fw, state, pi, nodes) is score_fusion.NOT_FUSED


def test_a_plugin_without_a_column_takes_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    cache = Cache()
    for i in range(30):
        cache.add_node(_node(rng, i, False))
    handle = Handle(rng=random.Random(3))
    fw = _framework(handle, 0)
    snap = cache.snapshot()
    cache.update_snapshot(snap)
    handle.snapshot = snap
    pi = PodInfo(make_pod("p", uid="p", requests={"cpu": "1"}))
    nodes = snap.ordered()[:20]
    state = CycleState()
    assert fw.run_pre_score_plugins(state, pi, nodes) is None
    fw.column_scorers = fw.column_scorers - {"NodeResourcesBalancedAllocation"}
    # a plugin with an array but no kept column: its array is added to the kept totals' window
    got = score_fusion.fused_totals(fw, state, pi, nodes)
    assert got is not score_fusion.NOT_FUSED and list(got) == _sum_of_columns(fw, state, pi, nodes)
    # with neither form: the general path
    arrays = fw._array_scorers
    fw._array_scorers = arrays - {"NodeResourcesBalancedAllocation"}
    assert score_fusion.fused_totals(fw, state, pi, nodes) is score_fusion.NOT_FUSED
    fw._array_scorers = arrays
    # a node list that is not a run of the snapshot's table has no column either
    fw.column_scorers = fw.column_scorers | {"NodeResourcesBalancedAllocation"}
    mixed = nodes[::2]
    state = CycleState()
    assert fw.run_pre_score_plugins(state, pi, mixed) is None
    got = score_fusion.fused_totals(fw, state, pi, mixed)
    assert got is score_fusion.NOT_FUSED or list(got) == _sum_of_columns(fw, state, pi, mixed)


def _sum_of_columns(fw: Framework, state: CycleState, pi: PodInfo, nodes: list[Any]) -> list[int]:
    columns, s = fw.score_columns(state, pi, nodes, True)
    assert s is None
    total = [0] * len(nodes)
    for col in columns.values():
        if not isinstance(col, int):
            total = [a + int(b) for a, b in zip(total, col, strict=True)]
    return total
