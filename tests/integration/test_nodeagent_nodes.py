"""Node agent, nodes: registration, readiness and the not-ready taint, heartbeats, API-created and
deleted nodes, DRA devices, and a restart that adopts running pods."""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import DEVICECLASSES, EVENTS, LEASES, NODES, PODS, RESOURCESLICES, Client
from apiserver.meta import FakeClock, parse_time
from controllers.fleet import Fleet, default_fleet, parse_fleet
from controllers.nodeagent import NodeAgent, node_agent_factory
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.test_nodeagent_pods import (
    cond_status,
    idle,
    nodes_ready,
    phase,
    pod,
    ready,
    wait_obj,
    wait_pod,
)

pytestmark = pytest.mark.anyio

NOT_READY = "node.kubernetes.io/not-ready"
FLEET = parse_fleet(
    {
        "deviceClasses": [{"name": "accel.example.com"}],
        "nodes": [
            {
                "name": "w-{index}",
                "count": 2,
                "zones": ["z1"],
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                "taints": [{"key": "dedicated", "value": "test", "effect": "PreferNoSchedule"}],
                "devices": [
                    {
                        "driver": "accel.example.com",
                        "count": 2,
                        "name": "acc-{d}",
                        "attributes": {"model": "x1", "cores": 4},
                    }
                ],
            }
        ],
    }
)


async def start(cp: ControlPlane, fleet: Fleet, **options: Any) -> NodeAgent:
    cp.register("node-agent", node_agent_factory(fleet, **{"time_scale": 0.001, **options}))
    agent = await cp.start_component("node-agent")
    assert isinstance(agent, NodeAgent)
    return agent


def taint_keys(o: Obj | None) -> list[str]:
    return [t["key"] for t in ((o or {}).get("spec") or {}).get("taints") or []]


async def test_fleet_nodes_become_ready_and_lose_the_not_ready_taint(
    cp: ControlPlane, client: Client
) -> None:
    agent = await start(cp, FLEET)
    n = await wait_obj(
        client,
        NODES,
        "w-1",
        "",
        lambda o: cond_status(o, "Ready") == "True" and NOT_READY not in taint_keys(o),
    )
    assert n is not None
    assert taint_keys(n) == ["dedicated"], "the fleet's own taints stay"
    st = n["status"]
    assert {c["type"]: c["status"] for c in st["conditions"]} == {
        "NetworkUnavailable": "False",
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
        "Ready": "True",
    }
    ready_cond = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert (
        ready_cond["reason"] == "KubeletReady" and ready_cond["message"] == "kubelet is posting ready status"
    )
    assert ready_cond["lastHeartbeatTime"]
    assert st["nodeInfo"]["kubeletVersion"] == "v1.37.0" and st["nodeInfo"][
        "containerRuntimeVersion"
    ].startswith("containerd://")
    assert st["nodeInfo"]["osImage"] and st["nodeInfo"]["architecture"] == "amd64"
    assert st["allocatable"] == st["capacity"] and st["capacity"]["cpu"] == "4"
    assert st["addresses"] == [
        {"type": "InternalIP", "address": "172.16.0.3"},
        {"type": "Hostname", "address": "w-1"},
    ]
    assert n["spec"]["podCIDR"] == "10.128.1.0/24" and n["spec"]["podCIDRs"] == ["10.128.1.0/24"]
    assert n["metadata"]["labels"]["topology.kubernetes.io/zone"] == "z1"
    lease = await wait_obj(client, LEASES, "w-1", "kube-node-lease", lambda o: o is not None)
    assert (
        lease is not None
        and lease["spec"]["holderIdentity"] == "w-1"
        and lease["spec"]["leaseDurationSeconds"] == 40
    )
    assert lease["metadata"]["ownerReferences"][0]["uid"] == n["metadata"]["uid"]
    await agent.flush_events()
    reasons = {
        e["reason"]
        for e in (await client.list(EVENTS, "default"))["items"]
        if e["involvedObject"]["name"] == "w-1"
    }
    assert {"Starting", "NodeReady", "NodeHasSufficientMemory"} <= reasons


async def test_fleet_devices_are_published_as_resource_slices(cp: ControlPlane, client: Client) -> None:
    await start(cp, FLEET)
    await nodes_ready(client, ["w-0", "w-1"])
    dc = await wait_obj(client, DEVICECLASSES, "accel.example.com", "", lambda o: o is not None)
    assert dc is not None and dc["spec"]["selectors"] == [
        {"cel": {"expression": 'device.driver == "accel.example.com"'}}
    ]
    sl = await wait_obj(client, RESOURCESLICES, "w-0-accel.example.com", "", lambda o: o is not None)
    assert sl is not None
    assert sl["spec"]["nodeName"] == "w-0" and sl["spec"]["driver"] == "accel.example.com"
    assert sl["spec"]["pool"] == {"name": "w-0", "generation": 1, "resourceSliceCount": 1}
    assert sl["spec"]["devices"] == [
        {"name": "acc-0", "attributes": {"model": {"string": "x1"}, "cores": {"int": 4}}},
        {"name": "acc-1", "attributes": {"model": {"string": "x1"}, "cores": {"int": 4}}},
    ]


