"""A gang the algorithm placed whole but a member's Reserve then refused: the gang is short of
``minCount``, so the members already waiting at Permit are rejected (none is bound) and the
PodGroup reads ``PodGroupInitiallyScheduled=False/Unschedulable`` ("the gang could not be placed
as a whole") - gangplane's handling of a failure after the search (the PodGroup cycle's submit).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import PodInfo
from scheduler.status import Code, Status
from tests.integration.podgroup_support import member, pod_group, scheduled_condition, wait_pod_group
from tests.integration.scheduler_support import create_nodes, node, start_scheduler_with_plugin

pytestmark = pytest.mark.anyio


class RefuseOne:
    """Reserve always refuses the pod named ``refused`` and records every Unreserve (so the
    gang never completes and what the test reads stays put through later attempts)."""

    name = "RefuseOne"
    refused = "g-1"
    unreserved: list[str] = []

    def __init__(self, args: dict[str, Any], handle: Any) -> None:
        self.handle = handle

    def reserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        if pod_info.name == self.refused:
            return Status(Code.UNSCHEDULABLE, "refused by the test's Reserve plugin")
        return None

    def unreserve(self, state: CycleState, pod_info: PodInfo, node_name: str) -> None:
        type(self).unreserved.append(pod_info.name)


async def test_a_gang_left_short_by_reserve_releases_its_waiting_members(cp, client) -> None:
    RefuseOne.unreserved = []
    await create_nodes(client, [node("n1", "8")])
    sched = await start_scheduler_with_plugin(cp, RefuseOne)
    try:
        await client.create(PODGROUPS, pod_group("g", 3))
        for i in range(3):
            await client.create(PODS, member(f"g-{i}", "g", cpu="1"))
        pg = await wait_pod_group(client, "g", "False")
        cond = scheduled_condition(pg)
        assert cond is not None
        assert (cond["reason"], cond["message"]) == (
            "Unschedulable",
            "the gang could not be placed as a whole",
        )
        # the refused member and the two rejected at Permit were all unreserved; none is bound
        assert set(RefuseOne.unreserved) == {"g-0", "g-1", "g-2"}
        pods = (await client.list(PODS, "default"))["items"]
        assert [p["spec"].get("nodeName") for p in pods] == [None, None, None]
        value = cp.metrics_registry.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total",
            {"result": "unschedulable", "profile": "default-scheduler"},
        )
        assert value is not None and value >= 1
    finally:
        await sched.stop()
