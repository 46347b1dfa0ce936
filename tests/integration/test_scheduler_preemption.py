"""Preemption through the running scheduler: victims marked and deleted, preemptor nominated then bound."""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODS
from tests.integration.scheduler_support import (
    PodHistory,
    condition,
    create_nodes,
    create_priority_classes,
    events_for,
    node,
    node_name,
    pod,
    start_node_agent,
    start_scheduler,
    wait_bound,
    wait_event,
    wait_unschedulable,
)

pytestmark = pytest.mark.anyio


async def test_higher_priority_pod_preempts_a_lower_one(cp, client) -> None:
    # With the node agent the victim really terminates (grace 30 s, scaled); without it the
    # victim has grace 0 and the API server removes it at once, as kubelet would eventually.
    agent = await start_node_agent(cp)
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "2")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("victim", cpu="1500m", priority_class="low", grace=30 if agent else 0))
    victim = await wait_bound(client, "victim")
    assert victim["spec"]["priority"] == 10

    victim_history = await PodHistory(client, "victim").start()
    await client.create(PODS, pod("preemptor", cpu="1500m", priority_class="high"))
    preemptor_history = await PodHistory(client, "preemptor").start()
    try:
        await victim_history.wait_deleted()
        marked = [v for v in victim_history.versions if condition(v, "DisruptionTarget")]
        assert marked, "the victim was deleted without a DisruptionTarget condition"
        dt = condition(marked[0], "DisruptionTarget")
        assert dt["status"] == "True"
        assert dt["reason"] == "PreemptionByScheduler"
        assert dt["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
        if agent:
            assert any(v["metadata"].get("deletionTimestamp") for v in victim_history.versions)

        p = await wait_bound(client, "preemptor")
        assert node_name(p) == "n1"
        nominated = [
            v for v in preemptor_history.versions if (v.get("status") or {}).get("nominatedNodeName")
        ]
        assert nominated, "the preemptor was never nominated"
        assert nominated[0]["status"]["nominatedNodeName"] == "n1"
        assert not node_name(nominated[0])  # nominated before it was bound
        first_fail = condition(nominated[0], "PodScheduled")
        assert first_fail["reason"] == "Unschedulable"
        assert first_fail["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    finally:
        await victim_history.close()
        await preemptor_history.close()

    await sched.recorder.flush()
    preempted = [e for e in await events_for(client, "victim") if e["reason"] == "Preempted"]
    assert len(preempted) == 1
    assert preempted[0]["message"] == f"Preempted by pod {p['metadata']['uid']} on node n1"
    await wait_event(client, "preemptor", "Scheduled")
    reg = cp.metrics_registry
    assert reg.get_sample_value("scheduler_preemption_attempts_total") >= 1
    assert reg.get_sample_value("scheduler_preemption_victims_count") == 1
    assert reg.get_sample_value("scheduler_preemption_victims_sum") == 1


async def test_preemption_policy_never_does_not_preempt(cp, client) -> None:
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "2")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("incumbent", cpu="1500m", priority_class="low", grace=0))
    await wait_bound(client, "incumbent")
    await client.create(PODS, pod("polite", cpu="1500m", priority_class="high-never"))
    p = await wait_unschedulable(client, "polite")
    assert p["spec"]["preemptionPolicy"] == "Never"
    assert condition(p, "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    assert not (p.get("status") or {}).get("nominatedNodeName")
    await sched.recorder.flush()
    incumbent = await client.get(PODS, "incumbent", "default")
    assert node_name(incumbent) == "n1"
    assert not incumbent["metadata"].get("deletionTimestamp")
    assert condition(incumbent, "DisruptionTarget") is None
    assert [e for e in await events_for(client, "incumbent") if e["reason"] == "Preempted"] == []


async def test_equal_priority_does_not_preempt(cp, client) -> None:
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "2")])
    await start_scheduler(cp)
    await client.create(PODS, pod("first", cpu="1500m", priority_class="low"))
    await wait_bound(client, "first")
    await client.create(PODS, pod("second", cpu="1500m", priority_class="low"))
    p = await wait_unschedulable(client, "second")
    assert condition(p, "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