async def test_a_node_created_through_the_api_is_simulated(cp: ControlPlane, client: Client) -> None:
    agent = await start(cp, FLEET)
    await nodes_ready(client, ["w-0", "w-1"])
    await client.create(
        NODES,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "byhand"},
            "spec": {"taints": [{"key": NOT_READY, "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "2", "pods": "3"}},
        },
    )
    n = await wait_obj(
        client, NODES, "byhand", "", lambda o: cond_status(o, "Ready") == "True" and not taint_keys(o)
    )
    assert n is not None and "taints" not in n["spec"]
    assert n["status"]["capacity"] == {
        "cpu": "2",
        "pods": "3",
        "memory": "128Gi",
        "ephemeral-storage": "500Gi",
    }
    assert n["status"]["addresses"][0] == {"type": "InternalIP", "address": "172.16.0.4"}, (
        "ordinal after the fleet"
    )
    cidr = n["spec"]["podCIDR"]
    await client.create(PODS, pod("hand-made", node="byhand", cpu="500m"), "default")
    p = await wait_pod(client, "hand-made", ready)
    assert p is not None and ipaddress.ip_address(p["status"]["podIP"]) in ipaddress.ip_network(cidr)
    for i in range(3):  # pods: 3 -> the fourth is refused
        if i:
            await client.create(PODS, pod(f"filler-{i}", node="byhand", cpu="1m"), "default")
            await wait_pod(client, f"filler-{i}", ready)
    await client.create(PODS, pod("one-too-many", node="byhand", cpu="1m"), "default")
    rej = await wait_pod(client, "one-too-many", lambda o: phase(o) == "Failed")
    assert rej is not None and rej["status"]["reason"] == "OutOfpods"
    assert agent.node_usage("byhand")["pods"] == 3


async def test_a_node_labelled_not_simulated_is_left_alone(cp: ControlPlane, client: Client) -> None:
    agent = await start(cp, Fleet.empty())
    await client.create(
        NODES,
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "real", "labels": {"gangplane.dev/simulated": "false"}},
        },
    )
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "sim"}})
    await nodes_ready(client, ["sim"])
    await idle(agent)
    real = await client.get(NODES, "real")
    assert not (real.get("status") or {}).get("conditions") and not (real.get("spec") or {}).get("podCIDR")
    assert [x["metadata"]["name"] for x in (await client.list(LEASES, "kube-node-lease"))["items"]] == ["sim"]


async def test_deleting_a_node_deletes_its_pods(cp: ControlPlane, client: Client) -> None:
    await start(cp, FLEET)
    await nodes_ready(client, ["w-0", "w-1"])
    for i in range(2):
        await client.create(PODS, pod(f"on-w0-{i}", node="w-0", cpu="100m"), "default")
        await wait_pod(client, f"on-w0-{i}", ready)
    await client.create(PODS, pod("on-w1", node="w-1", cpu="100m"), "default")
    await wait_pod(client, "on-w1", ready)
    await wait_obj(client, LEASES, "w-0", "kube-node-lease", lambda o: o is not None)
    await client.delete(NODES, "w-0")
    for i in range(2):
        await wait_pod(client, f"on-w0-{i}", lambda o: o is None)  # 40 s quarantine x 0.001
    await wait_obj(client, LEASES, "w-0", "kube-node-lease", lambda o: o is None)
    await wait_obj(client, RESOURCESLICES, "w-0-accel.example.com", "", lambda o: o is None)
    assert ready(await client.get(PODS, "on-w1", "default")), "pods of other nodes are untouched"


@pytest.fixture
async def fake() -> AsyncIterator[tuple[ControlPlane, FakeClock]]:
    clock = FakeClock()
    plane = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    try:
        yield plane, clock
    finally:
        await plane.stop()


