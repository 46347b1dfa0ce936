"""A scheduler stopped and restarted mid-way rebuilds its cache from the API and places every pod once."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from apiserver.client.interface import EVENTS, PODS
from controllers.fleet import default_fleet
from scheduler.scheduler import Scheduler
from tests.helpers import wait_for_list
from tests.integration.scheduler_support import (
    create_nodes,
    node,
    node_name,
    pod,
    start_scheduler,
    wait_all_bound,
    wait_bound,
    wait_unschedulable,
)

pytestmark = pytest.mark.anyio


async def test_restart_mid_way_places_every_pod_exactly_once(cp, client) -> None:
    await create_nodes(client, default_fleet().node_objects())
    first = await start_scheduler(cp)
    for i in range(30):
        await client.create(PODS, pod(f"a-{i}", cpu="250m"))
    await wait_all_bound(client, 30)
    # 30 more arrive at once and the scheduler is stopped right away: some of them are bound,
    # some in their binding cycle (stop lets those finish), the rest still queued
    await asyncio.gather(*(client.create(PODS, pod(f"a-{i}", cpu="250m")) for i in range(30, 60)))
    await wait_bound(client, "a-30")
    await cp.stop_component("scheduler")
    before = (await client.list(PODS, "default"))["items"]
    bound_before = {p["metadata"]["name"]: node_name(p) for p in before if node_name(p)}
    assert 30 < len(bound_before) < 60, len(bound_before)
    for i in range(40):
        await client.create(PODS, pod(f"b-{i}", cpu="250m"))

    second = await cp.start_component("scheduler")
    assert isinstance(second, Scheduler) and second is not first
    pods = await wait_all_bound(client, 100)
    await second.wait_idle()
    await second.recorder.flush()

    assert len(pods) == 100
    # every pod was scheduled exactly once: one Scheduled event each, never a failure
    events = (await client.list(EVENTS, "default"))["items"]
    scheduled = Counter(e["involvedObject"]["name"] for e in events if e["reason"] == "Scheduled")
    assert set(scheduled) == {p["metadata"]["name"] for p in pods}
    assert all(n == 1 for n in scheduled.values()), scheduled
    assert all(e["count"] == 1 for e in events if e["reason"] == "Scheduled")
    assert not [e for e in events if e["reason"] == "FailedScheduling"]
    for e in events:
        if e["reason"] == "Scheduled":
            name = e["involvedObject"]["name"]
            assert e["message"].endswith(
                " to " + node_name(next(p for p in pods if p["metadata"]["name"] == name))
            )
    # pods bound before the restart stayed where they were
    assert all(
        node_name(p) == bound_before[p["metadata"]["name"]]
        for p in pods
        if p["metadata"]["name"] in bound_before
    )
    reg = cp.metrics_registry
    assert (
        reg.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": "scheduled", "profile": "default-scheduler"}
        )
        == 100
    )
    assert not reg.get_sample_value(
        "scheduler_schedule_attempts_total", {"result": "error", "profile": "default-scheduler"}
    )


async def test_restarted_scheduler_accounts_for_bound_pods(cp, client) -> None:
    """The cache is rebuilt from the informer before the first cycle: no overcommit after restart."""
    await create_nodes(client, [node("n1", "2")])
    await start_scheduler(cp)
    await client.create(PODS, pod("resident", cpu="1500m"))
    await wait_bound(client, "resident")
    await cp.stop_component("scheduler")
    await client.create(PODS, pod("newcomer", cpu="1"))
    await cp.start_component("scheduler")
    p = await wait_unschedulable(client, "newcomer")
    assert not node_name(p)
    assert p["status"]["conditions"][-1]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    items = await wait_for_list(client, PODS, "default", lambda ps: len(ps) == 2)
    assert sorted(node_name(p) for p in items) == ["", "n1"]
