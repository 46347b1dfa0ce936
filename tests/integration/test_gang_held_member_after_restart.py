"""A gang member held at PreEnqueue while the scheduler starts is released once its caches sync
(issue 25, K1), and a member held for a while says why (KEP-5501, ``SchedulerPreEnqueuePodStatus``).

The restart race, made deterministic: a gang of 4 whose members ``g-0``, ``g-1`` and ``g-3`` are
bound and whose replacement ``g-2`` is pending when a scheduler starts. The first list delivers the
pods in name order, so ``g-2`` meets PreEnqueue with only three members known and is held; ``g-3``
arrives bound after it. The hold must not depend on that event: ``g-2`` is bound.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODGROUPS, PODS
from tests.integration.podgroup_support import member, pod_group
from tests.integration.scheduler_support import (
    condition,
    create_nodes,
    node,
    start_scheduler,
    wait_bound,
    wait_event,
    wait_pod,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("pending", ["g-0", "g-1", "g-2"])
async def test_a_replacement_listed_before_its_bound_siblings_is_scheduled(cp, client, pending: str) -> None:
    await create_nodes(client, [node(f"n{i}", cpu="2") for i in range(5)])
    await client.create(PODGROUPS, pod_group("g", 4))
    for i in range(4):
        name = f"g-{i}"
        p = member(name, "g", cpu="2")
        if name != pending:
            p["spec"]["nodeName"] = f"n{i}"  # bound before the restart
        await client.create(PODS, p)
    await start_scheduler(cp)
    placed = await wait_bound(client, pending)
    assert placed["spec"]["nodeName"] in ("n4", "n" + pending[-1])  # the two free nodes


async def test_a_member_held_for_long_reports_not_ready_for_scheduling(cp, client) -> None:
    """Upstream's NotReadyForScheduling: the PreEnqueue message as a PodScheduled=False condition and
    an Event, once the hold has lasted 5 seconds; the condition goes when the pod is scheduled."""
    await create_nodes(client, [node("n1")])
    await client.create(PODGROUPS, pod_group("late", 2))
    await client.create(PODS, member("w-0", "late"))
    await start_scheduler(cp)
    message = "waiting for minCount pods from a gang to appear in scheduling queue"

    def reported(o: object) -> bool:
        c = condition(o, "PodScheduled")  # type: ignore[arg-type]
        return c is not None and c.get("reason") == "NotReadyForScheduling"

    held = await wait_pod(client, "w-0", reported, timeout=20)
    c = condition(held, "PodScheduled")
    assert c is not None and (c["status"], c["message"]) == ("False", message)
    event = await wait_event(client, "w-0", "NotReadyForScheduling")
    assert (event["type"], event["message"]) == ("Normal", message)
    await client.create(PODS, member("w-1", "late"))
    bound = await wait_bound(client, "w-0")
    assert condition(bound, "PodScheduled") is None or condition(bound, "PodScheduled")["status"] == "True"
