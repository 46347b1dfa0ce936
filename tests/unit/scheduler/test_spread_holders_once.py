"""PodTopologySpread's no-match test answered from the cycle's few holders
(:func:`scheduler.plugins.pod_topology_spread._none_match` with ``holders``): the same answer as
asking the pod label index whether any node holds such a pod, and afterwards the same few
holders per constraint as a fresh :class:`_Holders` gives, on random clusters where a selector's
pairs are on no node, on a few nodes, or each on many nodes with or without a node holding them
all (the case the few holders cannot answer)."""

from __future__ import annotations

import random
from typing import Any

from scheduler.cache import Cache
from scheduler.nodeinfo import compile_selector
from scheduler.plugins import pod_topology_spread as pts
from scheduler.testing import make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _cluster(rng: random.Random) -> Any:
    cache = Cache()
    names = [f"n{i:02d}" for i in range(rng.randrange(36, 60))]
    for i, n in enumerate(names):
        cache.add_node(make_node(n, labels={HOST: n, ZONE: f"z{i % 3}"}))
    # pairs spread over many nodes (a=1 on one half, b=1 on the other: no node holds both),
    # and a few pods with both
    for j in range(rng.choice([0, 10, 40, 200])):
        half = names[: len(names) // 2] if j % 2 else names[len(names) // 2 :]
        labels = {"a": "1"} if j % 2 else {"b": "1"}
        if rng.random() < 0.3:
            labels["c"] = rng.choice(["1", "2"])
        node = rng.choice(half)
        ns = "other" if rng.random() < 0.2 else "default"
        cache.add_pod(make_pod(f"m{j}", ns, uid=f"m{j}", labels=labels, node_name=node))
    for j in range(rng.choice([0, 0, 1, 3])):
        cache.add_pod(
            make_pod(f"f{j}", uid=f"f{j}", labels={"a": "1", "b": "1", "c": "3"}, node_name=rng.choice(names))
        )
    return cache.snapshot()


def _constraints(rng: random.Random) -> list[Any]:
    out = []
    for _ in range(rng.randrange(1, 4)):
        pairs = rng.sample(
            [("a", "1"), ("b", "1"), ("c", "1"), ("c", "2"), ("c", "3"), ("d", "1")], rng.randrange(1, 4)
        )
        if rng.random() < 0.3:
            pairs = [("a", "1"), ("b", "1")]  # each pair on many nodes, both on few or none
        sel: dict[str, Any] = {"matchLabels": dict(pairs)}
        if rng.random() < 0.1:
            sel = {"matchExpressions": [{"key": "a", "operator": "Exists"}]}  # no required pair
        c = pts.Constraint(1, rng.choice([HOST, ZONE]), compile_selector(sel))
        out.extend([c] * rng.choice([1, 1, 2]))  # equal pairs in a row: asked once
    return out


def test_no_match_from_the_few_holders_is_the_index_answer() -> None:
    seen: dict[str, int] = {"none": 0, "few": 0, "many-none": 0, "many-some": 0}
    for seed in range(100):
        rng = random.Random(seed)
        snap = _cluster(rng)
        for _ in range(10):
            ns = rng.choice(["default", "other"])
            constraints = _constraints(rng)
            pairs = [pts._required_pairs(c.selector) for c in constraints]
            holders = pts._Holders(snap, ns, constraints, pairs)
            want = pts._none_match(snap, ns, constraints, pairs)
            got = pts._none_match(snap, ns, constraints, pairs, holders)
            assert got == want, (seed, pairs)
            fresh = pts._Holders(snap, ns, constraints, pairs)
            for i in range(len(constraints)):
                assert holders.few(i) == fresh.few(i), (seed, pairs, i)
            for p in {p for p in pairs if p}:
                held = snap.nodes_with_pod_labels_at_most(ns, p, pts.SMALL_HOLDERS)
                anyone = snap.any_node_with_pod_labels(ns, p)
                if held is not None:
                    seen["few" if held else "none"] += 1
                else:
                    seen["many-some" if anyone else "many-none"] += 1
    assert all(v > 20 for v in seen.values()), seen
