"""Micro-benchmark of the syncs of one 1,000-replica gang set while its pods turn Running.

In ``gang-1x1000-running`` the StatefulSet controller syncs the set 64-82 times while its pods
turn Running, each sync seeing a dozen changed pods. Here the controller runs alone; each round
makes 15 more pods Running and Ready, lets the controller's own worker sync (and write the
status), then times one more sync of the set by hand: the cost of a sync of a large set that the
last sync left current, which the kept replica view (``controllers/statefulset/replicaview.py``)
and the claim's patch by position make independent of the untouched pods.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from apiserver.client.interface import PODS, STATEFULSETS
from bench.workloads.statefulsets import statefulset

pytestmark = pytest.mark.benchmark

REPLICAS = 1000
BATCH = 15


def test_statefulset_sync_of_a_1000_pod_gang_set_while_its_pods_turn_running(
    benchmark: Any, loop: asyncio.AbstractEventLoop
) -> None:
    from bench.workloads.common import start_plane

    cp = loop.run_until_complete(start_plane(["statefulset-controller"]))
    ctrl = cp.components["statefulset-controller"]
    c = cp.client("bench")

    async def setup() -> list[Any]:
        await c.create(STATEFULSETS, statefulset("g", REPLICAS, True, ""), "default")
        await ctrl.wait_idle(120)
        await ctrl.recorder.flush()
        await ctrl.wait_idle(120)
        return [await c.get(PODS, f"g-{i}", "default") for i in range(REPLICAS)]

    pods = loop.run_until_complete(setup())
    turned = 0

    async def turn_some_running() -> None:
        nonlocal turned
        for pod in pods[turned : turned + BATCH]:
            body = copy.deepcopy(pod)
            body["spec"]["nodeName"] = "n1"
            body["status"] = {
                "phase": "Running",
                "podIP": "10.0.0.1",
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                ],
            }
            await c.update_status(PODS, body, "default")
        turned += BATCH
        await ctrl.wait_idle(60)

    benchmark.pedantic(
        lambda: loop.run_until_complete(ctrl.sync("default/g")),
        setup=lambda: loop.run_until_complete(turn_some_running()),
        rounds=REPLICAS // BATCH,
        iterations=1,
    )
    status = loop.run_until_complete(c.get(STATEFULSETS, "g", "default"))["status"]
    assert status["readyReplicas"] == turned  # (one round under --benchmark-disable)
    loop.run_until_complete(cp.stop())
