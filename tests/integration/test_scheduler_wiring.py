"""The scheduler component end to end in-process: API server + scheduler (+ node agent when present)."""

from __future__ import annotations

import pytest

from apiserver.client.interface import NODES, PODGROUPS, PODS, REPLICASETS, SERVICES
from controllers.fleet import default_fleet
from scheduler.defaults import default_profile
from scheduler.scheduler import Scheduler
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.scheduler_support import (
    condition,
    create_nodes,
    events_for,
    informer_has,
    node,
    node_name,
    pod,
    start_node_agent,
    start_scheduler,
    wait_all_bound,
    wait_bound,
    wait_event,
    wait_pod,
    wait_unschedulable,
)

pytestmark = pytest.mark.anyio


async def test_hundred_pods_onto_the_default_fleet(cp, client) -> None:
    fleet = default_fleet()
    agent = await start_node_agent(cp, fleet)
    if not agent:
        await create_nodes(client, fleet.node_objects())
    sched = await start_scheduler(cp)
    for i in range(100):
        await client.create(PODS, pod(f"web-{i}", cpu="500m", memory="256Mi"))
    pods = await wait_all_bound(client, 100)
    names = set(fleet.names())
    assert all(node_name(p) in names for p in pods)
    # spread: the least-allocated scoring does not pile everything onto one node
    assert len({node_name(p) for p in pods}) > len(names) // 2
    if agent:
        running = await wait_for_list(
            client,
            PODS,
            "default",
            lambda items: sum(1 for p in items if p["status"].get("phase") == "Running") == 100,
        )
        assert len(running) == 100
    await sched.recorder.flush()
    ev = await wait_event(client, "web-7", "Scheduled")
    assert ev["type"] == "Normal"
    assert (
        ev["message"]
        == f"Successfully assigned default/web-7 to {node_name(await client.get(PODS, 'web-7', 'default'))}"
    )
    assert ev["source"]["component"] == "default-scheduler"
    reg = cp.metrics_registry
    labels = {"result": "scheduled", "profile": "default-scheduler"}
    assert reg.get_sample_value("scheduler_schedule_attempts_total", labels) == 100
    assert reg.get_sample_value("scheduler_scheduling_attempt_duration_seconds_count", labels) == 100


