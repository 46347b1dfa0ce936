"""KEP-6277 Test Plan (integration): "Scaling updates the controller-owned Workload template and
PodGroup minCount in-place (no recreation needed); an interrupted update converges on retry".

The interruption is a crash: the controller's PodGroup writes fail, so it stops after the
Workload update; the component is stopped there and a fresh one (new caches, new queue, a
healthy client) finishes the job on its first sync.
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
    min_count,
    pod_groups,
    start_statefulset_controller,
    sts_manifest,
    wait_min_count,
    wait_pods,
    wait_single,
    workloads,
)

pytestmark = pytest.mark.anyio


async def test_scale_up_and_down_update_min_count_in_place(cp: ControlPlane, client: Any) -> None:
    await start_statefulset_controller(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await wait_pods(client, "db", 3)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    for replicas in (5, 2, 0, 4):
        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": replicas}}, NS)
        pods = await wait_pods(client, "db", replicas)
        expected = max(replicas, 1)
        await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], expected)
        await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], expected)
        assert {group_of(p) for p in pods} <= {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]


@pytest.mark.parametrize(("start", "target"), [(3, 5), (5, 2)], ids=["scale-up", "scale-down"])
async def test_an_interrupted_update_converges_after_a_restart(
    cp: ControlPlane, client: Any, start: int, target: int
) -> None:
    fc = FaultyClient(cp.client(STATEFULSET))
    await start_statefulset_controller(cp, fc)
    await client.create(STATEFULSETS, sts_manifest("db", start, GANG), NS)
    await wait_pods(client, "db", start)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    fc.fail("patch", PODGROUPS, times=None)
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": target}}, NS)
    await fc.wait_failures(1)
    await cp.stop_component(STATEFULSET)  # crash between the Workload and the PodGroup update
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == target
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == start
    assert len((await client.list(PODS, NS))["items"]) == start  # no pod changed meanwhile

    await start_statefulset_controller(cp)
    pods = await wait_pods(client, "db", target)
    got = await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], target)
    assert got["metadata"]["uid"] == pg["metadata"]["uid"]
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
