"""PodTopologySpread's Score column gathered per domain when a few nodes hold counted pods
(``spread_arrays.few_counted_array``: a small gang's or a new set's siblings).

Compared on random clusters (zones missing on some nodes, hostnames missing on a few, pods of
several apps, windows in rotation, wrapped around, or any subset of nodes) with the column
built node by node in arrays (``fused_array``) and with the plugin's per-node Score +
NormalizeScore; and whole PodGroup cycles choose the same nodes with the path turned off.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins import pod_topology_spread as pts
from scheduler.plugins import spread_arrays
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.testing import make_node, make_pod, place_gang

ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"
SLOT = "example.com/slot"  # many values: more domains in a window than are gathered by domain
HOST = "kubernetes.io/hostname"


def _node(rng: random.Random, name: str, unzoned: float, unhosted: float) -> dict[str, Any]:
    labels = {RACK: f"r{rng.randrange(7)}", SLOT: f"s{rng.randrange(150)}"}
    if rng.random() >= unhosted:
        labels[HOST] = name
    if rng.random() >= unzoned:
        labels[ZONE] = f"z{rng.randrange(5)}"
    return make_node(name, cpu="64", memory="256Gi", labels=labels)


def _own(app: str, keys: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "maxSkew": 1 + i,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": app}},
        }
        for i, key in enumerate(keys)
    ]


def _pod(name: str, app: str, node: str = "", own: list[str] | None = None) -> dict[str, Any]:
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    p = make_pod(name, uid=name, labels={"app": app}, node_name=node, requests={"cpu": "100m"})
    p["metadata"]["ownerReferences"] = owner
    if own:
        p["spec"]["topologySpreadConstraints"] = _own(app, own)
    return p


def _selector(p: dict[str, Any]) -> Any:
    return compile_selector({"matchLabels": {"app": p["metadata"]["labels"]["app"]}})


def _general(plugin: pts.PodTopologySpread, state: CycleState, pod: PodInfo, nodes: list[Any]) -> list[int]:
    """Score then NormalizeScore node by node (the plugin's per-node code)."""
    raw = [plugin.score(state, pod, ni)[0] for ni in nodes]
    return list(plugin.normalize_scores(state, pod, nodes, raw))


@pytest.mark.parametrize("small", [pts.SMALL_HOLDERS, 0])
@pytest.mark.parametrize("seed", range(20))
def test_few_counted_column_equals_the_per_node_ones(seed: int, small: int, monkeypatch: Any) -> None:
    running = _compare_columns(seed, small, monkeypatch)
    if not small:
        assert running, seed  # the snapshot's running per-domain counts are read too


def test_the_normalized_column_is_gathered_and_declined_both(monkeypatch: Any) -> None:
    """The normalized column gathered without the raw one (no counted node in the window), as a
    column and as one score for every node, and declined (work from the raw column): all three
    are among the cases compared."""
    fast: list[Any] = []
    gather = spread_arrays._few_counted_normalized

    def counted(*a: Any) -> Any:
        got = gather(*a)
        fast.append(got)
        return got

    monkeypatch.setattr(spread_arrays, "_few_counted_normalized", counted)
    monkeypatch.setattr(spread_arrays, "_small_normalized", lambda *a: None)  # the path before it
    for seed in range(8):
        _compare_columns(seed, pts.SMALL_HOLDERS, monkeypatch)
    assert any(x is None for x in fast)
    assert any(x is not None and isinstance(x[0], int) for x in fast)
    assert any(x is not None and not isinstance(x[0], int) for x in fast)


def test_the_small_normalized_column_is_taken_and_declined(monkeypatch: Any) -> None:
    """The per-domain Python path for a sibling's default spreading (``_small_normalized``) gives
    a column, one score for every node, and declines (a counted node in the window, a wrapped or
    mapped window, unlabelled nodes, other keys): all are among the cases compared, and where it
    answers, its column and bounds are those of the array path it stands in for."""
    small = spread_arrays._small_normalized
    answers: list[Any] = []

    def compared(table: Any, rows: Any, s: Any, count: int) -> Any:
        got = small(table, rows, s, count)
        answers.append(got)
        if got is not None:
            with monkeypatch.context() as m:
                m.setattr(spread_arrays, "_small_normalized", lambda *a: None)
                want = spread_arrays.normalized_array_bounded(s, table, rows, count)
            assert want is not None
            col, lo, hi = got
            if isinstance(want[0], int):
                assert col == want[0]
            else:
                np.testing.assert_array_equal(col, want[0])
            assert (lo, hi) == (want[1], want[2])
        return got

    monkeypatch.setattr(spread_arrays, "_small_normalized", compared)
    for seed in range(10):
        _compare_columns(seed, pts.SMALL_HOLDERS, monkeypatch)
    assert any(x is None for x in answers)
    assert any(x is not None and isinstance(x[0], int) for x in answers)
    assert sum(x is not None and not isinstance(x[0], int) for x in answers) >= 5


def _compare_columns(seed: int, small: int, monkeypatch: Any) -> int:
    """Compare the columns over random windows; how many read the running per-domain counts."""
    # small = 0: PreScore reads the snapshot's running counts even for a set on a few nodes
    monkeypatch.setattr(pts, "SMALL_HOLDERS", small)
    rng = random.Random(seed)
    n = rng.choice([70, 130, 260])
    unzoned = rng.choice([0.0, 0.0, 0.15])
    unhosted = rng.choice([0.0, 0.0, 0.0, 0.05])
    cache = Cache()
    names = [f"n{i:04d}" for i in range(n)]
    for name in names:
        cache.add_node(_node(rng, name, unzoned, unhosted))
    # "big" on many nodes (beyond the path), "few" on a handful, "one" on one node, "none" nowhere
    for j in range(rng.randrange(n, 3 * n)):
        cache.add_pod(_pod(f"b{j}", "big", rng.choice(names)))
    for j in range(rng.randrange(1, 12)):
        cache.add_pod(_pod(f"f{j}", "few", rng.choice(names[: rng.randrange(1, n)])))
    cache.add_pod(_pod("o0", "one", rng.choice(names)))
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.snapshot = snap
    handle.default_spread_selector = _selector
    plugin = pts.PodTopologySpread({}, handle)
    ordered = snap.ordered()
    taken = running = 0
    for step in range(25):
        app = rng.choice(["big", "few", "few", "one", "none"])
        own = rng.choice(
            [None, None, None, [HOST], [ZONE], [HOST, ZONE], [ZONE, HOST], [HOST, RACK, ZONE], [HOST, SLOT]]
        )
        pod = PodInfo(_pod(f"p{seed}-{step}", app, own=own))
        table = snap.node_table()
        shape = rng.random()
        if shape < 0.4:
            start = rng.randrange(n)
            k = rng.randrange(64, n + 1)
            nodes = (ordered[start:] + ordered[:start])[:k]  # a window in rotation, maybe wrapped
        elif shape < 0.6:
            nodes = list(ordered)
        else:
            nodes = rng.sample(ordered, rng.randrange(1, n + 1))
        rows = table.rows_of(nodes)
        # the no-match test asking once per run of equal pairs is the test asking per constraint
        constraints = plugin._constraints(pod, "ScheduleAnyway")
        per_constraint = not any(
            snap.any_node_with_pod_labels(pod.namespace, pts._required_pairs(c.selector)) for c in constraints
        ) and all(pts._required_pairs(c.selector) for c in constraints)
        assert pts._none_match(snap, pod.namespace, constraints) == (bool(constraints) and per_constraint)
        state = CycleState()
        if plugin.pre_score(state, pod, nodes) is not None or rows is None:
            continue
        s = state.get(pts._PRE_SCORE_KEY)
        if s.none_match:
            s._got()  # the counts the uniform shortcut leaves unread
        few = spread_arrays.few_counted_array(table, rows, s, len(nodes))
        fused = spread_arrays.fused_array(table, rows, s, len(nodes))
        if few is None:
            continue
        taken += 1
        running += any(x is not None for x in s.domain_counts)
        assert fused is not None
        np.testing.assert_array_equal(few, fused)
        norm = spread_arrays.normalized_array(s, table, rows, len(nodes))
        got = [norm] * len(nodes) if isinstance(norm, int) else norm.tolist()
        assert got == _general(plugin, state, pod, nodes), (seed, step)
        # the bounds handed to the fused totals are the column's own
        bounded = spread_arrays.normalized_array_bounded(s, table, rows, len(nodes))
        assert bounded is not None
        assert got == ([bounded[0]] * len(nodes) if isinstance(bounded[0], int) else bounded[0].tolist())
        assert (bounded[1], bounded[2]) == (min(got), max(got)), (seed, step)
        # the plugin's two forms answer alike (both None where the cycle has no table)
        plain, with_bounds = (
            plugin.score_array(state, pod, nodes),
            plugin.score_array_bounded(state, pod, nodes),
        )
        assert (plain is None) == (with_bounds is None)
        if with_bounds is not None:
            np.testing.assert_array_equal(plain, with_bounds[0])
        if rng.random() < 0.5:  # a sibling assumed: one more counted node
            host = rng.choice(names)
            snap.assume_pod(PodInfo(_pod(f"a{seed}-{step}", app, host)), host, defer_index=rng.random() < 0.5)
    if not unhosted:
        assert taken >= 3, seed  # the path is exercised, not only declined
    return running


def _place_gangs(seed: int, few: bool, monkeypatch: Any) -> list[str]:
    rng = random.Random(seed)
    n = rng.choice([100, 300, 520])
    cache = Cache()
    names = [f"n{i:04d}" for i in range(n)]
    for name in names:
        cache.add_node(_node(rng, name, rng.choice([0.0, 0.1]), 0.0))
    for j in range(rng.randrange(0, 2 * n)):
        cache.add_pod(_pod(f"e{j}", "old", rng.choice(names)))
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = _selector
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    hosts: list[str] = []
    with monkeypatch.context() as m:
        if not few:
            m.setattr(spread_arrays, "few_counted_array", lambda *a: None)
        for k in range(14):
            app = rng.choice([f"g{k}", f"g{k}", "old"])  # "old": pods on many nodes
            size = rng.choice([1, 2, 3, 5, 9])
            members = [PodInfo(_pod(f"{app}-{k}-{i}", app)) for i in range(size)]
            hosts += place_gang(cache, snap, algorithm, f"pg{k}", members)
    return hosts


@pytest.mark.parametrize("seed", range(5))
def test_gangs_choose_the_same_nodes_with_and_without_the_few_counted_column(
    seed: int, monkeypatch: Any
) -> None:
    assert _place_gangs(seed, True, monkeypatch) == _place_gangs(seed, False, monkeypatch)


def test_selector_facts_are_those_of_each_selector_per_namespace() -> None:
    """PreScore's remembered required pairs and count keys of a shared constraint list are what
    the selectors give, per namespace; a pod's own constraints are not remembered."""
    handle = Handle(rng=random.Random(0))
    handle.default_spread_selector = _selector
    plugin = pts.PodTopologySpread({}, handle)
    for app in ("a", "b", "a"):
        for ns in ("default", "other"):
            pod = PodInfo(_pod(f"{app}-0", app))
            constraints = plugin._constraints(pod, "ScheduleAnyway")
            assert len(constraints) == 2
            want = (
                [pts._required_pairs(c.selector) for c in constraints],
                [pts._count_key(c.selector, ns) for c in constraints],
            )
            assert plugin._selector_facts(constraints, ns) == want
            assert plugin._selector_facts(constraints, ns) == want  # remembered
            assert all(f"|{ns}|" in k for k in want[1])
    remembered = len(plugin._facts)
    own = PodInfo(_pod("o-0", "a", own=[HOST, ZONE]))
    cache = Cache()
    cache.add_node(_node(random.Random(0), "n1", 0.0, 0.0))
    handle.snapshot = cache.snapshot()
    state = CycleState()
    assert plugin.pre_score(state, own, handle.snapshot.list()) is None
    assert state.get(pts._PRE_SCORE_KEY).constraints  # PreScore ran with the pod's own constraints
    assert len(plugin._facts) == remembered
    default = PodInfo(_pod("d-0", "c"))
    assert plugin.pre_score(CycleState(), default, handle.snapshot.list()) is None
    assert len(plugin._facts) == remembered + 1


@pytest.mark.parametrize("seed", range(5))
def test_selector_facts_worked_out_once_per_selector_are_each_constraints(seed: int) -> None:
    """Random constraint lists, a selector shared by neighbours or not, selectors of every kind:
    the facts worked out once per run of one selector are each constraint's own."""
    rng = random.Random(seed)
    plugin = pts.PodTopologySpread({}, Handle(rng=random.Random(0)))
    sels = [
        compile_selector({"matchLabels": {"app": "a"}}),
        compile_selector({"matchLabels": {"app": "b", "tier": "x"}}),
        compile_selector({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
        pts._AllOf([compile_selector({"matchLabels": {"app": "c"}})]),
        pts._MergedSelector(compile_selector({"matchLabels": {"app": "a"}}), {"rev": "1"}),
        pts.build_default_selector({"metadata": {"labels": {}}}, [], {"matchLabels": {"app": "d"}}),
    ]
    for _ in range(200):
        constraints = []
        for _ in range(rng.randint(1, 4)):
            sel = constraints[-1].selector if constraints and rng.random() < 0.5 else rng.choice(sels)
            key = rng.choice([pts.LABEL_HOSTNAME, pts.LABEL_ZONE])
            constraints.append(pts.Constraint(rng.randint(1, 5), key, sel))
        ns = rng.choice(["default", "other"])
        want = (
            [pts._required_pairs(c.selector) for c in constraints],
            [pts._count_key(c.selector, ns) for c in constraints],
        )
        assert plugin._selector_facts(constraints, ns, remember=False) == want
        assert plugin._selector_facts(constraints, ns) == want