async def test_impossible_pod_waits_with_fit_error_until_a_node_fits(cp, client) -> None:
    await create_nodes(client, [node("small-a", "2"), node("small-b", "2")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("huge", cpu="8"))
    p = await wait_unschedulable(client, "huge")
    msg = (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    cond = condition(p, "PodScheduled")
    assert cond is not None and cond["message"] == msg
    assert cond["observedGeneration"] == p["metadata"]["generation"]
    assert not node_name(p)
    ev = await wait_event(client, "huge", "FailedScheduling")
    assert ev["type"] == "Warning" and ev["message"] == msg
    assert (
        cp.metrics_registry.get_sample_value(
            "scheduler_schedule_attempts_total", {"result": "unschedulable", "profile": "default-scheduler"}
        )
        >= 1
    )
    assert sched.queue.where(p["metadata"]["uid"]) == "unschedulable"

    await client.create(NODES, node("big", "16"))
    p = await wait_bound(client, "huge")
    assert node_name(p) == "big"
    assert condition(p, "PodScheduled")["status"] == "True"


async def test_no_nodes_at_all(cp, client) -> None:
    await start_scheduler(cp)
    await client.create(PODS, pod("lonely"))
    p = await wait_unschedulable(client, "lonely")
    assert condition(p, "PodScheduled")["message"] == "no nodes available to schedule pods"
    await client.create(NODES, node("n1"))
    await wait_bound(client, "lonely")


async def test_pod_for_another_scheduler_is_left_alone(cp, client) -> None:
    await create_nodes(client, [node("n1")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("theirs", scheduler_name="my-custom-scheduler"))
    await client.create(PODS, pod("ours"))
    await wait_bound(client, "ours")
    await sched.recorder.flush()
    theirs = await client.get(PODS, "theirs", "default")
    assert not node_name(theirs)
    assert condition(theirs, "PodScheduled") is None
    assert await events_for(client, "theirs") == []
    assert sched.queue.where(theirs["metadata"]["uid"]) is None


async def test_second_profile_schedules_its_own_pods(cp, client) -> None:
    await create_nodes(client, [node("n1")])
    sched = Scheduler(
        cp.client("kube-scheduler"),
        cp.gates_for("scheduler"),
        cp.clock,
        cp.metrics_registry,
        [default_profile(), default_profile("bin-packer")],
    )
    await sched.start()
    try:
        await client.create(PODS, pod("a", scheduler_name="bin-packer"))
        await client.create(PODS, pod("b"))
        await wait_bound(client, "a")
        await wait_bound(client, "b")
        labels = {"result": "scheduled", "profile": "bin-packer"}
        assert cp.metrics_registry.get_sample_value("scheduler_schedule_attempts_total", labels) == 1
    finally:
        await sched.stop()


async def test_terminal_pod_frees_its_node(cp, client) -> None:
    """A Succeeded pod leaves the scheduler's pod informer: it no longer takes room on the node."""
    await create_nodes(client, [node("n1", "1", simulated=False)])
    await start_scheduler(cp)
    await client.create(PODS, pod("job", cpu="1"))
    await wait_bound(client, "job")
    await client.create(PODS, pod("next", cpu="1"))
    await wait_unschedulable(client, "next")
    await client.patch(PODS, "job", {"status": {"phase": "Succeeded"}}, "default", subresource="status")
    p = await wait_bound(client, "next")
    assert node_name(p) == "n1"


async def test_node_taint_removal_requeues(cp, client) -> None:
    n = node("tainted")
    n["spec"]["taints"] = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    await create_nodes(client, [n])
    await start_scheduler(cp)
    await client.create(PODS, pod("waiter"))
    p = await wait_unschedulable(client, "waiter")
    assert condition(p, "PodScheduled")["message"] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    await client.patch(NODES, "tainted", {"spec": {"taints": None}})
    await wait_bound(client, "waiter")


async def test_deleted_pending_pod_leaves_the_queue(cp, client) -> None:
    await create_nodes(client, [node("n1", "1")])
    sched = await start_scheduler(cp)
    await client.create(PODS, pod("too-big", cpu="2"))
    p = await wait_unschedulable(client, "too-big")
    uid = p["metadata"]["uid"]
    assert sched.queue.where(uid) == "unschedulable"
    await client.delete(PODS, "too-big", "default")
    await wait_pod(client, "too-big", lambda o: o is None)
    # the informer delivers the delete before the next pod's add: once "after" is bound, it was seen
    await client.create(PODS, pod("after"))
    await wait_bound(client, "after")
    assert sched.queue.where(uid) is None


async def test_pod_of_a_basic_pod_group_is_scheduled_pod_by_pod(cp, client) -> None:
    """A basic PodGroup keeps pod-by-pod scheduling; the group reads Scheduled once a pod binds."""
    await create_nodes(client, [node("n1")])
    await start_scheduler(cp)
    await client.create(
        PODGROUPS,
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default"},
            "spec": {"schedulingPolicy": {"basic": {}}},
        },
    )
    await client.create(PODS, pod("member-0", extra_spec={"schedulingGroup": {"podGroupName": "pg"}}))
    p = await wait_bound(client, "member-0")
    assert node_name(p) == "n1"
    group = await wait_for_object(
        client,
        PODGROUPS,
        "pg",
        "default",
        lambda o: any(
            c.get("type") == "PodGroupInitiallyScheduled" and c.get("status") == "True"
            for c in ((o or {}).get("status") or {}).get("conditions") or []
        ),
    )
    assert group is not None


async def test_pod_whose_pod_group_does_not_exist_stays_pending_silently(cp, client) -> None:
    """Upstream's PreEnqueue: no condition, no event until the PodGroup appears (KEP-5501 reports a
    hold only once it has lasted 5 seconds: tests/integration/test_gang_restart_convergence.py)."""
    await create_nodes(client, [node("n1")])
    sched = await start_scheduler(cp)
    orphan = await client.create(
        PODS, pod("orphan", extra_spec={"schedulingGroup": {"podGroupName": "missing"}})
    )
    await client.create(PODS, pod("plain"))
    await wait_bound(client, "plain")
    assert sched.queue.where(orphan) == "gated"
    q = sched.queue.get(orphan["metadata"]["uid"])
    assert q is not None and q.gating_status is not None
    assert q.gating_status.message() == 'waiting for pod\'s pod group "missing" to appear in scheduling queue'
    p = await client.get(PODS, "orphan", "default")
    assert not node_name(p) and condition(p, "PodScheduled") is None
    await sched.recorder.flush()
    assert await events_for(client, "orphan") == []


async def test_default_spreading_selector_from_services_and_owner(cp, client) -> None:
    """PodTopologySpread's system defaults select the pod's Service and controller pods."""
    sched = await start_scheduler(cp)
    await client.create(
        SERVICES,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
    )
    rs = await client.create(
        REPLICASETS,
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web-abc", "namespace": "default"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web", "hash": "abc"}},
                "template": {
                    "metadata": {"labels": {"app": "web", "hash": "abc"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    )
    await informer_has(sched.replicasets, "default/web-abc")
    await informer_has(sched.services, "default/web")
    owned = pod("web-abc-1", labels={"app": "web", "hash": "abc"})
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web-abc",
            "uid": rs["metadata"]["uid"],
            "controller": True,
        }
    ]
    selector = sched.default_selectors(owned)
    assert selector is not None
    assert selector.matches({"app": "web", "hash": "abc"})
    assert not selector.matches({"app": "web", "hash": "other"})  # the ReplicaSet's selector counts too
    assert sched.default_selectors(pod("lonely", labels={"app": "db"})) is None


async def test_graceful_termination_frees_room_for_a_pending_pod(cp, client) -> None:
    await start_node_agent(cp)
    await create_nodes(client, [node("n1", "1")])
    await start_scheduler(cp)
    await client.create(PODS, pod("old", cpu="1", grace=30))
    await wait_pod(client, "old", lambda o: ((o or {}).get("status") or {}).get("phase") == "Running")
    await client.create(PODS, pod("new", cpu="1"))
    await wait_unschedulable(client, "new")
    await client.delete(PODS, "old", "default")
    terminating = await client.get(PODS, "old", "default")
    assert terminating["metadata"]["deletionTimestamp"]  # graceful: still there, Terminating
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    await wait_pod(client, "old", lambda o: o is None)  # the agent finishes it after the (scaled) grace
    p = await wait_bound(client, "new")
    assert node_name(p) == "n1"
    await wait_pod(client, "new", lambda o: ((o or {}).get("status") or {}).get("phase") == "Running")
