"""PodTopologySpread's PreScore counts a few holders once for the constraints that share them
(session 18, podcycle: ``_counted_nodes`` per holders and count key in ``_score_counts``): on
random clusters, with constraints whose selectors share their required pairs (so the same few
holders) but count different pods, and constraints repeating one selector (kube's default
hostname and zone constraints), every hostname constraint's per-node counts and every zone
constraint's counts are what counting each node's matching pods gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache
from scheduler.framework import CycleState, Handle
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins import pod_topology_spread as pts
from scheduler.testing import make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

#: selectors with the one required pair a=1 (the same few holders), counting different pods
_SELECTORS: list[dict[str, Any]] = [
    {"matchLabels": {"a": "1"}},
    {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["2"]}]},
    {"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]},
]


def _snapshot(rng: random.Random) -> Any:
    cache = Cache()
    names = [f"n{i:02d}" for i in range(rng.randrange(20, 40))]
    for i, n in enumerate(names):
        cache.add_node(make_node(n, labels={HOST: n, ZONE: f"z{i % 4}"}))
    for j in range(rng.randrange(1, 12)):
        labels = {"a": "1"}
        if rng.random() < 0.6:
            labels["c"] = rng.choice(["1", "2"])
        ns = "other" if rng.random() < 0.2 else "default"
        cache.add_pod(make_pod(f"m{j}", ns, uid=f"m{j}", labels=labels, node_name=rng.choice(names[:6])))
    for j in range(rng.randrange(0, 10)):
        cache.add_pod(make_pod(f"o{j}", uid=f"o{j}", labels={"b": "1"}, node_name=rng.choice(names)))
    return cache.snapshot()


def _matching(ni: Any, sel: Any, ns: str) -> int:
    return sum(1 for p in ni.pods if p.namespace == ns and sel.matches(p.labels))


@pytest.mark.parametrize("seed", range(40))
def test_shared_holders_count_as_each_node_counted(seed: int) -> None:
    rng = random.Random(seed)
    snap = _snapshot(rng)
    handle = Handle()
    handle.snapshot = snap
    plugin = pts.PodTopologySpread({}, handle)
    ns = rng.choice(["default", "default", "other"])
    constraints = []
    for _ in range(rng.randrange(2, 5)):
        sel = compile_selector(rng.choice(_SELECTORS))
        constraints.append(pts.Constraint(1, rng.choice([HOST, ZONE]), sel))
    if rng.random() < 0.5:
        constraints.append(
            pts.Constraint(1, HOST if constraints[0].topology_key == ZONE else ZONE, constraints[0].selector)
        )
    pod = PodInfo(make_pod("p", ns, uid="p", labels={"a": "1"}))
    nodes = snap.ordered()
    pairs = [pts._required_pairs(c.selector) for c in constraints]
    keys = [pts._count_key(c.selector, ns) for c in constraints]
    holders = pts._Holders(snap, ns, constraints, pairs)
    counts, _, per_node, _ = plugin._score_counts(
        CycleState(), snap, pod, nodes, constraints, set(), holders, False, keys
    )
    for i, c in enumerate(constraints):
        want_node = {ni.name: _matching(ni, c.selector, ns) for ni in nodes}
        if c.topology_key == HOST:
            got = per_node[i]
            assert got is not None
            assert {n: got.on_node(n) for n in want_node} == want_node, (seed, i)
            assert dict(got.nodes_counted()) == {n: (n, k) for n, k in want_node.items() if k}
        else:
            want_zone: dict[str, int] = {}
            for ni in nodes:
                z = ni.labels[ZONE]
                want_zone[z] = want_zone.get(z, 0) + want_node[ni.name]
            assert counts[i] == want_zone, (seed, i)
