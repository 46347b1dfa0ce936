"""The snapshot's running spreading counts skip nodes whose pods lack a selector's required
labels (``SpreadCounts.required``): after any sequence of cache updates, assumes (indexed now
or deferred), forgets and rollbacks, every kept count equals a count of the snapshot's nodes."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from scheduler.cache import MAX_SPREAD_COUNTS, Cache, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
from scheduler.plugins.pod_topology_spread import _required_triples, count_pods_matching
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ["a", "b", "c", "d", "e"]


def _selectors() -> list[tuple[str, str, Any]]:
    # four selectors on two keys: the eight counts a snapshot keeps alive (MAX_SPREAD_COUNTS)
    out = [
        ("default|app=a", "default", compile_selector({"matchLabels": {"app": "a"}})),
        ("other|app=b", "other", compile_selector({"matchLabels": {"app": "b"}})),
    ]
    tier = compile_selector({"matchLabels": {"app": "a", "tier": "x"}})
    out.append(("default|app=a,tier=x", "default", tier))
    expr = compile_selector({"matchExpressions": [{"key": "app", "operator": "In", "values": ["b", "c"]}]})
    out.append(("default|app in (b,c)", "default", expr))  # no required pairs: never skipped
    return out


def _brute(snap: Snapshot, key: str, ns: str, sel: Any) -> tuple[dict[str, int], dict[str, tuple[str, int]]]:
    by_value: Counter[str] = Counter()
    per_node = {}
    for name, ni in snap.node_info_map.items():
        n = count_pods_matching(ni.pods, sel, ns)
        if n:
            value = ni.labels.get(key, "")
            by_value[value] += n
            per_node[name] = (value, n)
    return dict(by_value), per_node


def _pod(rng: random.Random, name: str, node: str = "") -> dict[str, Any]:
    labels = {"app": rng.choice(APPS)}
    if rng.random() < 0.3:
        labels["tier"] = "x"
    return make_pod(name, namespace=rng.choice(["default", "other"]), uid=name, labels=labels, node_name=node)


@pytest.mark.parametrize("seed", range(8))
def test_running_counts_equal_a_recount_after_any_change(seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    names = [f"n{i:02d}" for i in range(30)]
    for name in names:
        labels = {ZONE: f"z{rng.randrange(3)}"} if rng.random() < 0.9 else {}
        cache.add_node(make_node(name, labels=labels))
    for j in range(40):
        cache.add_pod(_pod(rng, f"e{j}", rng.choice(names)))
    snap = cache.snapshot()
    sels = _selectors()

    assert len(sels) * 2 == MAX_SPREAD_COUNTS

    def counts() -> list[Any]:
        out = []
        for text, ns, sel in sels:
            for key in (ZONE, HOST):
                agg = snap.spread_counts(
                    f"{text}|{key}",
                    key,
                    lambda ni, sel=sel, ns=ns: count_pods_matching(ni.pods, sel, ns),
                    None,
                    _required_triples(sel, ns),
                )
                out.append(((dict(agg.by_value), dict(agg.nodes_counted())), _brute(snap, key, ns, sel)))
        return out

    snap.nodes_with_pod_labels("default", [("app", "a")])  # the pod label index, as PreScore builds it
    assumed: list[tuple[PodInfo, str]] = []
    for step in range(40):
        for got, want in counts():  # the same counts, kept current since step 0
            assert got == want, (seed, step)
        op = rng.random()
        if op < 0.4:
            node = rng.choice(names)
            pi = PodInfo(_pod(rng, f"s{step}", node))
            snap.assume_pod(pi, node, defer_index=rng.random() < 0.3)
            assumed.append((pi, node))
        elif op < 0.55 and assumed:
            pi, node = assumed.pop(rng.randrange(len(assumed)))
            snap.forget_pod(pi, node)
        elif op < 0.7:
            mark = snap.backup()
            for k in range(3):
                node = rng.choice(names)
                snap.assume_pod(PodInfo(_pod(rng, f"r{step}-{k}", node)), node)
            snap.restore(mark)
        else:
            p = _pod(rng, f"c{step}", rng.choice(names))
            cache.add_pod(p)
            if rng.random() < 0.3:
                cache.remove_pod(p)
            cache.update_snapshot(snap)
            assumed.clear()
    for got, want in counts():
        assert got == want


def test_a_node_without_the_required_labels_is_not_recounted() -> None:
    snap = Snapshot([NodeInfo(make_node(f"n{i}", labels={ZONE: "z"})) for i in range(3)])
    sel = compile_selector({"matchLabels": {"app": "a"}})
    calls: list[str] = []

    def count(ni: NodeInfo) -> int:
        calls.append(ni.name)
        return count_pods_matching(ni.pods, sel, "default")

    snap.nodes_with_pod_labels("default", [("app", "a")])
    agg = snap.spread_counts("k", ZONE, count, None, _required_triples(sel, "default"))
    calls.clear()
    snap.assume_pod(PodInfo(make_pod("b", uid="b", labels={"app": "b"}, node_name="n0")), "n0")
    assert calls == [] and agg.by_value == {}
    snap.assume_pod(PodInfo(make_pod("a", uid="a", labels={"app": "a"}, node_name="n1")), "n1")
    assert calls == ["n1"] and agg.by_value == {"z": 1}
