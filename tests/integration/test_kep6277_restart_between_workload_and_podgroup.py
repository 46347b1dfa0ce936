"""KEP-6277 Test Plan (integration): "Controller restart between Workload creation and PodGroup
creation: the next sync discovers the Workload and creates only the missing PodGroup — no
duplicate Workload".

The controller's PodGroup creates fail, so it stops with the Workload created; no pod exists
(gang pods wait for their PodGroup). The component is stopped there and restarted with a healthy
client: it finds the Workload by reference and creates only the PodGroup, then the pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import (
    GANG,
    NS,
    FaultyClient,
    group_of,
    start_statefulset_controller,
    sts_manifest,
    wait_pods,
    wait_single,
    workloads,
)

pytestmark = pytest.mark.anyio


async def test_restart_creates_only_the_missing_pod_group(cp: ControlPlane, client: Any) -> None:
    broken = FaultyClient(cp.client(STATEFULSET))
    broken.fail("create", PODGROUPS, times=None)
    await start_statefulset_controller(cp, broken)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await broken.wait_failures(1)
    await cp.stop_component(STATEFULSET)
    wl = await wait_single(client, WORKLOADS)
    assert (await client.list(PODGROUPS, NS))["items"] == []
    assert (await client.list(PODS, NS))["items"] == []

    healthy = FaultyClient(cp.client(STATEFULSET))
    await start_statefulset_controller(cp, healthy)
    pods = await wait_pods(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [w for w in healthy.writes if w[0] == "create" and w[1] in ("workloads", "podgroups")] == [
        ("create", "podgroups", pg["metadata"]["name"])
    ]
    assert pg["spec"]["workloadRef"]["workloadName"] == wl["metadata"]["name"]
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
