"""Node lifecycle and taint-based eviction on a fake clock: a node whose kubelet stops (the
``gangplane.dev/fault`` annotation) goes ``Ready=Unknown`` after the grace period, is tainted
``unreachable`` (NoSchedule at once, NoExecute at its zone's rate), its pods are marked not
Ready and evicted once their toleration runs out; recovery removes the taints.

The test steps a :class:`FakeClock` and fires each component's due timers itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, NODES, PODS, Client
from apiserver.meta import FakeClock
from controllers.fleet import parse_fleet
from controllers.nodeagent import NodeAgent, node_agent_factory
from controllers.nodeagent.node_annotations import FAULT
from controllers.nodelifecycle import (
    NodeLifecycleController,
    TaintEvictionController,
    node_lifecycle_factory,
    taint_eviction_factory,
)
from controllers.nodelifecycle.zones import FULL, NORMAL, PARTIAL
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.test_nodeagent_pods import nodes_ready, wait_obj, wait_pod

pytestmark = pytest.mark.anyio

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
FLEET = parse_fleet(
    {
        "nodes": [
            {
                "name": "n-{zone}-{index}",
                "count": 4,
                "zones": ["za", "zb"],
                "capacity": {"cpu": "8", "memory": "16Gi", "pods": "20"},
            }
        ]
    }
)


@dataclass
class Env:
    cp: ControlPlane
    clock: FakeClock
    agent: NodeAgent
    lc: NodeLifecycleController
    te: TaintEvictionController

    @property
    def client(self) -> Client:
        return self.cp.client("test")

    async def idle(self) -> None:
        for c in (self.agent, self.lc, self.te):
            await c.wait_idle(5.0)

    async def advance(self, seconds: float, tick: float = 5.0) -> None:
        """Move fake time forward in ticks, firing every component's deadlines at each tick."""
        left = seconds
        while left > 1e-9:
            dt = min(tick, left)
            self.clock.step(dt)
            left -= dt
            for c in (self.agent, self.lc, self.te):
                c.timers.fire_due()
                await c.wait_idle(5.0)
            await self.idle()


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    clock = FakeClock()
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    # kubelet's rates: a Lease renewal every 10 s, a full status every 5 minutes
    cp.register(
        "node-agent",
        node_agent_factory(FLEET, time_scale=1.0, lease_renew_interval=10.0, status_report_interval=300.0),
    )
    cp.register("node-lifecycle-controller", node_lifecycle_factory(time_scale=1.0))
    cp.register("taint-eviction-controller", taint_eviction_factory(time_scale=1.0))
    try:
        agent = await cp.start_component("node-agent")
        assert isinstance(agent, NodeAgent)
        await nodes_ready(cp.client("wait"), FLEET.names())
        lc = await cp.start_component("node-lifecycle-controller")
        te = await cp.start_component("taint-eviction-controller")
        assert isinstance(lc, NodeLifecycleController) and isinstance(te, TaintEvictionController)
        e = Env(cp, clock, agent, lc, te)
        await e.idle()
        yield e
    finally:
        await cp.stop()


def cond(obj: Obj | None, ctype: str) -> Obj:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return {}


def taints(obj: Obj | None) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in ((obj or {}).get("spec") or {}).get("taints") or []}


