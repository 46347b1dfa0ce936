"""The scheduler's start-up priming (``scheduler/prime.py``): the snapshot and node table are
built before the first pod, numpy is imported only on a cluster large enough to use it, and a
primed scheduler places pods exactly where an unprimed one does."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from scheduler import schedule_one
from scheduler.arraypolicy import ARRAY_MIN_NODES
from scheduler.cache import Cache, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.prime import prime
from scheduler.testing import make_node, make_pod


def _cache(nodes: int, rng: random.Random) -> Cache:
    cache = Cache()
    for i in range(nodes):
        cache.add_node(make_node(f"n{i:03}", cpu=str(rng.choice([2, 4, 8])), labels={"zone": f"z{i % 3}"}))
    return cache


def test_prime_fills_the_snapshot_and_builds_the_table_on_a_large_cluster() -> None:
    cache = _cache(ARRAY_MIN_NODES, random.Random(0))
    snap = Snapshot()
    assert prime(cache, snap)
    assert snap.num_nodes() == ARRAY_MIN_NODES
    table = snap.node_table()  # the primed table, not a new one
    assert prime(cache, snap)
    assert snap.node_table() is table
    assert len(table) == ARRAY_MIN_NODES


def test_prime_leaves_the_table_unbuilt_on_a_small_cluster() -> None:
    cache = _cache(ARRAY_MIN_NODES - 1, random.Random(0))
    snap = Snapshot()
    assert not prime(cache, snap)
    assert snap.num_nodes() == ARRAY_MIN_NODES - 1


@pytest.mark.parametrize(("nodes", "imported"), [(3, False), (ARRAY_MIN_NODES, True)])
def test_numpy_is_imported_at_start_only_for_a_cluster_that_uses_it(nodes: int, imported: bool) -> None:
    code = (
        "import random, sys\n"
        "from scheduler.cache import Snapshot\n"
        "from scheduler.prime import prime\n"
        "from tests.unit.scheduler.test_scheduler_prime import _cache\n"
        "assert 'numpy' not in sys.modules\n"
        f"prime(_cache({nodes}, random.Random(0)), Snapshot())\n"
        f"assert ('numpy' in sys.modules) is {imported}, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _hosts(primed: bool, seed: int) -> list[str]:
    rng = random.Random(seed)
    cache = _cache(2 * ARRAY_MIN_NODES + rng.randrange(50), rng)
    fw = Framework(default_profile(), Handle(rng=random.Random(seed)), registry=default_registry())
    snap = Snapshot()
    if primed:
        prime(cache, snap)
    hosts = []
    for i in range(60):
        p = make_pod(
            f"p{i}", labels={"app": f"a{i % 4}"}, requests={"cpu": rng.choice(["100m", "1", "1500m"])}
        )
        cache.update_snapshot(snap)
        fw.handle.snapshot = snap
        pi = PodInfo(p)
        r = schedule_one.schedule_pod(fw, CycleState(), pi, snap)
        cache.assume_pod(p, r.suggested_host, pi)
        hosts.append(r.suggested_host)
    return hosts


@pytest.mark.parametrize("seed", range(3))
def test_a_primed_scheduler_places_pods_as_an_unprimed_one(seed: int) -> None:
    assert _hosts(True, seed) == _hosts(False, seed)
