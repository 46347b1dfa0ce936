"""Node agent, pods: admission, Running+Ready, per-pod behaviour annotations, graceful termination.

Each test runs an in-process control plane with only the node agent (the test binds pods itself
through ``pods/binding`` or ``spec.nodeName``, as the scheduler would). Timing-sensitive cases use
a :class:`FakeClock`: the test steps the clock and fires the agent's due timers itself, so a
"not yet" is checked at an exact instant instead of after a sleep.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Callable

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, GVR, NODES, PODS, Client
from apiserver.meta import FakeClock
from controllers.fleet import Fleet, parse_fleet
from controllers.nodeagent import (
    COMPLETE_AFTER,
    CRASH,
    FAIL,
    NEVER_READY,
    READY_AFTER,
    NodeAgent,
    node_agent_factory,
)
from controllers.nodeagent.agent import status_write_body
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio

FLEET = parse_fleet(
    {"nodes": [{"name": "node-{index}", "count": 2, "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}]}
)


# ============================================================================ helpers


async def wait_obj(
    client: Client, gvr: GVR, name: str, ns: str, cond: Callable[[Obj | None], bool], timeout: float = 10.0
) -> Obj | None:
    """List then watch from the list's resourceVersion until ``cond(obj)`` (None: deleted) holds."""

    async def run() -> Obj | None:
        while True:
            lst = await client.list(gvr, ns, field_selector=f"metadata.name={name}")
            cur = lst["items"][0] if lst["items"] else None
            if cond(cur):
                return cur
            async for ev in client.watch(
                gvr,
                ns,
                field_selector=f"metadata.name={name}",
                resource_version=lst["metadata"]["resourceVersion"],
            ):
                if ev.type == "ERROR":
                    break
                if ev.type == "BOOKMARK":
                    continue
                cur = None if ev.type == "DELETED" else ev.object
                if cond(cur):
                    return cur

    return await asyncio.wait_for(run(), timeout)


async def wait_pod(
    client: Client, name: str, cond: Callable[[Obj | None], bool], timeout: float = 10.0
) -> Obj | None:
    return await wait_obj(client, PODS, name, "default", cond, timeout)


async def wait_events(
    client: Client, pod: str, reason: str, count: int = 1, timeout: float = 10.0
) -> list[Obj]:
    """Wait (on a watch) until the recorder has written ``count`` ``reason`` events for ``pod``."""

    def mine(items: list[Obj]) -> list[Obj]:
        return [e for e in items if e["involvedObject"].get("name") == pod and e["reason"] == reason]

    items = await wait_for_list(
        client, EVENTS, "default", lambda items: sum(e.get("count", 1) for e in mine(items)) >= count, timeout
    )
    return mine(items)


def phase(o: Obj | None) -> str:
    return ((o or {}).get("status") or {}).get("phase", "")


