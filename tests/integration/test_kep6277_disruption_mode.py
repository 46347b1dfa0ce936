"""KEP-6277 Test Plan (integration): "disruptionMode: all: a higher-priority pod preempts the whole
StatefulSet rather than a subset", and its counterpart: with ``single`` only as many pods as needed
are preempted. Also the group as preemptor (KEP-5710): a higher-priority gang StatefulSet preempts
a lower-priority one across the cluster, all-or-nothing.

Real StatefulSet controller, scheduler and API; victims have no grace period (no kubelet here),
so the API server removes them as soon as the scheduler deletes them, and the StatefulSet
controller recreates them - Pending, since their room is taken by a higher priority.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import NS, start_statefulset_controller, wait_single
from tests.integration.podgroup_support import wait_pod_group
from tests.integration.scheduler_support import (
    PodHistory,
    condition,
    create_nodes,
    create_priority_classes,
    node,
    node_name,
    pod,
    start_scheduler,
    wait_bound,
)

pytestmark = pytest.mark.anyio


def gang_sts(name: str, replicas: int, mode: str, priority_class: str, cpu: str = "1") -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "scheduling": {"schedulingPolicy": {"gang": {}}, "disruptionMode": {mode: {}}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "priorityClassName": priority_class,
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu}},
                        }
                    ],
                },
            },
        },
    }


async def running_set(cp: ControlPlane, client: Any, mode: str) -> tuple[dict[str, str], Obj]:
    """Two 2-cpu nodes filled by a 4-replica low-priority gang set; returns pod name -> uid, PodGroup."""
    await create_priority_classes(client)
    await create_nodes(client, [node("n1", "2"), node("n2", "2")])
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    await client.create(STATEFULSETS, gang_sts("low", 4, mode, "low"))
    pods = await wait_for_list(
        client, PODS, NS, lambda items: len(items) == 4 and all(node_name(p) for p in items), timeout=15
    )
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["priority"] == 10 and pg["spec"]["disruptionMode"] == {mode: {}}
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}, pg


async def preempted_uids(client: Any, before: dict[str, str]) -> set[str]:
    now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in (await client.list(PODS, NS))["items"]}
    return {n for n, uid in before.items() if now.get(n) != uid}


async def test_disruption_mode_all_a_higher_priority_pod_preempts_the_whole_statefulset_rather_than_a_subset(
    cp: ControlPlane, client: Any
) -> None:
    before, pg = await running_set(cp, client, "all")
    history = await PodHistory(client, "low-3").start()
    try:
        await client.create(PODS, pod("urgent", cpu="1", priority_class="high", grace=0))
        urgent = await wait_bound(client, "urgent", timeout=15)
        await history.wait_deleted()
        dt = condition(
            next(v for v in history.versions if condition(v, "DisruptionTarget")), "DisruptionTarget"
        )
    finally:
        await history.close()
    assert dt is not None and dt["reason"] == "PreemptionByScheduler"
    assert dt["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
    # 1 cpu was needed, yet every pod of the set went: the set is one preemption unit
    assert await preempted_uids(client, before) == set(before)
    assert node_name(urgent) in ("n1", "n2")
    got = await client.get(PODGROUPS, pg["metadata"]["name"], NS)
    marks = [c for c in got["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert [(c["status"], c["reason"]) for c in marks] == [("True", "PreemptionByScheduler")]


async def test_disruption_mode_single_a_higher_priority_pod_preempts_only_as_many_pods_as_needed(
    cp: ControlPlane, client: Any
) -> None:
    before, pg = await running_set(cp, client, "single")
    await client.create(PODS, pod("urgent", cpu="1", priority_class="high", grace=0))
    urgent = await wait_bound(client, "urgent", timeout=15)
    gone = await preempted_uids(client, before)
    assert len(gone) == 1
    # the one preempted pod ran on the node the preemptor got
    got = await client.get(PODGROUPS, pg["metadata"]["name"], NS)
    assert not [c for c in got["status"].get("conditions") or [] if c["type"] == "DisruptionTarget"]
    assert node_name(urgent) in ("n1", "n2")


@pytest.mark.parametrize(("mode", "preempted"), [("all", 4), ("single", 2)])
async def test_a_higher_priority_gang_preempts_across_the_cluster_whole_groups_or_as_few_pods_as_needed(
    cp: ControlPlane, client: Any, mode: str, preempted: int
) -> None:
    before, pg = await running_set(cp, client, mode)
    history = await PodHistory(client, "low-0").start()
    preemptor = await PodHistory(client, "high-0").start()
    await client.create(STATEFULSETS, gang_sts("high", 1, "single", "high", cpu="2"))
    try:
        await wait_for_list(
            client,
            PODS,
            NS,
            lambda items: [p for p in items if p["metadata"]["name"] == "high-0" and node_name(p)],
            timeout=20,
        )
        if mode == "all":
            await history.wait_deleted()
    finally:
        await history.close()
        await preemptor.close()
    # the group was nominated first (and told why it waits), then bound where it was nominated
    nominated = [v for v in preemptor.versions if (v.get("status") or {}).get("nominatedNodeName")]
    assert nominated and not node_name(nominated[0])
    waiting = condition(nominated[0], "PodScheduled")
    assert waiting is not None and waiting["reason"] == "Unschedulable"
    reg = cp.metrics_registry
    assert (
        reg.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total",
            {"result": "waiting_on_preemption", "profile": "default-scheduler"},
        )
        == 1
    )
    assert reg.get_sample_value("scheduler_workload_preemption_attempts_total", {"result": "Success"}) == 1
    assert reg.get_sample_value("scheduler_workload_preemption_victims_sum") == preempted
    assert node_name(preemptor.versions[-1]) == nominated[0]["status"]["nominatedNodeName"]
    high_pg = next(
        g
        for g in (await client.list(PODGROUPS, NS))["items"]
        if g["metadata"]["name"] != pg["metadata"]["name"]
    )
    await wait_pod_group(client, high_pg["metadata"]["name"], "True")
    # one node's worth (2 cpu) was needed: "all" gives up the whole set, "single" only that node's pods
    gone = await preempted_uids(client, before)
    assert len(gone) == preempted
    if mode == "single":
        assert {f"low-{i}" for i in range(4)} - gone  # the rest kept running
    else:
        dt = condition(
            next(v for v in history.versions if condition(v, "DisruptionTarget")), "DisruptionTarget"
        )
        assert dt is not None
        assert dt["message"] == "default-scheduler: preempting to accommodate a higher priority pod group"
        got = await client.get(PODGROUPS, pg["metadata"]["name"], NS)
        assert [c["type"] for c in got["status"]["conditions"]].count("DisruptionTarget") == 1
