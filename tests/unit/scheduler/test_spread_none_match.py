"""PodTopologySpread when no pod matches its constraints (the first pod of a new set or gang).

PreScore then leaves the counts to be worked out only if read, and ``uniform_score`` gives
every node the maximum without a column. Both are compared here with the general code on random
clusters: the uniform answer with every node's Score + NormalizeScore, the lazily filled counts
and weights with those PreScore computes when it does not take the shortcut, and whole PodGroup
cycles' chosen nodes with the shortcut turned off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins import pod_topology_spread as pts
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.testing import make_node, make_pod, place_gang

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ["a", "b", "c", "d"]


def _node(rng: random.Random, name: str, unlabelled: float) -> dict[str, Any]:
    labels = {HOST: name}
    if rng.random() >= unlabelled:
        labels[ZONE] = f"z{rng.randrange(5)}"
    return make_node(name, cpu="64", memory="256Gi", labels=labels)


def _pod(name: str, app: str, node: str = "", own: bool = False) -> dict[str, Any]:
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    p = make_pod(name, uid=name, labels={"app": app}, node_name=node, requests={"cpu": "100m"})
    p["metadata"]["ownerReferences"] = owner
    if own:
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 2,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    return p


def _selector(p: dict[str, Any]) -> Any:
    return compile_selector({"matchLabels": {"app": p["metadata"]["labels"]["app"]}})


def _cluster(rng: random.Random, n: int, unlabelled: float, apps: list[str]) -> tuple[Cache, list[str]]:
    cache = Cache()
    names = [f"n{i:04d}" for i in range(n)]
    for name in names:
        cache.add_node(_node(rng, name, unlabelled))
    for j in range(rng.randrange(0, 3 * n)):
        cache.add_pod(_pod(f"e{j}", rng.choice(apps), rng.choice(names)))
    return cache, names


def _plugin_over(cache: Cache, seed: int) -> tuple[Any, pts.PodTopologySpread, list[Any]]:
    """The cluster's snapshot, a PodTopologySpread plugin reading it (default selectors by app)
    and the snapshot's nodes in rotation order."""
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.snapshot = snap
    handle.default_spread_selector = _selector
    return snap, pts.PodTopologySpread({}, handle), snap.ordered()


def _as_list(column: Any, n: int) -> list[int]:
    """A Score column as a list (an array plugin may give one ``int`` for every node)."""
    return [column] * n if isinstance(column, int) else list(map(int, column))


def _general(plugin: pts.PodTopologySpread, state: CycleState, pod: PodInfo, nodes: list[Any]) -> list[int]:
    """Score then NormalizeScore node by node (the plugin's per-node code)."""
    raw = [plugin.score(state, pod, ni)[0] for ni in nodes]
    return plugin.normalize_scores(state, pod, nodes, raw)


@pytest.mark.parametrize("seed", range(24))
def test_uniform_score_and_lazy_counts_equal_the_general_code(seed: int, monkeypatch: Any) -> None:
    rng = random.Random(seed)
    n = rng.choice([8, 30, 90, 200])
    unlabelled = rng.choice([0.0, 0.0, 0.2])
    cache, names = _cluster(rng, n, unlabelled, APPS[:2])
    snap, plugin, ordered = _plugin_over(cache, seed)
    for step in range(12):
        app = rng.choice(APPS)  # "c" and "d" have no pods: no match
        pod = PodInfo(_pod(f"p{seed}-{step}", app, own=rng.random() < 0.25))
        if rng.random() < 0.6:
            start = rng.randrange(n)
            k = rng.randrange(1, n + 1)
            nodes = (ordered[start:] + ordered[:start])[:k]  # a window in rotation
        else:
            nodes = rng.sample(ordered, rng.randrange(1, n + 1))
        state = CycleState()
        assert plugin.pre_score(state, pod, nodes) is None
        s = state.get(pts._PRE_SCORE_KEY)
        matched = any(
            p.namespace == pod.namespace and p.labels.get("app") == app for ni in ordered for p in ni.pods
        )
        assert s.none_match == (not matched)
        u = plugin.uniform_score(state, pod, nodes)
        general = _general(plugin, state, pod, nodes)
        if u is not None:
            assert s.none_match
            assert general == [u] * len(nodes), (seed, step)
        elif s.none_match and not s.ignored_nodes:
            # declined only when some node lacks a key: then the scores really differ
            assert any(any(c.topology_key not in ni.labels for c in s.constraints) for ni in nodes)
        # the lazily filled counts are those PreScore computes without the shortcut
        with monkeypatch.context() as m:
            m.setattr(pts, "_none_match", lambda *a: False)
            eager_state = CycleState()
            assert plugin.pre_score(eager_state, pod, nodes) is None
        e = eager_state.get(pts._PRE_SCORE_KEY)
        assert s.counts == e.counts and s.weights == e.weights, (seed, step)
        assert [x is None for x in s.per_node] == [x is None for x in e.per_node]
        assert [x is None for x in s.domain_counts] == [x is None for x in e.domain_counts]
        assert general == _general(plugin, eager_state, pod, nodes)
        if rng.random() < 0.5:
            host = rng.choice(names)
            snap.assume_pod(PodInfo(_pod(f"a{seed}-{step}", app, host)), host)


