"""Many members of one gang held together each say why (KEP-5501, ``SchedulerPreEnqueuePodStatus``).

Members held together fall due together: every one gets its ``PodScheduled=False`` /
``NotReadyForScheduling`` condition and one Event, promptly, and once the gang is complete every
member is bound. A report whose task runs after its pod left PreEnqueue (the gang completed, the
pod placed or rejected by its cycle) is not written.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import EVENTS, PODGROUPS, PODS
from tests.helpers import wait_for_list
from tests.integration.podgroup_support import member, pod_group
from tests.integration.scheduler_support import (
    condition,
    create_nodes,
    node,
    start_scheduler,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.anyio

HELD = 70


async def test_every_held_member_of_a_gang_reports_not_ready_for_scheduling(cp, client) -> None:
    await create_nodes(client, [node(f"n{i}", cpu="8") for i in range(4)])
    await client.create(PODGROUPS, pod_group("big", HELD + 1))
    names = [f"m-{i}" for i in range(HELD)]
    for name in names:
        await client.create(PODS, member(name, "big", cpu="10m"))
    await start_scheduler(cp)
    message = "waiting for minCount pods from a gang to appear in scheduling queue"

    def reported(pods: list) -> bool:
        done = 0
        for p in pods:
            c = condition(p, "PodScheduled")
            done += c is not None and c.get("reason") == "NotReadyForScheduling"
        return done == HELD

    pods = await wait_for_list(client, PODS, "default", reported, timeout=30)
    for p in pods:
        c = condition(p, "PodScheduled")
        assert c is not None and (c["status"], c["message"]) == ("False", message)

    def one_event_each(events: list) -> bool:
        got = [e["involvedObject"].get("name") for e in events if e.get("reason") == "NotReadyForScheduling"]
        return sorted(got) == sorted(names)

    events = await wait_for_list(client, EVENTS, "default", one_event_each, timeout=30)
    assert all(
        (e["type"], e["message"]) == ("Normal", message)
        for e in events
        if e.get("reason") == "NotReadyForScheduling"
    )
    await client.create(PODS, member("m-last", "big", cpu="10m"))
    for name in [*names, "m-last"]:
        await wait_bound(client, name, timeout=30)


async def test_a_report_due_while_held_is_not_written_once_the_gang_was_released(cp, client) -> None:
    """Reports fall due at a tick and are written one task each: a member whose gang completed
    meanwhile (here: released and rejected by its cycle) keeps what the cycle wrote, while a
    member still held gets its report."""
    await create_nodes(client, [node("n0", cpu="1")])
    sched = await start_scheduler(cp)
    await client.create(PODGROUPS, pod_group("waiting", 2))
    await client.create(PODS, member("w-0", "waiting", cpu="10m"))
    await client.create(PODGROUPS, pod_group("late", 2))
    for name in ("l-0", "l-1"):
        await client.create(PODS, member(name, "late", cpu="2"))  # complete, and fits no node
    # the scheduler saw w-0 (held) before the late gang's members, which a cycle has rejected
    late = await wait_unschedulable(client, "l-0")
    held = await client.get(PODS, "w-0", "default")
    message = "waiting for minCount pods from a gang to appear in scheduling queue"

    await sched._report_held_pod(late, message)  # fell due while l-0 was held, written after
    await sched._report_held_pod(held, message)
    await sched.recorder.flush()

    c = condition(await client.get(PODS, "l-0", "default"), "PodScheduled")
    assert c is not None and (c["status"], c["reason"]) == ("False", "Unschedulable")
    c = condition(await client.get(PODS, "w-0", "default"), "PodScheduled")
    assert c is not None and (c["status"], c["reason"], c["message"]) == (
        "False",
        "NotReadyForScheduling",
        message,
    )
    reasons = {
        (e["involvedObject"]["name"], e["reason"])
        for e in (await client.list(EVENTS, "default"))["items"]
        if e.get("reason") == "NotReadyForScheduling"
    }
    assert reasons == {("w-0", "NotReadyForScheduling")}
