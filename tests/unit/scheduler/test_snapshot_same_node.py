"""A node whose pods changed, on the same Node object, reaches the snapshot without its Node facts
being recomputed.

``Snapshot._put`` of a NodeInfo with the very Node the snapshot already holds for it leaves the
node's taint group and its ``unschedulable`` / tainted memberships alone, and ``NodeTable``
refills only the row's pod columns when the row's NodeInfo shares the Node's allocatable and
labels. Random histories of pods added, confirmed and removed, what-if assumes and rollbacks in
the snapshot, and Node updates (taints, ``unschedulable``, labels and allocatable changing, or a
Node sent again unchanged) must leave the kept snapshot equal to a fresh copy of the cache after
every update.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import PodInfo
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
_TAINTS = [
    None,
    [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}],
    [{"key": "dedicated", "value": "b", "effect": "NoSchedule"}],
    [{"key": "gpu", "effect": "NoExecute"}, {"key": "dedicated", "value": "a", "effect": "NoSchedule"}],
]


def _node(rng: random.Random, i: int) -> dict[str, Any]:
    return make_node(
        f"n{i:02d}",
        cpu=rng.choice(["2", "4", "8"]),
        memory=rng.choice(["4Gi", "8Gi"]),
        labels={ZONE: rng.choice(["z1", "z2", "z3"])},
        taints=rng.choice(_TAINTS),
        unschedulable=rng.random() < 0.2,
    )


def _state(snap: Snapshot) -> dict[str, Any]:
    table = snap.node_table()
    ids, _, values = table.label_ids(ZONE)
    return {
        "names": list(snap.node_names),
        "nodes": {n: ni.node for n, ni in snap.node_info_map.items()},
        "pods": {n: [p.key for p in ni.pods] for n, ni in snap.node_info_map.items()},
        "unschedulable": set(snap.unschedulable_nodes),
        "tainted": set(snap.tainted_nodes),
        "taint_groups": {k: set(v) for k, v in snap.taint_groups.items()},
        "group_of": dict(snap._taint_group_of),
        "free": {n: dict(f) for n, f in snap.index._free.items()},
        "domains": {v: sorted(d.names) for v, d in snap.domains(ZONE).domains.items()},
        "rows": (
            table.names,
            table.allocatable.tolist(),
            table.requested.tolist(),
            table.pod_count.tolist(),
            [values[i] if i >= 0 else None for i in ids.tolist()],
        ),
    }


@pytest.mark.parametrize("seed", range(8))
def test_a_kept_snapshot_equals_a_fresh_copy_through_node_and_pod_changes(seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    nodes = {i: _node(rng, i) for i in range(30)}
    for n in nodes.values():
        cache.add_node(n)
    snap = cache.snapshot()
    _state(snap)  # build the table, its label ids and the domains, so that they are kept
    live: list[dict[str, Any]] = []
    made = 0
    for step in range(150):
        for _ in range(rng.randrange(1, 4)):
            op = rng.random()
            if op < 0.35:
                made += 1
                p = make_pod(f"p{made}", uid=f"u{made}", requests={"cpu": "100m"})
                host = f"n{rng.randrange(30):02d}"
                cache.assume_pod(p, host)
                live.append({**p, "spec": {**p["spec"], "nodeName": host}})
            elif op < 0.5 and live:
                cache.add_pod(rng.choice(live))  # the informer's Add confirms it
            elif op < 0.6 and live:
                cache.remove_pod(live.pop(rng.randrange(len(live))))
            elif op < 0.7:
                mark = snap.backup()
                pi = PodInfo(make_pod(f"w{step}", uid=f"w{step}"))
                snap.assume_pod(pi, f"n{rng.randrange(30):02d}")
                if rng.random() < 0.5:
                    snap.restore(mark)
            elif op < 0.85:
                i = rng.randrange(30)
                nodes[i] = _node(rng, i)  # a Node update: new object, maybe other facts
                cache.update_node(None, nodes[i])
            else:
                cache.update_node(None, nodes[rng.randrange(30)])  # the same Node object again
        cache.update_snapshot(snap)
        assert _state(snap) == _state(cache.snapshot()), step
