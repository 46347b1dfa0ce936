"""A bound pod confirming its assumed self reaches the snapshot without reindexing the node.

``Cache.update_snapshot`` hands a node whose only changes since the snapshot's copy were pods
refreshed in place (same requests, ports, affinity, labels, deletion state) to
``Snapshot.refresh``, which moves the references to the new NodeInfo and leaves every index as
it is. These tests drive random histories of cache changes (assume, confirm, status and label
updates, deletions, node updates, what-if assumes in the snapshot; one or several between two
updates) and check after each update
that the incrementally kept snapshot holds exactly what a fresh copy of the cache holds: the
pods in order, the numbers, the table rows, the capacity index, the pod label index, the
topology domains and the spreading counts.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod, zoned_cache

ZONE = "topology.kubernetes.io/zone"


def _count_app_a(ni: NodeInfo) -> int:
    return sum(
        1 for p in ni.pods if not p.terminating and p.namespace == "default" and p.labels.get("app") == "a"
    )


def _indexes(snap: Snapshot) -> dict[str, Any]:
    """Everything a snapshot keeps about its nodes, in comparable form (building each index)."""
    table = snap.node_table()
    ordered = snap.ordered()
    assert all(table.infos[row] is ni for row, ni in enumerate(ordered))
    spread = snap.spread_counts("app=a", ZONE, _count_app_a)
    topo = snap.domains(ZONE)
    return {
        "pods": {n: [(p.uid, p.node_name, p.pod) for p in ni.pods] for n, ni in snap.node_info_map.items()},
        "requested": {
            n: {k: v for k, v in ni.requested.items() if v} for n, ni in snap.node_info_map.items()
        },
        "rows": (
            table.names,
            table.allocatable.tolist(),
            table.requested.tolist(),
            table.non_zero_cpu.tolist(),
            table.non_zero_memory.tolist(),
            table.pod_count.tolist(),
        ),
        "free": {n: dict(f) for n, f in snap.index._free.items()},
        "labels": snap.nodes_with_pod_labels("default", [("app", "a")]),
        "spread": (dict(spread.by_value), dict(spread.nodes_counted())),
        "domains": {v: sorted(d.names) for v, d in topo.domains.items()},
        "affinity": (sorted(snap._with_affinity), sorted(snap._with_anti_affinity)),
    }


def _indexed_pods_are_current(snap: Snapshot) -> bool:
    """Whether the pods each node's index entries were computed from are the node's own PodInfos
    (no superseded one, e.g. an assumed copy with its pending manifest, is kept alive by them)."""
    return all(
        len(snap._indexed_pods.get(n, ())) == len(ni.pods)
        and all(a is b for a, b in zip(snap._indexed_pods.get(n, ()), ni.pods, strict=True))
        for n, ni in snap.node_info_map.items()
        if n not in snap._deferred
    )


def _bound(pod: dict[str, Any], node: str, rv: int, **changes: Any) -> dict[str, Any]:
    """The pod as the API server sends it after binding (nodeName, the Scheduled condition)."""
    meta = {**pod["metadata"], "resourceVersion": str(rv)}
    if "labels" in changes:
        meta["labels"] = changes["labels"]
    if changes.get("deleting"):
        meta["deletionTimestamp"] = "2026-12-05T10:00:00Z"
    return {
        **pod,
        "metadata": meta,
        "spec": {**pod["spec"], "nodeName": node},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


def _affinity(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.8:
        return None
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": ZONE}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


@pytest.mark.parametrize("seed", range(10))
def test_a_refreshed_node_equals_a_fresh_copy(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    refreshed = []
    real_refresh = Snapshot.refresh

    def counting(self: Snapshot, name: str, ni: NodeInfo) -> bool:
        done = real_refresh(self, name, ni)
        refreshed.append(done)
        return done

    monkeypatch.setattr(Snapshot, "refresh", counting)
    cache, names = zoned_cache(12)
    snap = cache.snapshot()
    _indexes(snap)
    assumed: list[tuple[dict[str, Any], str]] = []
    bound: list[tuple[dict[str, Any], str]] = []
    for step in range(250):
        rv = step + 1
        op = rng.random()
        if op < 0.3:  # a pod is scheduled: assumed in the cache
            p = make_pod(
                f"p{step}",
                uid=f"u{step}",
                labels={"app": rng.choice("ab")},
                requests={"cpu": rng.choice(["100m", "250m"]), "memory": "64Mi"},
                affinity=_affinity(rng),
            )
            node = rng.choice(names)
            cache.assume_pod(p, node)
            assumed.append((p, node))
        elif op < 0.55 and assumed:  # the bound pod confirms it (mostly unchanged)
            p, node = assumed.pop(rng.randrange(len(assumed)))
            kind = rng.random()
            if kind < 0.7:
                obj = _bound(p, node, rv)
            elif kind < 0.8:
                obj = _bound(p, node, rv, labels={"app": "c"})
            elif kind < 0.9:
                obj = _bound(p, node, rv, deleting=True)
            else:
                obj = _bound(p, rng.choice(names), rv)  # landed elsewhere
            cache.add_pod(obj)
            bound.append((obj, obj["spec"]["nodeName"]))
        elif op < 0.7 and bound:  # a status or label update of a bound pod
            i = rng.randrange(len(bound))
            obj, node = bound[i]
            new = (
                _bound(obj, node, rv, labels={"app": rng.choice("ab")})
                if rng.random() < 0.3
                else _bound(obj, node, rv)
            )
            cache.update_pod(obj, new)
            bound[i] = (new, node)
        elif op < 0.78 and bound:
            obj, _ = bound.pop(rng.randrange(len(bound)))
            cache.remove_pod(obj)
        elif op < 0.83:  # a node changes (labels) or a new Node object arrives
            i = rng.randrange(len(names))
            cache.update_node(None, make_node(names[i], labels={ZONE: f"z{rng.randrange(3)}"}))
        elif op < 0.9:  # a what-if in the snapshot itself (copied back at the next update)
            pi = PodInfo(make_pod(f"w{step}", uid=f"w{step}", labels={"app": "a"}, requests={"cpu": "50m"}))
            snap.assume_pod(pi, rng.choice(names))
        if rng.random() < 0.5:  # (not after every change: several changes meet one update)
            cache.update_snapshot(snap)
            assert _indexes(snap) == _indexes(cache.snapshot()), step
            assert _indexed_pods_are_current(snap), step
    assert any(refreshed), "the refresh path was never taken"


def test_a_confirmed_pod_keeps_the_table_rows_and_columns() -> None:
    """The confirmation leaves the node's row and its derived score column untouched, and the
    snapshot's NodeInfo holds the API server's object of the pod."""
    cache = Cache()
    for i in range(4):
        cache.add_node(make_node(f"n{i}"))
    snap = cache.snapshot()
    table = snap.node_table()
    p = make_pod("p", uid="u", requests={"cpu": "100m"})
    cache.assume_pod(p, "n1")
    cache.update_snapshot(snap)
    assert snap.node_table() is table
    version = table.version
    obj = _bound(p, "n1", 7)
    cache.add_pod(obj)
    cache.update_snapshot(snap)
    assert snap.node_table() is table
    assert table.version == version  # no row refilled
    ni = snap.get("n1")
    assert ni is not None and table.infos[table.row_of["n1"]] is ni
    assert [q.pod for q in ni.pods] == [obj]
    assert ni is not cache.nodes["n1"]  # the snapshot's own copy