def cond_status(o: Obj | None, ctype: str) -> str:
    for c in ((o or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c.get("status", "")
    return ""


def ready(o: Obj | None) -> bool:
    return cond_status(o, "Ready") == "True"


def running(o: Obj | None) -> bool:
    return phase(o) == "Running"


def cs(o: Obj | None) -> Obj:
    return ((o or {}).get("status") or {}).get("containerStatuses", [{}])[0]


def pod(
    name: str,
    *,
    node: str = "",
    cpu: str = "1",
    annotations: dict[str, str] | None = None,
    restart: str = "Always",
    grace: int | None = None,
    init: bool = False,
) -> Obj:
    spec: Obj = {
        "restartPolicy": restart,
        "containers": [
            {"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}
        ],
    }
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if init:
        spec["initContainers"] = [{"name": "setup", "image": "busybox:1.36"}]
    md: Obj = {"name": name, "namespace": "default"}
    if annotations:
        md["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


async def bind(client: Client, name: str, node: str) -> None:
    await client.create_subresource(
        PODS,
        name,
        "binding",
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name},
            "target": {"kind": "Node", "name": node},
        },
        "default",
    )


def schedulable(o: Obj | None) -> bool:
    """Ready and without the ``node.kubernetes.io/not-ready`` taint."""
    taints = ((o or {}).get("spec") or {}).get("taints") or []
    return cond_status(o, "Ready") == "True" and all(
        t["key"] != "node.kubernetes.io/not-ready" for t in taints
    )


async def nodes_ready(client: Client, names: list[str]) -> None:
    for n in names:
        await wait_obj(client, NODES, n, "", schedulable)


@pytest.fixture
async def agent(cp: ControlPlane) -> AsyncIterator[NodeAgent]:
    cp.register("node-agent", node_agent_factory(FLEET, time_scale=0.01))
    a = await cp.start_component("node-agent")
    assert isinstance(a, NodeAgent)
    await nodes_ready(cp.client("wait"), FLEET.names())
    yield a


@pytest.fixture
async def fake() -> AsyncIterator[tuple[ControlPlane, FakeClock, NodeAgent]]:
    """A control plane on a fake clock; the agent's delays are real (time_scale 1) fake seconds.

    Heartbeats are pushed far out so the only deadlines a test fires are its pods'.
    """
    clock = FakeClock()
    plane = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    quiet = {"lease_renew_interval": 1e6, "status_report_interval": 1e6}
    plane.register("node-agent", node_agent_factory(FLEET, time_scale=1.0, **quiet))
    try:
        a = await plane.start_component("node-agent")
        assert isinstance(a, NodeAgent)
        await nodes_ready(plane.client("wait"), FLEET.names())
        yield plane, clock, a
    finally:
        await plane.stop()


async def idle(agent: NodeAgent) -> None:
    """The agent has nothing queued or running (its timers may still be pending)."""
    await agent.wait_idle(5.0)


async def step(clock: FakeClock, agent: NodeAgent, seconds: float) -> int:
    """Advance fake time and fire what became due; returns how many deadlines fired."""
    clock.step(seconds)
    fired = agent.timers.fire_due()
    await idle(agent)
    return fired


# ============================================================================ start, admission


async def test_a_pod_bound_through_binding_becomes_running_and_ready(
    agent: NodeAgent, client: Client
) -> None:
    await client.create(PODS, pod("web", init=True), "default")
    await bind(client, "web", "node-1")
    p = await wait_pod(client, "web", ready)
    assert p is not None and running(p)
    st = p["status"]
    node = await client.get(NODES, "node-1")
    assert st["hostIP"] == node["status"]["addresses"][0]["address"] and st["hostIPs"] == [
        {"ip": st["hostIP"]}
    ]
    assert ipaddress.ip_address(st["podIP"]) in ipaddress.ip_network(node["spec"]["podCIDR"])
    assert st["podIPs"] == [{"ip": st["podIP"]}] and st["startTime"]
    assert all(c["status"] == "True" for c in st["conditions"])
    assert {c["type"] for c in st["conditions"]} == {
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    }
    c = cs(p)
    assert c["ready"] and c["started"] and c["restartCount"] == 0 and "running" in c["state"]
    assert (
        c["image"] == "registry.k8s.io/pause:3.10"
        and c["imageID"]
        and c["containerID"].startswith("containerd://")
    )
    assert st["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    started = await wait_events(client, "web", "Started", 2)
    assert {e["source"]["component"] for e in started} == {"kubelet"} and started[0]["source"][
        "host"
    ] == "node-1"
    assert {e["involvedObject"].get("fieldPath") for e in started} == {
        "spec.initContainers{setup}",
        "spec.containers{app}",
    }


async def test_pods_get_distinct_ips_from_their_nodes_range(agent: NodeAgent, client: Client) -> None:
    for i in range(3):
        await client.create(PODS, pod(f"p{i}", node="node-0", cpu="100m"), "default")
    ips = [(await wait_pod(client, f"p{i}", ready) or {})["status"]["podIP"] for i in range(3)]
    assert len(set(ips)) == 3


async def test_a_pod_exceeding_allocatable_fails_with_out_of_cpu(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("big", node="node-0", cpu="3"), "default")
    await wait_pod(client, "big", ready)
    await client.create(PODS, pod("too-big", node="node-0", cpu="2"), "default")
    p = await wait_pod(client, "too-big", lambda o: phase(o) == "Failed")
    assert p is not None
    assert p["status"]["reason"] == "OutOfcpu"
    assert p["status"]["message"] == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000"
    )
    ev = await wait_events(client, "too-big", "OutOfcpu")
    assert ev[0]["type"] == "Warning" and ev[0]["message"].startswith("Node didn't have enough resource: cpu")
    # the rejected pod holds nothing: a pod that fits is still admitted
    await client.create(PODS, pod("fits", node="node-0", cpu="1"), "default")
    await wait_pod(client, "fits", ready)
    assert agent.node_usage("node-0") == {"cpu": 4000, "pods": 2}


async def test_a_pod_asking_for_a_gpu_the_node_lacks_is_refused(agent: NodeAgent, client: Client) -> None:
    p = pod("gpu", node="node-0")
    p["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    p["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    await client.create(PODS, p, "default")
    got = await wait_pod(client, "gpu", lambda o: phase(o) == "Failed")
    assert got is not None and got["status"]["reason"] == "UnexpectedAdmissionError"


# ============================================================================ behaviour annotations


async def test_never_ready_keeps_the_pod_running_but_unready(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("nr", node="node-0", annotations={NEVER_READY: "true"}), "default")
    p = await wait_pod(client, "nr", running)
    await idle(agent)
    p = await client.get(PODS, "nr", "default")
    assert not ready(p) and cond_status(p, "ContainersReady") == "False" and not cs(p)["ready"]
    assert cs(p)["started"] and agent.timers.due_at(("pod", "default/nr")) is None, "nothing left to happen"


async def test_ready_after_delays_readiness_exactly(fake: tuple[ControlPlane, FakeClock, NodeAgent]) -> None:
    cp, clock, agent = fake
    client = cp.client("test")
    await client.create(PODS, pod("slow", node="node-0", annotations={READY_AFTER: "2s"}), "default")
    await wait_pod(client, "slow", running)
    await idle(agent)
    assert not ready(await client.get(PODS, "slow", "default"))
    assert await step(clock, agent, 1.5) == 0
    assert not ready(await client.get(PODS, "slow", "default"))
    assert await step(clock, agent, 0.5) == 1
    await wait_pod(client, "slow", ready)


async def test_crash_loops_with_back_off_and_growing_restart_count(
    fake: tuple[ControlPlane, FakeClock, NodeAgent],
) -> None:
    cp, clock, agent = fake
    client = cp.client("test")
    await client.create(PODS, pod("crashy", node="node-0", annotations={CRASH: "true"}), "default")
    await wait_pod(client, "crashy", running)
    await step(clock, agent, 1)  # the container exits after a second
    p = await wait_pod(client, "crashy", lambda o: "waiting" in cs(o).get("state", {}))
    assert p is not None and cs(p)["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs(p)["restartCount"] == 0 and cs(p)["lastState"]["terminated"]["exitCode"] == 1
    assert running(p) and not ready(p)
    assert await step(clock, agent, 9) == 0
    await step(clock, agent, 1)  # 10 s back-off over: restarted
    p = await wait_pod(
        client, "crashy", lambda o: cs(o).get("restartCount") == 1 and "running" in cs(o).get("state", {})
    )
    await step(clock, agent, 1)
    p = await wait_pod(client, "crashy", lambda o: "waiting" in cs(o).get("state", {}))
    assert p is not None and "back-off 20s" in cs(p)["state"]["waiting"]["message"]
    backoffs = await wait_events(client, "crashy", "BackOff", 2)
    assert (
        backoffs[0]["type"] == "Warning"
        and "Back-off restarting failed container app in pod crashy_default(" in backoffs[0]["message"]
    )


async def test_fail_makes_the_pod_failed_with_exit_code_1(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("bad", node="node-0", annotations={FAIL: "true"}), "default")
    p = await wait_pod(client, "bad", lambda o: phase(o) == "Failed")
    assert p is not None
    term = cs(p)["state"]["terminated"]
    assert term["exitCode"] == 1 and term["reason"] == "Error" and not ready(p)
    await idle(agent)
    assert agent.node_usage("node-0") == {"pods": 0}, "a failed pod gives its resources back"


async def test_complete_after_finishes_a_run_to_completion_pod(
    fake: tuple[ControlPlane, FakeClock, NodeAgent],
) -> None:
    cp, clock, agent = fake
    client = cp.client("test")
    await client.create(
        PODS, pod("job", node="node-1", restart="Never", annotations={COMPLETE_AFTER: "5s"}), "default"
    )
    await wait_pod(client, "job", ready)
    assert await step(clock, agent, 4) == 0
    assert await step(clock, agent, 1) == 1
    p = await wait_pod(client, "job", lambda o: phase(o) == "Succeeded")
    assert (
        p is not None
        and cs(p)["state"]["terminated"]["exitCode"] == 0
        and cs(p)["state"]["terminated"]["reason"] == "Completed"
    )
    assert cond_status(p, "Ready") == "False"


# ============================================================================ termination


async def test_graceful_deletion_removes_the_pod_after_the_grace_period(
    fake: tuple[ControlPlane, FakeClock, NodeAgent],
) -> None:
    cp, clock, agent = fake
    client = cp.client("test")
    await client.create(PODS, pod("term", node="node-0", grace=30), "default")
    await wait_pod(client, "term", ready)
    await client.delete(PODS, "term", "default")
    killing = await wait_events(client, "term", "Killing")
    assert killing[0]["message"] == "Stopping container app"
    await idle(agent)
    p = await client.get(PODS, "term", "default")
    assert p["metadata"]["deletionTimestamp"] and ready(p), "containers keep running through the grace period"
    assert await step(clock, agent, 29) == 0
    assert (await client.get(PODS, "term", "default"))["metadata"]["deletionGracePeriodSeconds"] == 30
    assert await step(clock, agent, 1) == 1
    await wait_pod(client, "term", lambda o: o is None)
    assert agent.node_usage("node-0") == {"pods": 0}


async def test_graceful_deletion_is_scaled_by_time_scale(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("quick", node="node-0", grace=30), "default")
    await wait_pod(client, "quick", ready)
    await client.delete(PODS, "quick", "default")
    assert (await client.get(PODS, "quick", "default"))["metadata"]["deletionTimestamp"]
    await wait_pod(client, "quick", lambda o: o is None, timeout=5)  # 30 s x 0.01


async def test_grace_zero_removes_at_once_and_frees_the_node(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("a", node="node-1", cpu="4"), "default")
    await wait_pod(client, "a", ready)
    await client.delete(PODS, "a", "default", grace_period_seconds=0)
    await wait_pod(
        client, "a", lambda o: o is None, timeout=10
    )  # a hang guard only: the time scale makes every grace short
    await client.create(PODS, pod("b", node="node-1", cpu="4"), "default")
    await wait_pod(client, "b", ready)


async def test_a_pod_deleted_before_it_started_goes_at_once(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("huge", node="node-0", cpu="64"), "default")
    await wait_pod(client, "huge", lambda o: phase(o) == "Failed")
    await client.delete(PODS, "huge", "default")
    await wait_pod(client, "huge", lambda o: o is None, timeout=2)


async def test_a_recreated_pod_with_the_same_name_starts_afresh(agent: NodeAgent, client: Client) -> None:
    await client.create(PODS, pod("web-0", node="node-0", cpu="3"), "default")
    first = await wait_pod(client, "web-0", ready)
    await client.delete(PODS, "web-0", "default", grace_period_seconds=0)
    await wait_pod(client, "web-0", lambda o: o is None)
    await client.create(PODS, pod("web-0", node="node-0", cpu="3"), "default")
    second = await wait_pod(
        client, "web-0", lambda o: ready(o) and o["metadata"]["uid"] != first["metadata"]["uid"]
    )  # type: ignore[index]
    assert second is not None and agent.node_usage("node-0") == {"cpu": 3000, "pods": 1}


async def test_the_agent_leaves_pods_of_unsimulated_nodes_alone(cp: ControlPlane, client: Client) -> None:
    cp.register("node-agent", node_agent_factory(Fleet.empty(), time_scale=0.01))
    agent = await cp.start_component("node-agent")
    assert isinstance(agent, NodeAgent)
    await client.create(
        NODES,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "real", "labels": {"gangplane.dev/simulated": "false"}},
            "status": {"capacity": {"cpu": "4", "pods": "10"}},
        },
    )
    await client.create(PODS, pod("mine", node="real"), "default")
    await wait_obj(client, PODS, "mine", "default", lambda o: o is not None)
    await idle(agent)
    assert phase(await client.get(PODS, "mine", "default")) == "Pending"
    assert "conditions" not in (await client.get(NODES, "real"))["status"]


# ============================================================================ the status write


def _without(obj: Obj, *meta_keys: str) -> Obj:
    """``obj`` without the given metadata keys and with each managedFields entry's ``time`` left out."""
    md = {k: v for k, v in obj["metadata"].items() if k not in meta_keys}
    md["managedFields"] = [{k: v for k, v in e.items() if k != "time"} for e in md.get("managedFields") or []]
    return {**obj, "metadata": md}


async def test_the_status_write_without_managed_fields_stores_what_the_full_body_would(
    cp: ControlPlane, client: Client
) -> None:
    """The agent leaves managedFields out of its ``pods/status`` body (as kubelet's status patch
    does): the server keeps the stored entries and records the status change against them, so the
    stored pod is the one a body carrying the entries back makes (two twin pods, one write each)."""
    kubelet = cp.client("kubelet")
    for name in ("a", "b"):
        await client.create(PODS, pod(name, annotations={"note": "x"}), "default")
        await bind(client, name, "node-1")
    a, b = [await kubelet.get(PODS, n, "default") for n in ("a", "b")]
    assert a["metadata"]["managedFields"] and b["metadata"]["managedFields"]
    status = {
        **a["status"],
        "phase": "Running",
        "hostIP": "10.0.0.2",
        "podIP": "10.244.1.7",
        "podIPs": [{"ip": "10.244.1.7"}],
        "containerStatuses": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            }
        ],
    }
    body_a = status_write_body(a, status)
    assert "managedFields" not in body_a["metadata"] and "managedFields" in a["metadata"]  # a is not modified
    assert body_a["metadata"]["resourceVersion"] == a["metadata"]["resourceVersion"]
    wrote_a = await kubelet.update_status(PODS, body_a)
    wrote_b = await kubelet.update_status(PODS, {**b, "status": status})
    managers = [(e["manager"], e.get("subresource", "")) for e in wrote_a["metadata"]["managedFields"]]
    assert sorted(managers) == [("kubelet", "status"), ("test", "")]
    volatile = ("name", "uid", "resourceVersion", "creationTimestamp")
    assert _without(wrote_a, *volatile) == _without(wrote_b, *volatile)
    stored_a = await client.get(PODS, "a", "default")
    assert stored_a == wrote_a


async def test_an_agent_started_pod_keeps_its_creators_managed_fields(
    agent: NodeAgent, client: Client
) -> None:
    created = await client.create(PODS, pod("web"), "default")
    await bind(client, "web", "node-1")
    p = await wait_pod(client, "web", ready)
    assert p is not None
    entries = {(e["manager"], e.get("subresource", "")): e for e in p["metadata"]["managedFields"]}
    (creator,) = created["metadata"]["managedFields"]
    assert entries[("test", "")] == creator
    status_entry = entries[(agent.client.user_agent, "status")]
    assert {"f:phase", "f:podIP", "f:podIPs", "f:containerStatuses", "f:conditions"} <= set(
        status_entry["fieldsV1"]["f:status"]
    )
