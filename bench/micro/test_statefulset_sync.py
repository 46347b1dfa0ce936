"""Micro-benchmark of a StatefulSet sync that finds nothing to write (pytest-benchmark).

In ``gangs-1000x3`` a gang set of 3 is synced about twice: the sync its creation triggers, which
writes the ControllerRevision, Workload, PodGroup, pods and status, and one more that the events
of those writes trigger while it runs (the pods, the Workload and PodGroup, the status), which
finds everything in place and writes nothing. This times the second kind: 100 settled gang sets
of 3, each synced once per round, by the controller alone (with its KEP-6277 hook).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.client.interface import STATEFULSETS
from bench.workloads.statefulsets import statefulset

pytestmark = pytest.mark.benchmark


def test_statefulset_noop_sync_of_100_gang_sets_of_3(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    from bench.workloads.common import start_plane

    cp = loop.run_until_complete(start_plane(["statefulset-controller"]))
    ctrl = cp.components["statefulset-controller"]
    c = cp.client("bench")
    keys = [f"default/g{i}" for i in range(100)]

    async def setup() -> None:
        for i in range(100):
            await c.create(STATEFULSETS, statefulset(f"g{i}", 3, True, ""), "default")
        await ctrl.wait_idle(60)
        await ctrl.recorder.flush()
        await ctrl.wait_idle(60)

    async def sync_all() -> None:
        for key in keys:
            await ctrl.sync(key)

    loop.run_until_complete(setup())
    rv = cp.api.store.rv
    benchmark(lambda: loop.run_until_complete(sync_all()))
    assert cp.api.store.rv == rv, "a sync of a settled set wrote to the API"
    loop.run_until_complete(cp.stop())
