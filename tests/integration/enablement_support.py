"""KEP-6277 "Feature Enablement and Rollback" scenarios, written once against a restartable cluster.

A :class:`Cluster` is a client plus two ways to bring the control plane back: :meth:`restart`
(graceful stop, then start with other controller-manager gates, as
``gangplane serve --controller-manager-feature-gates …`` restarted on the same data) and
:meth:`crash` (stopped without releasing anything, as ``kill -9``, then started again). The
in-process cluster (:class:`InProcessCluster`) stops and starts every component of one
``ControlPlane`` while its API server and store keep running; the e2e tests run the same scenarios
against real ``gangplane serve --data-dir`` processes over HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from apiserver.api.types import Obj
from apiserver.client.interface import (
    EVENTS,
    PODGROUPS,
    PODS,
    PRIORITYCLASSES,
    STATEFULSETS,
    WORKLOADS,
    Client,
)
from apiserver.workloadbuilder import new_builder, pod_group_name, workload_name
from apiserver.workloadbuilder.statefulset import statefulset_build_options, statefulset_workload_item
from featuregates import WORKLOAD_WITH_STATEFULSET, FeatureGate
from featuregates.scopes import CONTROLLER_MANAGER
from gangplane.controlplane import ControlPlane, default_components
from gangplane.testing.waiters import wait_pods_running
from tests.helpers import wait_for_list, wait_for_object

NS = "default"
#: two simulated nodes of 6 CPUs each
FLEET: dict[str, Any] = {
    "nodes": [{"name": "w-{i}", "count": 2, "capacity": {"cpu": "6", "memory": "32Gi", "pods": "30"}}]
}
GATE_OFF = {WORKLOAD_WITH_STATEFULSET: False}


class Cluster(Protocol):
    client: Client

    async def restart(
        self, controller_manager_gates: Mapping[str, bool] | None = None, controllers: str = "*"
    ) -> None:
        """Stop gracefully; start again with these ``--controller-manager-feature-gates`` (None: none)
        and ``--controllers``."""
        ...

    async def crash(self) -> None:
        """Stop as ``kill -9`` would (no lease released); start again with the same flags."""
        ...


class InProcessCluster:
    """Every component of one ControlPlane restarted; the API server and its store keep running."""

    def __init__(self, cp: ControlPlane, fleet: Any, controllers: str = "*") -> None:
        self.cp = cp
        self.fleet = fleet
        self.names = default_components(cp, fleet, controllers)
        self.client: Client = cp.client("test")

    async def start(self) -> None:
        await self.cp.start(self.names)

    async def restart(
        self, controller_manager_gates: Mapping[str, bool] | None = None, controllers: str = "*"
    ) -> None:
        await self.cp.stop_components()
        if controller_manager_gates is None:
            self.cp.options.component_gates.pop(CONTROLLER_MANAGER, None)
        else:
            self.cp.options.component_gates[CONTROLLER_MANAGER] = dict(controller_manager_gates)
        self.names = default_components(self.cp, self.fleet, controllers)
        await self.cp.start(self.names)

    async def crash(self) -> None:
        await self.cp.stop_components(release=False)
        await self.cp.start(self.names)


# ---------------------------------------------------------------------------------- manifests
def gang_set(name: str, replicas: int, cpu: str, priority_class: str = "") -> Obj:
    spec: Obj = {
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }


def plain_pod(name: str, cpu: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


def expected_pod_group_name(sts: Obj) -> str:
    """The name the StatefulSet controller gives the set's PodGroup (KEP-6277 naming)."""
    wl = new_builder(
        statefulset_workload_item(sts, FeatureGate()), statefulset_build_options(sts)
    ).build_workload()
    template = wl["spec"]["podGroupTemplates"][0]["name"]
    return pod_group_name(workload_name(sts["metadata"]["name"], sts["metadata"]["uid"]), template)


# ---------------------------------------------------------------------------------- reads
def uid(o: Obj) -> str:
    return o["metadata"]["uid"]


def min_count(o: Obj) -> int | None:
    spec = o.get("spec") or {}
    policy = (
        (spec.get("podGroupTemplates") or [{}])[0].get("schedulingPolicy")
        if "podGroupTemplates" in spec
        else spec.get("schedulingPolicy")
    )
    return ((policy or {}).get("gang") or {}).get("minCount")