def pod(name: str, node: str, tolerations: list[Obj] | None = None) -> Obj:
    spec: Obj = {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def set_fault(client: Client, node: str, fault: str | None) -> None:
    await client.patch(NODES, node, {"metadata": {"annotations": {FAULT: fault}}})


async def event_reasons(client: Client, name: str) -> list[tuple[str, str, str]]:
    evs = (await client.list(EVENTS, "default"))["items"]
    return [
        (e["reason"], e["message"], e["source"].get("component", ""))
        for e in evs
        if e["involvedObject"]["name"] == name
    ]


async def test_unreachable_node_goes_unknown_is_tainted_and_its_pods_are_evicted(env: Env) -> None:
    client = env.client
    await client.create(PODS, pod("short", "n-za-0"), "default")  # the 300 s admission defaults
    forever = [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}]
    await client.create(PODS, pod("stays", "n-za-0", forever), "default")
    for name in ("short", "stays"):
        await wait_pod(client, name, lambda o: cond(o, "Ready").get("status") == "True")
    await set_fault(client, "n-za-0", "unreachable")
    await env.idle()

    await env.advance(45)  # inside the 50 s grace period: nothing happens
    node = await client.get(NODES, "n-za-0")
    assert cond(node, "Ready")["status"] == "True"
    assert taints(node) == set()

    await env.advance(10)
    node = await wait_obj(client, NODES, "n-za-0", "", lambda o: cond(o, "Ready").get("status") == "Unknown")
    for ctype in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        c = cond(node, ctype)
        assert (c["status"], c["reason"], c["message"]) == (
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        ), ctype
    node = await wait_obj(client, NODES, "n-za-0", "", lambda o: (UNREACHABLE, "NoExecute") in taints(o))
    assert taints(node) == {(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")}
    # the other nodes keep heartbeating
    assert cond(await client.get(NODES, "n-za-1"), "Ready")["status"] == "True"
    # MarkPodsNotReady and the node's NodeNotReady event
    p = await wait_pod(client, "short", lambda o: cond(o, "Ready").get("status") == "False")
    assert cond(p, "Ready")["status"] == "False"
    assert ("NodeNotReady", "Node is not ready", "node-controller") in await event_reasons(client, "short")
    assert (
        "NodeNotReady",
        "Node n-za-0 status is now: NodeNotReady",
        "node-controller",
    ) in await event_reasons(client, "n-za-0")
    assert env.lc.zone_states() == {"::\x00:za": NORMAL, "::\x00:zb": NORMAL} or set(
        env.lc.zone_states().values()
    ) == {NORMAL}

    await env.advance(290)  # tolerated for 300 s from when the taint was seen
    p = await client.get(PODS, "short", "default")
    assert not p["metadata"].get("deletionTimestamp")
    await env.advance(15)
    p = await wait_pod(client, "short", lambda o: o is None or bool(o["metadata"].get("deletionTimestamp")))
    assert p is not None  # the kubelet is gone: the pod stays Terminating, as on a real cluster
    dt = cond(p, "DisruptionTarget")
    assert (dt["status"], dt["reason"], dt["message"]) == (
        "True",
        "DeletionByTaintManager",
        "Taint manager: deleting due to NoExecute taint",
    )
    assert (
        "TaintManagerEviction",
        "Marking for deletion Pod default/short",
        "taint-eviction-controller",
    ) in await event_reasons(client, "short")
    stays = await client.get(PODS, "stays", "default")
    assert not stays["metadata"].get("deletionTimestamp")

    # recovery: the kubelet heartbeats again, the taints go
    await set_fault(client, "n-za-0", None)
    await env.idle()
    await env.advance(5)
    node = await wait_obj(
        client, NODES, "n-za-0", "", lambda o: cond(o, "Ready").get("status") == "True" and not taints(o)
    )
    assert taints(node) == set()


async def test_not_ready_kubelet_is_tainted_not_ready_and_evicted_pods_go(env: Env) -> None:
    client = env.client
    quick = [{"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}]
    body = pod("quick", "n-zb-1", quick)
    body["spec"]["terminationGracePeriodSeconds"] = 0
    await client.create(PODS, body, "default")
    await wait_pod(client, "quick", lambda o: cond(o, "Ready").get("status") == "True")
    await set_fault(client, "n-zb-1", "not-ready")
    node = await wait_obj(client, NODES, "n-zb-1", "", lambda o: cond(o, "Ready").get("status") == "False")
    c = cond(node, "Ready")
    assert (c["reason"], c["message"]) == ("KubeletNotReady", "container runtime is down")
    await env.idle()
    await env.advance(5)
    node = await wait_obj(client, NODES, "n-zb-1", "", lambda o: (NOT_READY, "NoExecute") in taints(o))
    assert taints(node) == {(NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")}
    await env.advance(10)
    assert (await client.get(PODS, "quick", "default"))["metadata"].get("deletionTimestamp") is None
    await env.advance(15)
    # the kubelet still runs: the evicted pod really goes
    assert await wait_pod(client, "quick", lambda o: o is None) is None
    await set_fault(client, "n-zb-1", None)
    await wait_obj(
        client, NODES, "n-zb-1", "", lambda o: cond(o, "Ready").get("status") == "True" and not taints(o)
    )


async def test_zone_rate_limit_and_partial_then_full_disruption(env: Env) -> None:
    client = env.client
    for i in range(3):
        await set_fault(client, f"n-za-{i}", "unreachable")
    await env.idle()
    await env.advance(55)
    za = next(z for z in env.lc.zone_states() if z.endswith("za"))
    # 3 of 4 down (>= 0.55): PartialDisruption; a small zone then taints no more nodes (rate 0)
    await env.advance(5)
    assert env.lc.zone_states()[za] == PARTIAL
    tainted = [
        n
        for n in ("n-za-0", "n-za-1", "n-za-2")
        if (UNREACHABLE, "NoExecute") in taints(await client.get(NODES, n))
    ]
    assert len(tainted) <= 1  # the first one may have gone through while the zone was Normal
    assert env.lc.pending_taints(za) == 3 - len(tainted)
    for n in ("n-za-0", "n-za-1", "n-za-2"):
        assert (UNREACHABLE, "NoSchedule") in taints(await client.get(NODES, n))

    # the last node of the zone fails: FullDisruption taints at the normal rate (0.1/s: one per 10 s)
    await set_fault(client, "n-za-3", "unreachable")
    await env.idle()
    await env.advance(55)
    assert env.lc.zone_states()[za] == FULL
    await env.advance(40)
    down = [n for n in FLEET.names() if n.startswith("n-za")]
    for n in down:
        await wait_obj(client, NODES, n, "", lambda o: (UNREACHABLE, "NoExecute") in taints(o))
    await env.advance(10)  # a node queued again from a cache that had not seen its taint yet leaves
    assert env.lc.pending_taints(za) == 0


async def test_every_zone_down_is_master_disruption_mode(env: Env) -> None:
    client = env.client
    for n in FLEET.names():
        await set_fault(client, n, "unreachable")
    await env.idle()
    await env.advance(60)
    assert set(env.lc.zone_states().values()) == {FULL}
    for n in FLEET.names():
        node = await client.get(NODES, n)
        assert cond(node, "Ready")["status"] == "Unknown"
        assert (UNREACHABLE, "NoExecute") not in taints(node)  # nothing is evicted
        assert (UNREACHABLE, "NoSchedule") in taints(node)


async def test_no_execute_taints_follow_the_zone_eviction_rate(env: Env) -> None:
    """Two nodes of a healthy zone fail together: one is tainted at once, the next 10 s later
    (``--node-eviction-rate`` 0.1, burst 1); the NoSchedule taints are not rate-limited."""
    client = env.client
    pair = ("n-zb-0", "n-zb-1")
    for n in pair:
        await set_fault(client, n, "unreachable")
    await env.idle()
    await env.advance(55, tick=5)
    for n in pair:
        await wait_obj(client, NODES, n, "", lambda o: (UNREACHABLE, "NoSchedule") in taints(o))
    first = [n for n in pair if (UNREACHABLE, "NoExecute") in taints(await client.get(NODES, n))]
    assert len(first) == 1
    zb = next(z for z in env.lc.zone_states() if z.endswith("zb"))
    assert env.lc.zone_states()[zb] == NORMAL and env.lc.pending_taints(zb) == 1
    # the first went through at t=50 (the grace period); the next token comes 10 s later
    await env.advance(4, tick=1)
    assert len([n for n in pair if (UNREACHABLE, "NoExecute") in taints(await client.get(NODES, n))]) == 1
    await env.advance(1, tick=1)
    for n in pair:
        await wait_obj(client, NODES, n, "", lambda o: (UNREACHABLE, "NoExecute") in taints(o))
    rows = {z: (size, bad, evicted) for z, size, bad, evicted in env.lc.zone_rows()}
    assert rows[zb] == (4, 2, 2)  # node_collector_zone_size, _unhealthy_nodes_in_zone, _evictions
