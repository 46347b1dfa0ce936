"""The PodGroupPostFilter extension point (where workload-aware preemption plugs in): run once per
failed group cycle (never the per-pod PostFilter), given a ``schedule`` callback that re-runs the
group algorithm on the cycle's snapshot; a Success nominates the group's pods and counts the
attempt as ``waiting_on_preemption``; a rejection's message is appended to the group's.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS
from scheduler.interfaces import CycleState, PodGroupInfo, PodGroupPostFilterResult, PodGroupSchedulingFunc
from scheduler.scheduler import Scheduler
from scheduler.status import Code, Status
from tests.integration.podgroup_support import member, pod_group, scheduled_condition, wait_pod_group
from tests.integration.scheduler_support import create_nodes, node, start_scheduler_with_plugin, wait_pod

pytestmark = pytest.mark.anyio


class FakeGroupPreemption:
    """Records its calls; nominates every pod to ``n1`` when ``succeed`` else rejects with a reason."""

    name = "FakeGroupPreemption"
    calls: list[tuple[str, int, str]] = []
    succeed = True

    def __init__(self, args: dict[str, Any], handle: Any) -> None:
        self.handle = handle

    async def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedulingFunc
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        assignments, status = schedule()
        fitting = sum(1 for a in assignments if a.node_name)
        type(self).calls.append((group.key, fitting, status.message() if status else ""))
        if not type(self).succeed:
            return None, Status(Code.UNSCHEDULABLE, "pod group preemption: no victims")
        return PodGroupPostFilterResult({pi.key: "n1" for pi in group.pods}), Status(Code.SUCCESS)


async def start(cp: Any) -> Scheduler:
    # the fake stands in for the in-tree WorkloadAwarePreemption at this extension point
    return await start_scheduler_with_plugin(cp, FakeGroupPreemption, replaces="WorkloadAwarePreemption")


@pytest.mark.parametrize("succeed", [True, False], ids=["nominates", "rejects"])
async def test_pod_group_post_filter_runs_once_per_failed_group(cp, client, succeed: bool) -> None:
    FakeGroupPreemption.calls = []
    FakeGroupPreemption.succeed = succeed
    await create_nodes(client, [node("n1", "2")])
    sched = await start(cp)
    try:
        await client.create(PODGROUPS, pod_group("g", 3))
        for i in range(3):
            await client.create(PODS, member(f"g-{i}", "g", cpu="1"))
        pg = await wait_pod_group(client, "g", "False")
        assert FakeGroupPreemption.calls[0] == (
            "default/g",
            2,
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
        )
        cond = scheduled_condition(pg)
        assert cond is not None and cond["reason"] == "Unschedulable"
        if succeed:
            assert cond["message"] == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
            p = await wait_pod(
                client, "g-2", lambda o: (o or {}).get("status", {}).get("nominatedNodeName") == "n1"
            )
            assert p is not None
            result = "waiting_on_preemption"
        else:
            assert cond["message"] == (
                "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: no victims"
            )
            result = "unschedulable"
        value = cp.metrics_registry.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total", {"result": result, "profile": "default-scheduler"}
        )
        assert value is not None and value >= 1
    finally:
        await sched.stop()
