"""The rotating start index (kube's ``nextStartNodeIndex``) after Filter, on every path that finds
the feasible nodes: the node after the last feasible one in name order once enough are found,
the same start otherwise. The path where nothing can reject a node knows the last one's index
from the window it took; the others look it up by name: both must land where kube's loop stops.
"""

from __future__ import annotations

import random

import pytest

from scheduler import schedule_one
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import PodInfo
from scheduler.testing import make_node, make_pod


def _cluster(rng: random.Random, n: int, crowded: float) -> Cache:
    cache = Cache()
    for i in range(n):
        name = f"n{i:04d}"
        cache.add_node(make_node(name, cpu="4", memory="16Gi"))
        if rng.random() < crowded:  # no room for a 3-cpu pod
            cache.add_pod(make_pod(f"e{i}", node_name=name, requests={"cpu": "2"}))
    return cache


@pytest.mark.parametrize("seed", range(12))
def test_the_start_index_follows_the_last_feasible_node(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([7, 60, 130, 700, 1300])
    crowded = rng.choice([0.0, 0.0, 0.3, 0.97])
    cache = _cluster(rng, n, crowded)
    snap = cache.snapshot()
    fw = Framework(default_profile(), Handle(rng=random.Random(seed)), registry=default_registry())
    fw.handle.snapshot = snap
    names = list(snap.node_names)
    to_find = schedule_one.num_feasible_nodes_to_find(fw, n)
    for step in range(10):
        cpu = rng.choice(["100m", "3"])  # "3" is rejected on the crowded nodes
        pod = PodInfo(make_pod(f"p{step}", requests={"cpu": cpu}))
        start = rng.randrange(n) if rng.random() < 0.7 else n - 1 - rng.randrange(min(n, 5))
        fw.next_start_node_index = start
        state = CycleState()
        feasible, _ = schedule_one.find_nodes_that_fit(fw, state, pod, snap)
        got = [ni.name for ni in feasible]
        rotated = names[start:] + names[:start]
        if cpu == "100m" or not crowded:
            assert got == rotated[:to_find], (seed, step)
        if len(got) >= to_find:
            assert fw.next_start_node_index == (names.index(got[-1]) + 1) % n, (seed, step)
        else:
            assert fw.next_start_node_index == start, (seed, step)