def running_identity(p: Obj) -> tuple[Any, ...]:
    """What restarting the pod would change: object, placement, start and its containers."""
    st = p.get("status") or {}
    containers = tuple(
        (
            c["name"],
            c.get("restartCount"),
            c.get("containerID"),
            ((c.get("state") or {}).get("running") or {}).get("startedAt"),
        )
        for c in st.get("containerStatuses") or []
    )
    return (
        uid(p),
        p["metadata"]["resourceVersion"],
        p["spec"].get("nodeName"),
        st.get("podIP"),
        st.get("startTime"),
        containers,
    )


async def by_app(client: Client, gvr: Any, app: str) -> list[Obj]:
    """The Workloads / PodGroups whose controller is StatefulSet ``app``."""
    out = []
    for o in (await client.list(gvr, NS))["items"]:
        refs = o["metadata"].get("ownerReferences") or []
        if any(r.get("kind") == "StatefulSet" and r.get("name") == app and r.get("controller") for r in refs):
            out.append(o)
    return out


async def wait_min_count(client: Client, gvr: Any, name: str, value: int, timeout: float = 20) -> Obj:
    obj = await wait_for_object(
        client, gvr, name, NS, lambda o: o is not None and min_count(o) == value, timeout
    )
    assert obj is not None
    return obj


async def pods_of(client: Client, app: str) -> dict[str, Obj]:
    return {
        p["metadata"]["name"]: p for p in (await client.list(PODS, NS, label_selector=f"app={app}"))["items"]
    }


# ---------------------------------------------------------------------------------- scenarios
async def gate_toggled_off_then_on(cluster: Cluster) -> None:
    """KEP-6277 "Are there any tests for feature enablement/disablement?", over two restarts.

    ``db`` (3 × 1 CPU) runs; ``big`` (3 × 4 CPU) can never be placed whole on two 6-CPU nodes.
    Restarted with ``WorkloadWithStatefulSet=false``: scaling db to 4 and big to 1 updates no
    minCount, db-3 is created outside the PodGroup, big-0 stays Pending although it would fit (its
    PodGroup, minCount 3, is still enforced), db's running pods are untouched. Restarted with the
    gate on: the same Workloads and PodGroups are discovered and reused (no duplicates), minCount
    converges (db 4, big 1), big-0 is placed, and db's running pods are still untouched.
    """
    client = cluster.client
    await client.create(
        PRIORITYCLASSES,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "gang"},
            "value": 10,
        },
    )
    await client.create(STATEFULSETS, gang_set("db", 3, "1"), NS)
    await client.create(STATEFULSETS, gang_set("big", 3, "4", "gang"), NS)
    db = {
        p["metadata"]["name"]: p
        for p in await wait_pods_running(client, "app=db", 3, namespace=NS, timeout=30)
    }
    (db_wl,), (db_pg,) = await by_app(client, WORKLOADS, "db"), await by_app(client, PODGROUPS, "db")
    (big_wl,), (big_pg,) = await by_app(client, WORKLOADS, "big"), await by_app(client, PODGROUPS, "big")
    await wait_for_list(client, PODS, NS, lambda items: len(items) == 3, label_selector="app=big")
    assert min_count(db_wl) == min_count(db_pg) == 3 and min_count(big_pg) == 3
    workloads = {uid(db_wl), uid(big_wl)}
    groups = {uid(db_pg), uid(big_pg)}

    # ---- rollback: the controller manager without WorkloadWithStatefulSet
    await cluster.restart(GATE_OFF)
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 4}}, NS)
    await client.patch(STATEFULSETS, "big", {"spec": {"replicas": 1}}, NS)
    running = await wait_pods_running(client, "app=db", 4, namespace=NS, timeout=30)
    db3 = next(p for p in running if p["metadata"]["name"] == "db-3")
    assert not (db3["spec"].get("schedulingGroup") or {}).get("podGroupName"), "created outside the PodGroup"
    await wait_for_list(
        client,
        PODS,
        NS,
        lambda items: [p["metadata"]["name"] for p in items] == ["big-0"],
        label_selector="app=big",
    )
    for gvr, o in ((WORKLOADS, db_wl), (PODGROUPS, db_pg), (WORKLOADS, big_wl), (PODGROUPS, big_pg)):
        assert min_count(await client.get(gvr, o["metadata"]["name"], NS)) == 3, (
            gvr.resource,
            o["metadata"]["name"],
        )
    # the PodGroup is still enforced: a lower-priority pod of the same size is queued behind any
    # retry of big-0; once it is bound, big-0 has had its chance, and it still waits
    await client.create(PODS, plain_pod("canary", "4"), NS)
    await wait_for_object(client, PODS, "canary", NS, lambda o: bool(o and o["spec"].get("nodeName")), 20)
    assert not (await client.get(PODS, "big-0", NS))["spec"].get("nodeName")
    now = await pods_of(client, "db")
    for name, p in db.items():
        assert running_identity(now[name]) == running_identity(p), f"{name} was touched by the rollback"

    # ---- re-enablement: the same objects are discovered and reused, minCount converges
    await client.delete(PODS, "canary", NS)
    await wait_for_object(client, PODS, "canary", NS, lambda o: o is None, 20)
    await cluster.restart(None)
    await wait_min_count(client, WORKLOADS, db_wl["metadata"]["name"], 4)
    await wait_min_count(client, PODGROUPS, db_pg["metadata"]["name"], 4)
    await wait_min_count(client, WORKLOADS, big_wl["metadata"]["name"], 1)
    await wait_min_count(client, PODGROUPS, big_pg["metadata"]["name"], 1)
    await wait_for_object(client, PODS, "big-0", NS, lambda o: bool(o and o["spec"].get("nodeName")), 30)
    assert {uid(o) for o in (await client.list(WORKLOADS, NS))["items"]} == workloads
    assert {uid(o) for o in (await client.list(PODGROUPS, NS))["items"]} == groups
    now = await pods_of(client, "db")
    for name, p in db.items():
        assert running_identity(now[name]) == running_identity(p), f"{name} was touched by the re-enablement"
    assert all(
        c["restartCount"] == 0 for p in now.values() for c in p["status"].get("containerStatuses") or []
    )


