"""Issue #17 "Restart semantics": every component of one control plane is stopped and started again
while the API server and its store keep running (``ControlPlane.stop_components()`` / ``start()``,
what restarting ``gangplane serve`` on the same data does to the components). They resume from the
stored state:

* the controllers re-list and converge on changes made while they were down, without duplicates
  (one ReplicaSet, one Workload, one PodGroup — the same objects);
* the scheduler rebuilds its cache from the bound pods: a new pod goes where there is room, and a
  pod that would only fit if the old ones were forgotten stays Pending;
* the node agent re-adopts its nodes and pods without restarting them: same pod objects (uid,
  resourceVersion), same startTime, containers' startedAt and restartCount 0, no second
  Scheduled/Started event.

Leader election is on (``gangplane serve``'s default); the graceful stop releases the Leases, so the
restarted components lead again at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import (
    DEPLOYMENTS,
    EVENTS,
    LEASES,
    NODES,
    PODGROUPS,
    PODS,
    REPLICASETS,
    STATEFULSETS,
    WORKLOADS,
)
from apiserver.client.leaderelection import LeaderElectionConfig
from apiserver.quantity import parse_quantity
from controllers.fleet import parse_fleet
from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
from gangplane.testing.waiters import wait_pods_running
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import min_count, wait_min_count
from tests.integration.scheduler_support import pod, wait_bound, wait_unschedulable

pytestmark = pytest.mark.anyio
NS = "default"
#: two nodes of 4 CPUs: the 3 gang pods and 2 web pods (600m each) leave 1 CPU on one node at most
FLEET = {"nodes": [{"name": "w-{i}", "count": 2, "capacity": {"cpu": "4", "memory": "16Gi", "pods": "20"}}]}


def gang(replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [_container("1")]},
            },
        },
    }


def web(replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [_container("600m")]},
            },
        },
    }


def _container(cpu: str) -> Obj:
    return {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}


def identity(p: Obj) -> tuple[Any, ...]:
    """What a restart of the pod would change: its object, start, containers and placement."""
    st = p["status"]
    containers = tuple(
        (
            c["name"],
            c["restartCount"],
            c.get("containerID"),
            (c.get("state") or {}).get("running", {}).get("startedAt"),
        )
        for c in st.get("containerStatuses") or []
    )
    return (
        p["metadata"]["uid"],
        p["metadata"]["resourceVersion"],
        p["spec"]["nodeName"],
        st.get("podIP"),
        st.get("startTime"),
        containers,
    )


@pytest.fixture
async def plane() -> AsyncIterator[tuple[ControlPlane, list[str]]]:
    cp = ControlPlane(
        ControlPlaneOptions(
            bookmark_interval=0.5, client_bookmark_interval=0.2, leader_election=LeaderElectionConfig()
        )
    )
    names = default_components(cp, parse_fleet(FLEET))
    await cp.start(names)
    try:
        yield cp, names
    finally:
        await cp.stop()


async def test_every_component_resumes_from_the_stored_state(plane: tuple[ControlPlane, list[str]]) -> None:
    cp, names = plane
    client = cp.client("test")
    await client.create(STATEFULSETS, gang(3), NS)
    await client.create(DEPLOYMENTS, web(2), NS)
    await wait_pods_running(client, "app=db", 3, namespace=NS, timeout=30)
    await wait_pods_running(client, "app=web", 2, namespace=NS, timeout=30)
    before = {p["metadata"]["name"]: p for p in (await client.list(PODS, NS))["items"]}
    nodes = {n["metadata"]["name"]: n["metadata"]["uid"] for n in (await client.list(NODES))["items"]}
    (wl,) = (await client.list(WORKLOADS, NS))["items"]
    (pg,) = (await client.list(PODGROUPS, NS))["items"]
    (rs,) = (await client.list(REPLICASETS, NS))["items"]
    old = {name: cp.components[name] for name in names}

    await cp.stop_components()
    assert cp.components == {}
    for lease in ("kube-controller-manager", "kube-scheduler", "gangplane-node-agent"):
        assert (await client.get(LEASES, lease, "kube-system"))["spec"]["holderIdentity"] == ""
    # while everything is down: both sets are scaled up
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 4}}, NS)
    await client.patch(DEPLOYMENTS, "web", {"spec": {"replicas": 3}}, NS)

    await cp.start(names)
    assert all(cp.components[name] is not old[name] for name in names)
    db = await wait_pods_running(client, "app=db", 4, namespace=NS, timeout=30)
    await wait_pods_running(client, "app=web", 3, namespace=NS, timeout=30)

    # controllers: converged on the same objects, nothing duplicated
    assert [o["metadata"]["uid"] for o in (await client.list(WORKLOADS, NS))["items"]] == [
        wl["metadata"]["uid"]
    ]
    assert [o["metadata"]["uid"] for o in (await client.list(PODGROUPS, NS))["items"]] == [
        pg["metadata"]["uid"]
    ]
    assert [o["metadata"]["uid"] for o in (await client.list(REPLICASETS, NS))["items"]] == [
        rs["metadata"]["uid"]
    ]
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 4)
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 4
    assert sorted(p["metadata"]["name"] for p in db) == ["db-0", "db-1", "db-2", "db-3"]

    # node agent: the same nodes, the old pods untouched (not restarted, not rewritten)
    assert {n["metadata"]["name"]: n["metadata"]["uid"] for n in (await client.list(NODES))["items"]} == nodes
    after = {p["metadata"]["name"]: p for p in (await client.list(PODS, NS))["items"]}
    for name, p in before.items():
        assert identity(after[name]) == identity(p), name
    assert all(c["restartCount"] == 0 for p in after.values() for c in p["status"]["containerStatuses"])

    # scheduler: its cache was rebuilt from the bound pods. A pod asking for exactly the most CPU
    # any node has left is placed there; one asking for 100m more fits nowhere (it would if the
    # scheduler had forgotten a pod bound before the restart)
    used: Counter[str] = Counter()
    for p in (await client.list(PODS))["items"]:
        if p["spec"].get("nodeName"):
            used[p["spec"]["nodeName"]] += sum(
                parse_quantity(c["resources"]["requests"]["cpu"]) for c in p["spec"]["containers"]
            )
    free = {n: 4.0 - used[n] for n in nodes}
    roomiest = max(free, key=lambda n: free[n])
    millis = round(free[roomiest] * 1000)
    assert 0 < millis < 4000, free
    await client.create(PODS, pod("big", cpu=f"{millis + 100}m"), NS)
    await wait_unschedulable(client, "big", NS)
    await client.create(PODS, pod("fits", cpu=f"{millis}m"), NS)
    assert (await wait_bound(client, "fits", NS))["spec"]["nodeName"] == roomiest

    # one Scheduled and one Started event per old pod: none of them was placed or started twice
    events = await wait_for_list(
        client, EVENTS, NS, lambda items: sum(e["reason"] == "Scheduled" for e in items) >= 8
    )
    for reason in ("Scheduled", "Started"):
        per_pod = Counter(e["involvedObject"]["name"] for e in events if e["reason"] == reason)
        assert all(per_pod[name] == 1 for name in before), (reason, per_pod)
