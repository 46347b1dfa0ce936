"""Builders and fakes for scheduler tests (kube's ``pkg/scheduler/testing`` wrappers).

``make_pod``/``make_node`` build API-shaped dicts with only what a case needs;
:class:`FakeClock` (re-exported from :mod:`apiserver.meta`) is stepped by hand; :class:`RecordingClient`
records the scheduler's API calls and can fail on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from apiserver.api.types import Obj
from apiserver.errors import StatusError, not_found
from apiserver.meta import FakeClock
from scheduler.cache import Cache, Snapshot
from scheduler.interfaces import CycleState, PodGroupInfo
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.podgroups import PodGroupState

if TYPE_CHECKING:
    from scheduler.podgroup_algorithm import PodGroupAlgorithm

__all__ = [
    "FakeClock",
    "RecordingClient",
    "container",
    "make_node",
    "make_pod",
    "node_info",
    "place_gang",
    "snapshot_of",
]


def container(
    name: str = "c",
    requests: dict[str, str] | None = None,
    ports: list[Obj] | None = None,
    restart_policy: str | None = None,
) -> Obj:
    c: Obj = {"name": name, "image": "busybox"}
    if requests:
        c["resources"] = {"requests": dict(requests)}
    if ports:
        c["ports"] = ports
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def make_pod(
    name: str,
    namespace: str = "default",
    *,
    uid: str | None = None,
    requests: dict[str, str] | None = None,
    containers: list[Obj] | None = None,
    init_containers: list[Obj] | None = None,
    overhead: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    node_name: str = "",
    priority: int | None = None,
    node_selector: dict[str, str] | None = None,
    affinity: Obj | None = None,
    tolerations: list[Obj] | None = None,
    spread: list[Obj] | None = None,
    host_ports: list[int] | None = None,
    scheduling_gates: list[str] | None = None,
    preemption_policy: str | None = None,
    nominated_node_name: str = "",
    start_time: str | None = None,
    deletion_timestamp: str | None = None,
    conditions: list[Obj] | None = None,
    scheduler_name: str | None = None,
) -> Obj:
    spec: Obj = {
        "containers": containers
        if containers is not None
        else [
            container(
                requests=requests, ports=[{"containerPort": p, "hostPort": p} for p in host_ports or []]
            )
        ]
    }
    if init_containers:
        spec["initContainers"] = init_containers
    if overhead:
        spec["overhead"] = overhead
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if spread:
        spec["topologySpreadConstraints"] = spread
    if scheduling_gates:
        spec["schedulingGates"] = [{"name": g} for g in scheduling_gates]
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    meta: Obj = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    if deletion_timestamp:
        meta["deletionTimestamp"] = deletion_timestamp
    status: Obj = {}
    if nominated_node_name:
        status["nominatedNodeName"] = nominated_node_name
    if start_time:
        status["startTime"] = start_time
    if conditions:
        status["conditions"] = conditions
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def gang_set_pods(app: str, replicas: int = 3, cpu: str = "500m") -> list[Obj]:
    """The pods of a gang StatefulSet ``app`` as its controller makes them for the scheduler:
    label ``app``, a controller owner reference to the set (uid ``app``) and the PodGroup
    ``app`` as their scheduling group."""
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    pods = []
    for i in range(replicas):
        p = make_pod(f"{app}-{i}", uid=f"{app}-u{i}", labels={"app": app}, requests={"cpu": cpu})
        p["metadata"]["ownerReferences"] = owner
        p["spec"]["schedulingGroup"] = {"podGroupName": app}
        pods.append(p)
    return pods


def make_node(
    name: str,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    *,
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
) -> Obj:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": dict(alloc)},
    }


def node_info(node: Obj, *pods: Obj) -> NodeInfo:
    return NodeInfo(node, [PodInfo(p) for p in pods])


def snapshot_of(nodes: list[Obj], pods: list[Obj] = ()) -> Snapshot:  # type: ignore[assignment]
    """A snapshot with these nodes and assigned pods (pods must carry ``spec.nodeName``)."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    return cache.snapshot()


def zoned_cache(count: int, zones: int = 3) -> tuple[Cache, list[str]]:
    """A cache of ``count`` nodes ``n00``, ``n01``, ... spread round-robin over ``zones`` zones
    (``topology.kubernetes.io/zone`` ``z0``...), and their names: the cluster the snapshot's
    randomized history tests start from."""
    cache = Cache()
    names = [f"n{i:02d}" for i in range(count)]
    for i, n in enumerate(names):
        cache.add_node(make_node(n, labels={"topology.kubernetes.io/zone": f"z{i % zones}"}))
    return cache, names


class RecordingClient:
    """Records ``create_subresource``/``patch``/``delete`` calls; ``fail`` maps a verb to an error to raise."""

    def __init__(self, pods: list[Obj] | None = None) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.fail: dict[str, StatusError] = {}
        self.pods = {((p["metadata"].get("namespace", ""), p["metadata"]["name"])): p for p in pods or []}

    def _maybe_fail(self, verb: str) -> None:
        err = self.fail.get(verb)
        if err is not None:
            raise err

    async def create_subresource(
        self, gvr: Any, name: str, subresource: str, obj: Obj, namespace: str = ""
    ) -> Obj:
        self.calls.append(("create_subresource", (gvr, name, subresource, obj, namespace), {}))
        self._maybe_fail("create_subresource")
        return obj

    async def patch(self, gvr: Any, name: str, patch: Any, namespace: str = "", **kw: Any) -> Obj:
        self.calls.append(("patch", (gvr, name, patch, namespace), kw))
        self._maybe_fail("patch")
        pod = self.pods.get((namespace, name))
        if pod is None:
            return {"metadata": {"name": name, "namespace": namespace}}
        return pod

    async def delete(self, gvr: Any, name: str, namespace: str = "", **kw: Any) -> Obj:
        self.calls.append(("delete", (gvr, name, namespace), kw))
        self._maybe_fail("delete")
        if self.pods and (namespace, name) not in self.pods:
            raise not_found("pods", name)
        return {"kind": "Status", "status": "Success"}

    def verbs(self) -> list[str]:
        return [c[0] for c in self.calls]


def place_gang(
    cache: Cache, snap: Snapshot, algorithm: PodGroupAlgorithm, name: str, members: list[PodInfo]
) -> list[str]:
    """One PodGroup cycle for the gang ``default/name`` of ``members`` (all of them its
    minCount) on the cache's current state, its placement assumed in the cache; the chosen
    nodes in the placement's order. The randomized comparisons of a scheduler fast path place
    a series of gangs this way with the path on and off and compare the nodes."""
    pg = {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": len(members)}}},
    }
    group = PodGroupInfo("default", name, pg, members, PodGroupState(f"default/{name}"))
    cache.update_snapshot(snap)
    result = algorithm.run(CycleState(), group, snap)
    assert result.success and result.placement is not None
    hosts: list[str] = []
    for a in result.placement.fitting():
        cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
        hosts.append(a.node_name)
    return hosts
