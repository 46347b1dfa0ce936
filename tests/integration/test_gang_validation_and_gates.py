"""The PodGroup cycle's validation (before any placement, upstream's messages) and the gates:
``GenericWorkload`` off in the scheduler ignores PodGroups (pods one by one, the KEP's
degraded-but-safe skew case); ``TopologyAwareWorkloadScheduling`` off ignores the constraint.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import NODES, PODGROUPS, PODS
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.podgroup_support import (
    RACK,
    bound_members,
    member,
    pod_group,
    scheduled_condition,
    wait_members_bound,
    wait_pod_group,
)
from tests.integration.scheduler_support import (
    condition,
    create_nodes,
    create_priority_classes,
    node,
    pod,
    start_scheduler,
    wait_pod,
)

pytestmark = pytest.mark.anyio


async def test_member_priority_must_equal_the_pod_groups(cp, client) -> None:
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "8")])
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("g", 2))
    await client.create(PODS, member("g-0", "g", priority_class="high"))
    await client.create(PODS, member("g-1", "g", priority_class="high"))
    pg = await wait_pod_group(client, "g", "False")
    cond = scheduled_condition(pg)
    assert cond is not None and cond["reason"] == "SchedulerError"
    assert cond["message"] == (
        "all pods in a pod group hierarchy should have the same priority as the root pod group's "
        'priority, got 1000 ("g-0") and 0 ("default/g")'
    )

    def errored(p):  # noqa: ANN001, ANN202
        c = condition(p, "PodScheduled")
        return c is not None and c.get("reason") == "SchedulerError"

    p = await wait_pod(client, "g-1", errored)
    assert condition(p, "PodScheduled")["message"] == cond["message"]
    assert await bound_members(client, "g") == []


async def test_member_priority_matching_the_pod_groups_schedules(cp, client) -> None:
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "8")])
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("g", 2, priority_class="high"))
    await client.create(PODS, member("g-0", "g", priority_class="high"))
    await client.create(PODS, member("g-1", "g", priority_class="high"))
    assert len(await wait_members_bound(client, "g", 2)) == 2


async def _plane(gates: dict[str, bool]) -> ControlPlane:
    return ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(),
            bookmark_interval=0.5,
            client_bookmark_interval=0.2,
            component_gates={"scheduler": gates},
        )
    )


async def test_generic_workload_off_in_the_scheduler_places_a_gang_pod_by_pod() -> None:
    cp = await _plane({"GenericWorkload": False})
    try:
        client = cp.client("test")
        await create_nodes(client, [node("n1", "4")])
        await start_scheduler(cp)
        await client.create(PODGROUPS, pod_group("g", 5))
        for i in range(5):
            await client.create(PODS, member(f"g-{i}", "g", cpu="1"))
        # room for 4: a gang would bind none; pod by pod binds 4
        bound = await wait_members_bound(client, "g", 4)
        assert len(bound) == 4
        pg = await client.get(PODGROUPS, "g", "default")
        assert scheduled_condition(pg) is None
    finally:
        await cp.stop()


async def test_topology_gate_off_in_the_scheduler_ignores_the_constraint() -> None:
    cp = await _plane({"TopologyAwareWorkloadScheduling": False})
    try:
        client = cp.client("test")
        await create_nodes(client, [node("a", "2", **{RACK: "rack-0"}), node("b", "2", **{RACK: "rack-1"})])
        await start_scheduler(cp)
        await client.create(PODGROUPS, pod_group("g", 4, topology=RACK))
        for i in range(4):
            await client.create(PODS, member(f"g-{i}", "g", cpu="1"))
        bound = await wait_members_bound(client, "g", 4)
        assert {p["spec"]["nodeName"] for p in bound} == {"a", "b"}
    finally:
        await cp.stop()


async def test_a_gang_that_cannot_fit_does_not_starve_other_pods(cp, client) -> None:
    await create_nodes(client, [node("n1", "4")])
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("huge", 3))
    for i in range(3):
        await client.create(PODS, member(f"huge-{i}", "huge", cpu="2"))
    await wait_pod_group(client, "huge", "False")
    for i in range(3):
        await client.create(PODS, pod(f"small-{i}", cpu="500m"))
    for i in range(3):
        p = await wait_pod(client, f"small-{i}", lambda o: bool((o or {}).get("spec", {}).get("nodeName")))
        assert p is not None
    assert await bound_members(client, "huge") == []
    await client.create(NODES, node("n2", "4"))
    assert len(await wait_members_bound(client, "huge", 3)) == 3