async def restart_between_workload_and_pod_group(cluster: Cluster) -> None:
    """KEP-6277 Test Plan: "Controller restart between Workload creation and PodGroup creation".

    The stop is made deterministic rather than raced: before the StatefulSet controller ever sees
    the set (the cluster runs ``--controllers=*,-statefulset``), a PodGroup that is not the set's
    takes the name the controller will use, so the controller creates the Workload and then has
    its PodGroup create refused (AlreadyExists, and discovery by reference finds no group of its
    own). The cluster is crashed in that state and started with every controller; the squatter is
    deleted. The restarted controller finds the Workload by reference and creates only the missing
    PodGroup: exactly one Workload (the one from before the crash) and one PodGroup.
    """
    client = cluster.client
    sts = await client.create(STATEFULSETS, gang_set("db", 3, "1"), NS)
    name = expected_pod_group_name(sts)
    squatter = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "workloadRef": {"workloadName": "someone-else", "templateName": "t"},
            "schedulingPolicy": {"basic": {}},
        },
    }
    squat = await client.create(PODGROUPS, squatter, NS)
    await cluster.restart(None, controllers="*")
    (wl,) = await wait_for_list(client, WORKLOADS, NS, lambda items: len(items) == 1, timeout=20)
    await wait_for_list(
        client,
        EVENTS,
        NS,
        lambda items: any(
            e["reason"] == "WorkloadCreationFailed"
            and "PodGroup" in e["message"]
            and e["involvedObject"]["name"] == "db"
            for e in items
        ),
        timeout=20,
    )
    assert [uid(o) for o in (await client.list(PODGROUPS, NS))["items"]] == [uid(squat)]
    assert (await client.list(PODS, NS, label_selector="app=db"))["items"] == []

    await cluster.crash()
    await client.delete(PODGROUPS, name, NS)
    pods = await wait_pods_running(client, "app=db", 3, namespace=NS, timeout=60)
    (pg,) = await wait_for_list(
        client, PODGROUPS, NS, lambda items: len(items) == 1 and uid(items[0]) != uid(squat), timeout=30
    )
    assert [uid(o) for o in (await client.list(WORKLOADS, NS))["items"]] == [uid(wl)]
    assert pg["spec"]["workloadRef"]["workloadName"] == wl["metadata"]["name"]
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}
