"""KEP-6277 integration: "schedulingConstraints.topology: all pods land in a single instance of the
named domain" - the only rack that fits is found, a group bigger than any rack binds nothing and
says so, and members already placed pin the domain.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import NODES, PODGROUPS, PODS
from tests.integration.podgroup_support import (
    RACK,
    bound_members,
    gpu_node,
    member,
    pod_group,
    scheduled_condition,
    wait_members_bound,
    wait_pod_group,
)
from tests.integration.scheduler_support import create_nodes, node, start_scheduler, wait_event

pytestmark = pytest.mark.anyio


def racks(*sizes: int, gpus: int = 8) -> list[dict]:
    """``sizes[i]`` nodes with ``gpus`` GPUs each in rack ``rack-<i>``."""
    out = []
    for r, n in enumerate(sizes):
        for i in range(n):
            out.append(gpu_node(f"r{r}-n{i}", gpus, **{RACK: f"rack-{r}"}))
    return out


async def rack_of(client, p) -> str:  # noqa: ANN001
    n = await client.get(NODES, p["spec"]["nodeName"])
    return n["metadata"]["labels"][RACK]


async def test_all_pods_land_in_one_rack(cp, client) -> None:
    await create_nodes(client, racks(2, 2, 2))
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("train", 8, topology=RACK))
    for i in range(8):
        await client.create(PODS, member(f"train-{i}", "train", gpu=2))
    bound = await wait_members_bound(client, "train", 8)
    assert len({await rack_of(client, p) for p in bound}) == 1
    await wait_pod_group(client, "train", "True")


async def test_the_only_rack_that_fits_is_found(cp, client) -> None:
    # rack-0 and rack-1 have 8 GPUs each, rack-2 has 16: a 12-GPU gang fits rack-2 only
    await create_nodes(client, racks(1, 1, 2))
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("g", 6, topology=RACK))
    for i in range(6):
        await client.create(PODS, member(f"g-{i}", "g", gpu=2))
    bound = await wait_members_bound(client, "g", 6)
    assert {await rack_of(client, p) for p in bound} == {"rack-2"}


async def test_a_group_bigger_than_any_rack_binds_nothing_and_says_so(cp, client) -> None:
    await create_nodes(client, racks(1, 1))  # 8 GPUs per rack, 16 in total
    sched = await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("big", 5, topology=RACK))
    for i in range(5):
        await client.create(PODS, member(f"big-{i}", "big", gpu=2))
    pg = await wait_pod_group(client, "big", "False")
    cond = scheduled_condition(pg)
    assert cond is not None and cond["reason"] == "Unschedulable"
    assert cond["message"] == (
        "0/2 placements are available, first placement status: "
        "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"
    )
    assert await bound_members(client, "big") == []
    await sched.recorder.flush()
    ev = await wait_event(client, "big", "GangUnschedulable")
    assert ev["message"] == "best placement rack-0 fits 4 of 5; the other 1: Insufficient nvidia.com/gpu"


async def test_nodes_without_the_label_belong_to_no_placement(cp, client) -> None:
    await create_nodes(client, [gpu_node("loose", 8), *racks(1)])
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("g", 2, topology=RACK))
    for i in range(2):
        await client.create(PODS, member(f"g-{i}", "g", gpu=4))
    bound = await wait_members_bound(client, "g", 2)
    assert {p["spec"]["nodeName"] for p in bound} == {"r0-n0"}


async def test_tightest_rack_wins_among_feasible_ones(cp, client) -> None:
    """Every feasible rack is considered and the placement score picks the fullest one."""
    await create_nodes(client, racks(1, 1, 1))
    await start_scheduler(cp)
    # fill rack-1 halfway with an unrelated pod group
    await client.create(PODGROUPS, pod_group("filler", 1, topology=RACK))
    await client.create(
        PODS, member("filler-0", "filler", gpu=4, extra_spec={"nodeSelector": {RACK: "rack-1"}})
    )
    await wait_members_bound(client, "filler", 1)
    await client.create(PODGROUPS, pod_group("g", 2, topology=RACK))
    for i in range(2):
        await client.create(PODS, member(f"g-{i}", "g", gpu=2))
    bound = await wait_members_bound(client, "g", 2)
    assert {await rack_of(client, p) for p in bound} == {"rack-1"}


async def test_members_already_placed_pin_the_domain(cp, client) -> None:
    """Scale 2→3 of a rack-constrained gang: the new member joins the rack of the others."""
    await create_nodes(client, racks(1, 1))
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("g", 2, topology=RACK))
    for i in range(2):
        await client.create(PODS, member(f"g-{i}", "g", gpu=2))
    first = await wait_members_bound(client, "g", 2)
    racks_used = {await rack_of(client, p) for p in first}
    assert len(racks_used) == 1
    pg = await client.get(PODGROUPS, "g", "default")
    pg["spec"]["schedulingPolicy"]["gang"]["minCount"] = 3
    await client.update(PODGROUPS, pg)
    await client.create(PODS, member("g-2", "g", gpu=2))
    bound = await wait_members_bound(client, "g", 3)
    assert {await rack_of(client, p) for p in bound} == racks_used


async def test_basic_group_with_topology_places_pods_one_by_one_in_one_rack(cp, client) -> None:
    await create_nodes(client, [*racks(2, 2), node("cpu-only", "8")])
    await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("web", None, topology=RACK))
    for i in range(4):
        await client.create(PODS, member(f"web-{i}", "web", gpu=1))
        await wait_members_bound(client, "web", i + 1)
    bound = await bound_members(client, "web")
    assert len({await rack_of(client, p) for p in bound}) == 1
    await wait_pod_group(client, "web", "True")
