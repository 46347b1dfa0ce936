"""A PodGroup's topology index built when the PodGroup arrives (``PodGroupCycle.pod_group_added``):
built before its first cycle, and kept current from then on it equals one built afresh."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from scheduler.cache import Cache, Snapshot
from scheduler.nodeinfo import PodInfo
from scheduler.schedule_one_podgroup import PodGroupCycle
from scheduler.testing import make_node, make_pod

RACK = "topology.kubernetes.io/rack"


def _pg(key: str) -> dict[str, Any]:
    spec = {
        "schedulingPolicy": {"gang": {"minCount": 2}},
        "schedulingConstraints": {"topology": [{"key": key}]},
    }
    return {"metadata": {"name": "g", "namespace": "default"}, "spec": spec}


def _cycle(snapshot: Snapshot, topology: bool = True) -> PodGroupCycle:
    sched = SimpleNamespace(pod_groups_enabled=True, topology_enabled=topology, snapshot=snapshot)
    return PodGroupCycle(sched)  # type: ignore[arg-type]  # only what pod_group_added reads


def _view(snap: Snapshot) -> dict[str, Any]:
    topo = snap.domains(RACK)
    return {
        v: (d.node_names(), dict(d.index.totals), d.max_free("cpu"), d.max_free("pods"))
        for v, d in sorted(topo.domains.items())
    }


def test_the_index_is_built_when_the_pod_group_arrives_and_only_with_topology() -> None:
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}", labels={RACK: f"r{i % 2}"}))
    snap = Snapshot()
    cache.update_snapshot(snap)
    _cycle(snap, topology=False).pod_group_added(_pg(RACK))
    assert RACK not in snap._topologies
    _cycle(snap).pod_group_added(_pg(RACK))
    assert sorted(snap._topologies[RACK].domains) == ["r0", "r1"]


def test_an_index_built_early_and_kept_current_equals_one_built_afresh() -> None:
    rng = random.Random(7)
    cache = Cache()
    early = Snapshot()
    _cycle(early).pod_group_added(_pg(RACK))  # before any node: the informers' first list
    for i in range(40):
        cache.add_node(make_node(f"n{i:02d}", cpu=str(rng.randint(1, 8)), labels={RACK: f"r{i % 5}"}))
    cache.update_snapshot(early)
    for k in range(60):
        node = f"n{rng.randrange(40):02d}"
        p = make_pod(f"p{k}", requests={"cpu": f"{rng.randint(100, 900)}m"}, node_name=node)
        cache.add_pod(p)
        if k % 7 == 0:  # a node relabelled into another rack
            cache.update_node(
                cache.snapshot().node_info_map[node].node,
                make_node(node, cpu="8", labels={RACK: f"r{rng.randrange(5)}"}),
            )
        cache.update_snapshot(early)
        # a cycle's assumes and rollback in between
        mark = early.backup()
        early.assume_pod(PodInfo(make_pod(f"q{k}", requests={"cpu": "1"})), node, defer_index=True)
        early.restore(mark)
    fresh = Snapshot()
    cache.update_snapshot(fresh)
    assert _view(early) == _view(fresh)
