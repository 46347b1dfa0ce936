"""KEP-6277 "Controller Workflow": "a restart mid-workflow ... is recoverable: on the next sync the
existing objects are found via the listers and the workflow continues from there".

Two crashes: one while the pods of a gang set are being created (after the Workload and PodGroup
exist), one in steady state. A fresh component (new caches, new queue) converges without a
duplicate Workload or PodGroup, and every pod references the one PodGroup.
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
    pod_groups,
    settled,
    start_statefulset_controller,
    sts_manifest,
    wait_pods,
    wait_single,
    workloads,
)

pytestmark = pytest.mark.anyio


async def test_restart_while_creating_pods(cp: ControlPlane, client: Any) -> None:
    broken = FaultyClient(cp.client(STATEFULSET))
    broken.fail("create", PODS, nth=3, times=None)  # two pods get through, then every create fails
    await start_statefulset_controller(cp, broken)
    await client.create(STATEFULSETS, sts_manifest("db", 6, GANG), NS)
    await broken.wait_failures(1)
    await cp.stop_component(STATEFULSET)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert 0 < len((await client.list(PODS, NS))["items"]) < 6

    healthy = FaultyClient(cp.client(STATEFULSET))
    await start_statefulset_controller(cp, healthy)
    pods = await wait_pods(client, "db", 6)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]
    assert not [w for w in healthy.writes if w[1] in ("workloads", "podgroups")]


async def test_restart_in_steady_state_writes_nothing(cp: ControlPlane, client: Any) -> None:
    ctrl = await start_statefulset_controller(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await wait_pods(client, "db", 3)
    await settled(ctrl, client, "db")
    await cp.stop_component(STATEFULSET)
    fresh = FaultyClient(cp.client(STATEFULSET))
    ctrl = await start_statefulset_controller(cp, fresh)
    await settled(ctrl, client, "db")
    assert not [w for w in fresh.writes if w[1] in ("workloads", "podgroups", "pods")]
    assert len(await workloads(client)) == 1 and len(await pod_groups(client)) == 1