def _place_gangs(seed: int, uniform: bool, monkeypatch: Any, small: int = pts.SMALL_HOLDERS) -> list[str]:
    rng = random.Random(seed)
    n = rng.choice([100, 300, 520])
    cache, _ = _cluster(rng, n, 0.0, ["old"])
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = _selector
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    hosts: list[str] = []
    with monkeypatch.context() as m:
        if not uniform:
            m.setattr(pts.PodTopologySpread, "uniform_score", lambda self, *a: None)
        m.setattr(pts, "SMALL_HOLDERS", small)
        for k in range(12):
            app = f"g{k}"
            size = rng.choice([1, 2, 3, 5])
            members = [PodInfo(_pod(f"{app}-{i}", app)) for i in range(size)]
            hosts += place_gang(cache, snap, algorithm, app, members)
    return hosts


@pytest.mark.parametrize("seed", range(4))
def test_gangs_choose_the_same_nodes_with_and_without_the_uniform_score(seed: int, monkeypatch: Any) -> None:
    assert _place_gangs(seed, True, monkeypatch) == _place_gangs(seed, False, monkeypatch)


@pytest.mark.parametrize("seed", range(4))
def test_gangs_choose_the_same_nodes_counting_few_holders_or_from_running_counts(
    seed: int, monkeypatch: Any
) -> None:
    assert _place_gangs(seed, True, monkeypatch) == _place_gangs(seed, False, monkeypatch, small=0)


@pytest.mark.parametrize("seed", range(16))
def test_counts_from_a_few_holders_equal_the_snapshots_running_counts(seed: int, monkeypatch: Any) -> None:
    """A selector whose pods sit on at most ``SMALL_HOLDERS`` nodes is counted by PreScore from
    those nodes; with the threshold at 0 the snapshot's running counts answer: the same counts,
    weights and columns (per node, fused, and over the node table)."""
    rng = random.Random(seed)
    n = rng.choice([40, 90, 200])
    cache, names = _cluster(rng, n, rng.choice([0.0, 0.1]), APPS[:1])  # "a" on many nodes
    snap, plugin, ordered = _plugin_over(cache, seed)
    for step in range(14):
        app = rng.choice(APPS)
        pod = PodInfo(_pod(f"p{seed}-{step}", app))
        start = rng.randrange(n)
        nodes = (ordered[start:] + ordered[:start])[: rng.randrange(1, n + 1)]
        few = CycleState()
        assert plugin.pre_score(few, pod, nodes) is None
        with monkeypatch.context() as m:
            m.setattr(pts, "SMALL_HOLDERS", 0)
            m.setattr(pts, "_none_match", lambda *a: False)
            kept = CycleState()
            assert plugin.pre_score(kept, pod, nodes) is None
            s, k = few.get(pts._PRE_SCORE_KEY), kept.get(pts._PRE_SCORE_KEY)
            assert s.counts == k.counts and s.weights == k.weights, (seed, step)
            for a, b in zip(s.per_node, k.per_node, strict=True):
                assert (a is None) == (b is None)
                if a is not None:
                    assert dict(a.nodes_counted()) == dict(b.nodes_counted())
            want = plugin.score_nodes(kept, pod, nodes)
            want_array = plugin.score_array(kept, pod, nodes)
        assert plugin.score_nodes(few, pod, nodes) == want, (seed, step)
        assert _general(plugin, few, pod, nodes) == plugin.normalize_scores(kept, pod, nodes, want)
        got_array = plugin.score_array(few, pod, nodes)
        assert (got_array is None) == (want_array is None)
        if got_array is not None:
            assert _as_list(got_array, len(nodes)) == _as_list(want_array, len(nodes)), (seed, step)
        for _ in range(rng.randrange(0, 4)):
            host = rng.choice(names)
            snap.assume_pod(
                PodInfo(_pod(f"a{seed}-{step}-{_}", app, host)), host, defer_index=rng.random() < 0.5
            )