async def test_heartbeats_renew_the_lease_often_and_the_status_rarely(
    fake: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = fake
    client = cp.client("test")
    one = parse_fleet({"nodes": [{"name": "hb", "capacity": {"cpu": "1", "pods": "5"}}]})
    agent = await start(cp, one, time_scale=1.0, lease_renew_interval=10, status_report_interval=60)
    await nodes_ready(client, ["hb"])
    lease = await wait_obj(client, LEASES, "hb", "kube-node-lease", lambda o: o is not None)
    assert lease is not None
    t0 = parse_time(lease["spec"]["renewTime"])
    node = await client.get(NODES, "hb")
    hb0 = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["lastHeartbeatTime"]
    await idle(agent)
    clock.step(10)
    agent.timers.fire_due()
    lease = await wait_obj(
        client, LEASES, "hb", "kube-node-lease", lambda o: parse_time((o or {})["spec"]["renewTime"]) != t0
    )
    assert lease is not None and parse_time(lease["spec"]["renewTime"]) == pytest.approx(t0 + 10)  # type: ignore[operator]
    node = await client.get(NODES, "hb")
    assert next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["lastHeartbeatTime"] == hb0
    for _ in range(5):
        clock.step(10)
        agent.timers.fire_due()
        await idle(agent)
    node = await wait_obj(
        client,
        NODES,
        "hb",
        "",
        lambda o: (
            next(c for c in o["status"]["conditions"] if c["type"] == "Ready")["lastHeartbeatTime"] != hb0
        ),  # type: ignore[index]
    )
    assert node is not None


async def test_a_lease_renewal_keeps_what_others_added_and_recreates_a_deleted_lease(
    fake: tuple[ControlPlane, FakeClock],
) -> None:
    """kubelet renews the Lease it last wrote (a copy with a new renewTime): a label another
    client added survives the renewal (after one conflict), and a deleted Lease is created again."""
    cp, clock = fake
    client = cp.client("test")
    one = parse_fleet({"nodes": [{"name": "hb", "capacity": {"cpu": "1", "pods": "5"}}]})
    agent = await start(cp, one, time_scale=1.0, lease_renew_interval=10, status_report_interval=600)
    await nodes_ready(client, ["hb"])
    lease = await wait_obj(client, LEASES, "hb", "kube-node-lease", lambda o: o is not None)
    assert lease is not None
    await idle(agent)
    t0 = parse_time(lease["spec"]["renewTime"])
    lease["metadata"]["labels"] = {"team": "infra"}
    lease = await client.update(LEASES, lease, "kube-node-lease")
    for n in (1, 2):
        clock.step(10)
        agent.timers.fire_due()
        renewed = await wait_obj(
            client,
            LEASES,
            "hb",
            "kube-node-lease",
            lambda o, n=n: parse_time((o or {})["spec"]["renewTime"]) == pytest.approx(t0 + 10 * n),  # type: ignore[operator]
        )
        assert renewed is not None
        assert renewed["metadata"].get("labels") == {"team": "infra"}
        assert renewed["spec"]["holderIdentity"] == "hb"
        assert renewed["metadata"]["ownerReferences"][0]["name"] == "hb"
        await idle(agent)
    await client.delete(LEASES, "hb", "kube-node-lease")
    clock.step(10)
    agent.timers.fire_due()
    again = await wait_obj(client, LEASES, "hb", "kube-node-lease", lambda o: o is not None)
    assert again is not None and again["metadata"]["uid"] != lease["metadata"]["uid"]
    assert parse_time(again["spec"]["renewTime"]) == pytest.approx(t0 + 30)  # type: ignore[operator]
    assert again["spec"]["leaseDurationSeconds"] == 40


async def test_a_restarted_agent_adopts_running_pods(cp: ControlPlane, client: Client) -> None:
    one = parse_fleet({"nodes": [{"name": "solo", "capacity": {"cpu": "4", "pods": "10"}}]})
    await start(cp, one)
    await nodes_ready(client, ["solo"])
    await client.create(PODS, pod("old", node="solo", cpu="3"), "default")
    old = await wait_pod(client, "old", ready)
    assert old is not None
    await cp.stop_component("node-agent")
    await client.create(PODS, pod("new", node="solo", cpu="2"), "default")
    agent = await start(cp, one)
    rej = await wait_pod(client, "new", lambda o: phase(o) == "Failed")
    assert rej is not None and rej["status"]["reason"] == "OutOfcpu", (
        "the running pod was counted before admitting"
    )
    await idle(agent)
    again = await client.get(PODS, "old", "default")
    assert again["metadata"]["resourceVersion"] == old["metadata"]["resourceVersion"], (
        "no rewrite of an adopted pod"
    )
    assert agent.node_usage("solo") == {"cpu": 3000, "pods": 1}


async def test_the_default_fleet_comes_up(cp: ControlPlane, client: Client) -> None:
    fleet = default_fleet()
    await start(cp, fleet)
    await nodes_ready(client, fleet.names())
    gpu = await client.get(NODES, "gpu-zone-b-rack-1-3")
    assert gpu["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert gpu["metadata"]["labels"]["topology.kubernetes.io/rack"] == "zone-b-rack-1"
    slices = (await client.list(RESOURCESLICES))["items"]
    by_driver = Counter(s["spec"]["driver"] for s in slices)
    assert by_driver == {"gpu.example.com": 16, "shared-accelerator.example.com": 4}
    rack = next(s for s in slices if s["metadata"]["name"] == "zone-a-rack-1-shared-accelerator.example.com")
    assert rack["spec"]["nodeSelector"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "topology.kubernetes.io/rack", "operator": "In", "values": ["zone-a-rack-1"]}
                ]
            }
        ]
    }
    await asyncio.sleep(0)


async def test_a_pod_bound_before_its_node_exists_starts_when_the_node_appears(
    cp: ControlPlane, client: Client
) -> None:
    await start(cp, Fleet.empty(), time_scale=1.0)  # the 40 s orphan quarantine is real time here
    await client.create(PODS, pod("early", node="late-node", cpu="100m"), "default")
    await client.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late-node"}})
    p = await wait_pod(client, "early", ready, timeout=5)
    assert p is not None and p["spec"]["nodeName"] == "late-node"
