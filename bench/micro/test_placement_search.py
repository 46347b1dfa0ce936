"""Micro-benchmark of the PodGroup placement search on fragmented racks (no API).

    python -m pytest bench/micro/test_placement_search.py --benchmark-timer=time.process_time

5,000 nodes in 50 racks of 100 (32 cpu each); in the first 45 racks every node already holds
31 cpu, so a rack has 100 cpu free in total but room for only one 600m pod per node. A gang of
150 such pods (minCount 150, one rack) passes every rack's free-capacity totals (90 of 100 cpu)
and fits only the last five. Before the pod-slot bound (scheduler/placement_capacity.py) the
search ran ~100 pod cycles in each of the 44 fragmented racks it did not have to try; with it,
it tries the first rack (whose status the failure message would quote) and the five that fit.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

pytestmark = pytest.mark.benchmark

RACK = "topology.kubernetes.io/rack"


def test_gang_of_150_over_45_fragmented_racks_of_50(benchmark: Any) -> None:
    from featuregates import FeatureGate
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework
    from scheduler.interfaces import CycleState, Handle, PodGroupInfo
    from scheduler.nodeinfo import PodInfo
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState
    from scheduler.testing import make_node, make_pod

    cache = Cache()
    for i in range(5000):
        cache.add_node(make_node(f"n{i:05d}", cpu="32", memory="128Gi", labels={RACK: f"r{i // 100:03d}"}))
    for i in range(4500):
        cache.add_pod(make_pod(f"b{i}", requests={"cpu": "31"}, node_name=f"n{i:05d}"))
    cache.add_pod_group(
        {
            "metadata": {"name": "g", "namespace": "default", "generation": 1},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": 150}},
                "schedulingConstraints": {"topology": [{"key": RACK}]},
            },
        }
    )
    pods = []
    for k in range(150):
        p = make_pod(f"m{k}", requests={"cpu": "600m"})
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(p)
    snap = cache.snapshot()
    handle = Handle(
        gates=FeatureGate(),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        rng=random.Random(0),
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    pod_group = cache.get_pod_group("default", "g")

    def search() -> Any:
        group = PodGroupInfo(
            "default", "g", pod_group, [PodInfo(p) for p in pods], PodGroupState("default/g")
        )
        return PodGroupAlgorithm(fw).run(CycleState(), group, snap)

    result = benchmark(search)
    assert result.success and result.placement.placement.name == "r045"
