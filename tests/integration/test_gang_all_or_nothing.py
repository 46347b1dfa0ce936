"""KEP-6277 integration: "Gang StatefulSet: no pod is bound until the whole group can be placed;
all are bound once it can" - and "insufficient resources prevent gang formation; no pod of the
group is bound" (PodGroup ``False/Unschedulable`` with upstream's message), at the scheduler level.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import EVENTS, NODES, PODGROUPS, PODS
from tests.helpers import wait_for_list
from tests.integration.podgroup_support import (
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
    events_for,
    node,
    pod,
    start_scheduler,
    wait_event,
    wait_unschedulable,
)

pytestmark = pytest.mark.anyio


async def test_no_pod_bound_until_the_whole_group_fits_then_all_in_one_cycle(cp, client) -> None:
    # room for 4 pods of 2 cpu; the gang needs 5
    await create_nodes(client, [node("n1", "4"), node("n2", "4")])
    sched = await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("db", 5))
    for i in range(5):
        await client.create(PODS, member(f"db-{i}", "db", cpu="2"))
    pg = await wait_pod_group(client, "db", "False")
    cond = scheduled_condition(pg)
    assert cond is not None
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == "minCount (5) cannot be satisfied: 4 scheduled, 0 remaining"
    assert cond["observedGeneration"] == pg["metadata"]["generation"]
    assert await bound_members(client, "db") == []
    # pods carry PodScheduled=False and a FailedScheduling event
    p = await wait_unschedulable(client, "db-0")
    assert condition(p, "PodScheduled")["reason"] == "Unschedulable"
    await sched.recorder.flush()
    assert any(e["reason"] == "FailedScheduling" for e in await events_for(client, "db-0"))
    ev = await wait_event(client, "db", "GangUnschedulable")
    assert ev["type"] == "Warning"
    assert ev["involvedObject"]["kind"] == "PodGroup"
    assert ev["message"] == "the cluster fits 4 of 5; the other 1: Insufficient cpu"
    cycles = sched.cycles
    await client.create(NODES, node("n3", "4"))
    bound = await wait_members_bound(client, "db", 5)
    assert len(bound) == 5
    # the whole gang went through one cycle after the node arrived
    assert sched.cycles == cycles + 1
    pg = await wait_pod_group(client, "db", "True")
    cond = scheduled_condition(pg)
    assert cond is not None and cond["reason"] == "Scheduled"
    reg = cp.metrics_registry
    assert (
        reg.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total",
            {"result": "scheduled", "profile": "default-scheduler"},
        )
        == 1
    )
    assert (
        reg.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total",
            {"result": "unschedulable", "profile": "default-scheduler"},
        )
        >= 1
    )


async def test_members_wait_silently_for_their_pod_group_and_min_count(cp, client) -> None:
    await create_nodes(client, [node("n1", "8")])
    sched = await start_scheduler(cp)
    for i in range(3):
        await client.create(PODS, member(f"w-{i}", "late", cpu="1"))
    await client.create(PODGROUPS, pod_group("late", 4))
    await client.create(PODS, member("w-3", "late", cpu="1"))
    bound = await wait_members_bound(client, "late", 4)
    assert len(bound) == 4
    # while held, no PodScheduled condition and no event was written
    for i in range(3):
        p = await client.get(PODS, f"w-{i}", "default")
        assert condition(p, "PodScheduled") is None or condition(p, "PodScheduled")["status"] == "True"
    await sched.recorder.flush()
    assert not any(e["reason"] == "FailedScheduling" for e in await events_for(client, "w-0"))


async def test_a_gang_failing_again_the_same_way_repeats_one_event(cp, client) -> None:
    """GangUnschedulable is de-duplicated like kube's events: a repeat bumps ``count``."""
    await create_nodes(client, [node("n1", "4"), node("small", "1")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("x", cpu="100m", extra_spec={"nodeName": "small"}))
    await client.create(PODGROUPS, pod_group("g", 3))
    for i in range(3):
        await client.create(PODS, member(f"g-{i}", "g", cpu="2"))
    await wait_event(client, "g", "GangUnschedulable")
    # a deleted pod may free room: the gang is retried (after its backoff) and fails the same way
    await client.delete(PODS, "x", "default", grace_period_seconds=0)

    def repeated(items: list) -> bool:  # noqa: ANN001
        evs = [e for e in items if e.get("reason") == "GangUnschedulable"]
        return len(evs) == 1 and (evs[0].get("count") or 1) >= 2

    await sched.recorder.flush()
    items = await wait_for_list(client, EVENTS, "default", repeated, 20)
    (ev,) = [e for e in items if e.get("reason") == "GangUnschedulable"]
    assert ev["message"] == "the cluster fits 2 of 3; the other 1: Insufficient cpu"
