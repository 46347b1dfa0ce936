"""A snapshot that leaves its pod-label index and spreading counts alone for nodes whose pods
count alike (a bound pod confirming its assumed self: :func:`scheduler.node_alike.pods_count_alike`)
holds, after every update, exactly the indexes a fresh snapshot of the cache builds - through
random assumes, confirmations with the same or other labels, pods becoming terminating, label
updates, forgets and deletes, and pods a search left assumed in the snapshot with deferred indexes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.node_alike import pods_count_alike
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
from scheduler.plugins.pod_topology_spread import count_pods_matching
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
SELECTORS = [("ns-a", {"app": "a"}), ("ns-a", {"app": "b"}), ("ns-b", {"app": "a"}), ("ns-a", {"tier": "x"})]


def _indexes(snap: Snapshot) -> tuple[Any, ...]:
    """The snapshot's pod-label index (nodes per triple) and every selector's counts per zone and per node."""
    labels = {
        (ns, k, v): snap.nodes_with_pod_labels(ns, [(k, v)])
        for ns in ("ns-a", "ns-b")
        for k, v in (("app", "a"), ("app", "b"), ("tier", "x"), ("tier", "y"))
    }
    counts = []
    for ns, match in SELECTORS:
        sel = compile_selector({"matchLabels": match})
        agg = snap.spread_counts(
            f"{ns}|{sorted(match.items())}",
            ZONE,
            lambda ni, sel=sel, ns=ns: count_pods_matching(ni.pods, sel, ns),
        )
        counts.append((dict(agg.by_value), dict(agg.nodes_counted())))
    return labels, counts


def _pod(r: random.Random, i: int) -> Any:
    labels = {"app": r.choice("ab")}
    if r.random() < 0.5:
        labels["tier"] = r.choice("xy")
    return make_pod(f"p{i}", r.choice(["ns-a", "ns-b"]), uid=f"u{i}", labels=labels, requests={"cpu": "100m"})


def _bound(pod: Any, node: str, **meta: Any) -> Any:
    return {
        **pod,
        "metadata": {**pod["metadata"], **meta, "resourceVersion": str(random.random())},
        "spec": {**pod["spec"], "nodeName": node},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


@pytest.mark.parametrize("seed", range(10))
def test_incremental_indexes_equal_a_fresh_snapshot(seed: int) -> None:
    r = random.Random(seed)
    cache = Cache()
    nodes = [f"n{i}" for i in range(12)]
    for i, n in enumerate(nodes):
        cache.add_node(make_node(n, cpu="64", labels={"kubernetes.io/hostname": n, ZONE: f"z{i % 3}"}))
    snap = Snapshot()
    cache.update_snapshot(snap)
    _indexes(snap)  # built now, kept current by every update below
    assumed: dict[str, tuple[Any, str]] = {}
    placed: dict[str, Any] = {}
    skipped = 0
    for step in range(300):
        op = r.random()
        if op < 0.35 or not (assumed or placed):
            p, node = _pod(r, step), r.choice(nodes)
            pi = PodInfo(p)
            if r.random() < 0.3:
                # a PodGroup search kept its winner in the snapshot, its index entries deferred,
                # and the snapshot did not adopt the node: its NodeInfo counts alike, its indexes lag
                snap.assume_pod(pi.on_node(node), node, defer_index=True)
            cache.assume_pod(p, node, pi)
            assumed[p["metadata"]["uid"]] = (p, node)
        elif op < 0.7 and assumed:
            uid = r.choice(sorted(assumed))
            p, node = assumed.pop(uid)
            how = r.random()
            if how < 0.7:
                b = _bound(p, node)  # confirms its assumed self
            elif how < 0.8:
                b = _bound(p, node, labels={**p["metadata"]["labels"], "app": "b"})
            elif how < 0.9:
                b = _bound(p, node, deletionTimestamp="2026-01-01T00:00:00Z")
            else:
                b = _bound(p, r.choice(nodes))  # bound elsewhere
            cache.add_pod(b)
            placed[uid] = b
        elif op < 0.8 and placed:
            uid = r.choice(sorted(placed))
            old = placed[uid]
            new = {**old, "metadata": {**old["metadata"], "labels": {"app": r.choice("ab"), "tier": "y"}}}
            cache.update_pod(old, new)
            placed[uid] = new
        elif op < 0.9 and placed:
            cache.remove_pod(placed.pop(r.choice(sorted(placed))))
        elif assumed:
            uid = r.choice(sorted(assumed))
            p, node = assumed.pop(uid)
            cache.forget_pod({**p, "spec": {**p["spec"], "nodeName": node}})
        if r.random() < 0.4:
            before = {n: snap.node_info_map[n] for n in nodes}
            cache.update_snapshot(snap)
            skipped += sum(
                1
                for n in nodes
                if snap.node_info_map[n] is not before[n]
                and pods_count_alike(before[n], snap.node_info_map[n])
            )
            assert _indexes(snap) == _indexes(cache.snapshot()), f"step {step}"
    assert skipped > 0  # the confirmations did take the shortcut


def _info(*pods: Any, node: Any = None) -> NodeInfo:
    ni = NodeInfo()
    if node is not None:
        ni.set_node(node)
    for p in pods:
        ni.add_pod_info(PodInfo(p))
    return ni


def test_pods_count_alike() -> None:
    node = make_node("n", labels={ZONE: "z"})
    p = make_pod("p", "ns-a", uid="u", labels={"app": "a"}, requests={"cpu": "1"}, node_name="n")
    q = make_pod("q", "ns-a", uid="v", labels={"app": "b"}, requests={"cpu": "1"}, node_name="n")
    base = _info(p, q, node=node)
    confirmed = _bound(p, "n")
    alike = NodeInfo()
    alike.set_node(base.node)
    alike.add_pod_info(base.pods[1])
    alike.add_pod_info(PodInfo(confirmed, base.pods[0]))
    assert pods_count_alike(base, alike)  # same pods, other order, one replaced by its equal
    assert not pods_count_alike(None, alike)
    other_node = _info(p, q, node=make_node("n", labels={ZONE: "z"}))
    assert not pods_count_alike(base, other_node)  # another Node object
    relabelled = NodeInfo()
    relabelled.set_node(base.node)
    relabelled.add_pod_info(base.pods[1])
    relabelled.add_pod_info(PodInfo(_bound(p, "n", labels={"app": "b"}), base.pods[0]))
    assert not pods_count_alike(base, relabelled)
    terminating = NodeInfo()
    terminating.set_node(base.node)
    terminating.add_pod_info(base.pods[1])
    terminating.add_pod_info(PodInfo(_bound(p, "n", deletionTimestamp="x"), base.pods[0]))
    assert not pods_count_alike(base, terminating)
    fewer = NodeInfo()
    fewer.set_node(base.node)
    fewer.add_pod_info(base.pods[0])
    assert not pods_count_alike(base, fewer)
