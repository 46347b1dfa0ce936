"""Micro-benchmarks of the StatefulSet controller's and the node agent's hot paths (pytest-benchmark).

* one sync of a 1,000-replica Parallel gang StatefulSet whose pods all exist and whose status is
  current: what every pod event of a big set costs the controller (no API write);
* 100 new gang StatefulSets of 3 taken by the controller (alone) to their pods: the per-set
  path of ``gangs-1000x3`` without the scheduler;
* a pod CIDR and the first pod IP of 1,000 nodes, as the node agent assigns them at registration.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.client.interface import STATEFULSETS
from bench.workloads.statefulsets import statefulset

pytestmark = pytest.mark.benchmark


def test_statefulset_noop_sync_1000_pods(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    from bench.workloads.common import start_plane

    cp = loop.run_until_complete(start_plane(["statefulset-controller"]))
    ctrl = cp.components["statefulset-controller"]
    c = cp.client("bench")

    async def setup() -> None:
        await c.create(STATEFULSETS, statefulset("db", 1000, True, ""), "default")
        while True:
            sts = await c.get(STATEFULSETS, "db", "default")
            if (sts.get("status") or {}).get("replicas") == 1000 and len(ctrl.pods.list("default")) == 1000:
                break
            await asyncio.sleep(0.05)
        await ctrl.wait_idle(60)

    loop.run_until_complete(setup())
    rv = cp.api.store.rv
    benchmark(lambda: loop.run_until_complete(ctrl.sync("default/db")))
    assert cp.api.store.rv == rv, "a sync of a settled set wrote to the API"
    loop.run_until_complete(cp.stop())


def test_statefulset_creates_100_gang_sets_of_3(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    """The controller alone taking 100 new gang sets of 3 to their pods: per set a Workload, a
    PodGroup, a ControllerRevision, 3 pods, a status write and 5 Events (flushed), 12 writes."""
    from bench.workloads.common import start_plane

    cp = loop.run_until_complete(start_plane(["statefulset-controller"]))
    ctrl = cp.components["statefulset-controller"]
    c = cp.client("bench")
    created = 0
    rounds = 0

    async def settle() -> None:
        await ctrl.wait_idle(60)
        await ctrl.recorder.flush()
        await ctrl.wait_idle(60)

    async def hundred_sets() -> None:
        nonlocal created, rounds
        rounds += 1
        for _ in range(100):
            await c.create(STATEFULSETS, statefulset(f"g{created}", 3, True, ""), "default")
            created += 1
        await settle()

    loop.run_until_complete(hundred_sets())  # warm-up: first-use costs out of the rounds
    rv, rounds = cp.api.store.rv, 0
    benchmark.pedantic(lambda: loop.run_until_complete(hundred_sets()), rounds=5)
    # five rounds, or one under --benchmark-disable
    assert cp.api.store.rv - rv == rounds * 100 * 13, (
        "per set: the bench's create and the controller's 12 writes"
    )
    loop.run_until_complete(cp.stop())


def test_node_agent_addresses_for_1000_nodes(benchmark: Any) -> None:
    from controllers.nodeagent.ipam import CIDRAllocator, PodIPPool, node_internal_ip

    def assign() -> str:
        cidrs = CIDRAllocator()
        ip = ""
        for i in range(1000):
            node_internal_ip(i)
            ip = PodIPPool(cidrs.allocate()).allocate() or ""
        return ip

    assert benchmark(assign) == "10.131.231.2"
