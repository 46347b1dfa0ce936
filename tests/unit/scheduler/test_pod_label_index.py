"""The pod label index against a brute-force model.

A triple held by one node is kept as that node's name rather than a set of one (many triples
are one pod's own, such as a StatefulSet pod's ``pod-name`` label). These tests drive random
rebuilds (:meth:`PodLabelIndex.update`) and deltas (:meth:`PodLabelIndex.apply`), moving
triples between none, one and several nodes, and check every answer against the pods as they are,
and that every node's entries hold the one tuple of each triple (the index's own key): a pod's
labels make fresh tuples, which must not stay behind as copies (long-lived objects per pod).
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from scheduler.cache import PodLabelIndex
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod

NODES = [f"n{i}" for i in range(5)]
PAIRS = [("app", "a"), ("app", "b"), ("tier", "x"), ("tier", "y"), ("pod", "p0"), ("pod", "p1")]


def _random_pod(rng: random.Random, i: int) -> PodInfo:
    labels = dict(rng.sample(PAIRS, rng.randrange(0, 3)))
    return PodInfo(make_pod(f"p{i}", rng.choice(["default", "other"]), labels=labels))


def _truth(infos: dict[str, NodeInfo]) -> dict[tuple[str, str, str], set[str]]:
    out: dict[tuple[str, str, str], set[str]] = {}
    for name, ni in infos.items():
        for p in ni.pods:
            for k, v in p.labels.items():
                out.setdefault((p.namespace, k, v), set()).add(name)
    return out


def _assert_one_tuple_per_triple(idx: PodLabelIndex, infos: dict[str, NodeInfo]) -> None:
    """Each node's counts are its pods' and every key of them is the index's tuple of the triple."""
    assert idx._canon.keys() == idx.nodes.keys()
    assert all(t is c for t, c in idx._canon.items())
    for name, of in idx._of.items():
        counts: dict[tuple[str, str, str], int] = {}
        for p in infos[name].pods:
            for k, v in p.labels.items():
                counts[(p.namespace, k, v)] = counts.get((p.namespace, k, v), 0) + 1
        assert of == counts
        assert all(t is idx._canon[t] for t in of), name


@pytest.mark.parametrize("seed", range(6))
def test_the_index_equals_the_pods_through_rebuilds_and_deltas(seed: int) -> None:
    rng = random.Random(seed)
    idx = PodLabelIndex()
    infos = {n: NodeInfo(make_node(n)) for n in NODES}
    for n in NODES:
        idx.update(n, infos[n])
    made = 0
    for _ in range(200):
        name = rng.choice(NODES)
        ni = infos[name]
        removed = rng.sample(list(ni.pods), min(len(ni.pods), rng.randrange(0, 3)))
        added = [_random_pod(rng, made + j) for j in range(rng.randrange(0, 3))]
        made += len(added)
        for p in removed:
            ni.remove_pod(p.key)
        for p in added:
            ni.add_pod_info(p)
        if rng.random() < 0.3:
            idx.update(name, ni)  # a rebuild of the node's entries
        else:
            idx.apply(name, removed, added)  # the node told its changed pods only
        truth = _truth(infos)
        assert idx.as_sets() == truth
        _assert_one_tuple_per_triple(idx, infos)
        for ns in ("default", "other"):
            for r in (1, 2):
                for pairs in combinations(PAIRS, r):
                    want = set(NODES)
                    for k, v in pairs:
                        want &= truth.get((ns, k, v), set())
                    assert idx.nodes_with(ns, pairs) == want, (ns, pairs)
                    assert idx.any_node_with(ns, pairs) == bool(want), (ns, pairs)
                    for limit in (0, 1, 2):
                        few = idx.nodes_with_at_most(ns, pairs, limit)
                        bound = min(len(truth.get((ns, k, v), set())) for k, v in pairs)
                        assert few == (want if bound <= limit else None), (ns, pairs, limit)


def test_a_triple_on_one_node_is_its_name_and_becomes_a_set_with_a_second() -> None:
    idx = PodLabelIndex()
    a, b = NodeInfo(make_node("a")), NodeInfo(make_node("b"))
    pa = PodInfo(make_pod("pa", labels={"app": "web"}))
    pb = PodInfo(make_pod("pb", labels={"app": "web"}))
    a.add_pod_info(pa)
    idx.apply("a", [], [pa])
    assert idx.nodes[("default", "app", "web")] == "a"
    b.add_pod_info(pb)
    idx.apply("b", [], [pb])
    assert idx.nodes[("default", "app", "web")] == {"a", "b"}
    assert idx.nodes_with("default", [("app", "web")]) == {"a", "b"}
    idx.apply("a", [pa], [])
    assert idx.nodes[("default", "app", "web")] == "b"
    idx.apply("b", [pb], [])
    assert ("default", "app", "web") not in idx.nodes
    assert idx.nodes_with("default", [("app", "web")]) == set()
    with pytest.raises(ValueError):
        idx.nodes_with("default", [])
