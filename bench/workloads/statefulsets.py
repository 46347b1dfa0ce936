"""Gang StatefulSets (KEP-6277): placement speed of whole groups, with or without a rack constraint.

Each set lives in its own namespace. With ``gang: true`` the StatefulSet carries
``spec.scheduling.schedulingPolicy.gang`` (so the controller creates a Workload and a PodGroup and
the scheduler places the group in one cycle), with ``topology: rack`` also a rack constraint.
``gang: false`` runs the same pods without any of it, as the baseline.

Metrics: pods/s from the first create to the last pod bound; per set, the seconds from its last
pod being created (the moment its gang becomes placeable) to its last pod bound (the median and
the worst set), split in two for a diagnosis: from its last pod created to its first pod bound
(``set_first_bound_s_median``: waiting for the scheduler, the gang's search and submit) and from
its first pod bound to its last (``set_binding_s_median``); with ``node_agent: true`` also the
seconds until every pod is Running. The
measured phase for ``cpu_s`` runs from the first create to the last pod bound (to the last pod
Running with the node agent); ``api_writes_per_set`` counts the API writes of that phase
(creates, updates, patches, deletes and subresource writes of any client) per StatefulSet, up to
the last pod bound, and ``api_writes_per_set.<resource>.<write>`` the same by resource and kind of
write (:mod:`bench.workloads.writecount`; the bench's own StatefulSet creates included); with the
node agent ``api_writes_per_pod`` counts them per pod up to the last pod Running (kubelet's Events,
pod status writes and Lease renewals included).

``creators`` (default 2) is the arrival: how many clients create the sets at once, each sending
its next create once the last is answered, so that many sets reach the plane per loop pass
(:func:`~bench.workloads.common.create_arriving`; the plane's CPU per set depends on it).

``mode: http`` runs the same over HTTP: a ``gangplane serve`` with the fleet (or ``--kubeconfig``'s
server, whose nodes are used as they are) is driven by an HTTP client that creates the sets and
follows one pod watch; ``server_cpu_s`` is the local server's CPU over that window and
``client_cpu_s`` the bench client's (its requests and the watch's decoding).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from apiserver.client.interface import NAMESPACES, PODS, STATEFULSETS
from bench.results import Metric
from bench.workloads.common import (
    DEFAULT_CREATORS,
    RACK,
    Env,
    create_arriving,
    create_nodes,
    is_bound,
    is_running,
    start_plane,
)
from bench.workloads.writecount import writes_by_resource

METRICS = {
    "pods_per_s": Metric("pods/s", True),
    "set_placed_s_median": Metric("s", False),
    "set_placed_s_max": Metric("s", False),
    "set_first_bound_s_median": Metric("s", False),
    "set_binding_s_median": Metric("s", False),
    "all_running_s": Metric("s", False),
    "nodes_ready_s": Metric("s", False),
    "nodes_schedulable_s": Metric("s", False),
    "server_cpu_s": Metric("s", False),
    "client_cpu_s": Metric("s", False),
    "api_writes_per_set": Metric("writes", False),
    "api_writes_per_pod": Metric("writes", False),
}
PARAMS = {
    "nodes": 5000,
    "racks": 50,
    "sets": 3,
    "replicas": 1000,
    "gang": True,
    "topology": "",
    "node_agent": False,
    "mode": "in-process",
    "creators": DEFAULT_CREATORS,
}


def statefulset(name: str, replicas: int, gang: bool, topology: str, cpu: str = "100m") -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {
        "replicas": replicas,
        "podManagementPolicy": "Parallel",
        "serviceName": name,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": cpu}},
                    }
                ]
            },
        },
    }
    if gang:
        spec["scheduling"] = {"schedulingPolicy": {"gang": {}}}
        if topology:
            key = RACK if topology == "rack" else topology
            spec["scheduling"]["schedulingConstraints"] = {"topology": [{"key": key}]}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": spec}


def fleet_doc(nodes: int, racks: int) -> dict[str, Any]:
    """A node-agent fleet of ``nodes`` hosts spread over ``racks`` racks in one zone."""
    per_rack = max(1, nodes // max(1, racks))
    return {
        "nodes": [
            {
                "name": "node-{rack}-{index}",
                "zones": ["zone-a"],
                "racksPerZone": max(1, racks),
                "count": per_rack,
                "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"},
            }
        ]
    }


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    if params.get("mode", "in-process") == "http":
        from bench.workloads.statefulsets_http import run_http

        return await run_http(params, env)
    nodes = int(params.get("nodes", 5000))
    racks = int(params.get("racks", 50))
    sets, replicas = int(params.get("sets", 3)), int(params.get("replicas", 1000))
    gang, topology = bool(params.get("gang", True)), str(params.get("topology", "") or "")
    node_agent = bool(params.get("node_agent", False))
    out: dict[str, float] = {}
    if node_agent:
        from controllers.fleet import parse_fleet
        from gangplane.controlplane import ControlPlane, default_components

        cp = ControlPlane()
        default_components(cp, parse_fleet(fleet_doc(nodes, racks)), "*")
        t = time.perf_counter()
        await cp.start_component("node-agent")
        client = cp.client("bench")
        fleet_size = max(1, racks) * max(1, nodes // max(1, racks))
        await _wait_nodes(client, fleet_size, _ready)
        out["nodes_ready_s"] = time.perf_counter() - t
        # the node lifecycle step: the not-ready taint (added at registration) is gone, so the
        # set is created on a fleet that takes pods, and the clock below measures the set alone
        await _wait_nodes(client, fleet_size, _schedulable)
        out["nodes_schedulable_s"] = time.perf_counter() - t
        for name in ("garbage-collector-controller", "statefulset-controller", "scheduler"):
            await cp.start_component(name)
    else:
        cp = await start_plane([])
        client = cp.client("bench")
        await create_nodes(client, nodes, racks=racks)
        for name in ("statefulset-controller", "scheduler"):
            await cp.start_component(name)
    env.progress(f"{nodes} nodes")
    tracker = SetTracker(client, "bench", replicas)
    await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
    await tracker.start()
    rv0 = await _current_rv(client)
    env.start_cpu()
    t0 = time.perf_counter()
    # the driver never reads an answer: not decoded (the plane's CPU is what is measured)
    await create_arriving(
        lambda body: client.create(STATEFULSETS, body, "bench", handoff=True, answer=False),
        (statefulset(f"gang-{s}", replicas, gang, topology) for s in range(sets)),
        int(params.get("creators", DEFAULT_CREATORS)),
    )
    await tracker.wait(sets, "bound", 900)
    if not node_agent:
        env.stop_cpu(sets * replicas)
    # the in-memory store takes one resourceVersion per write: the writes of the phase, per set
    rv1 = await _current_rv(client)
    out["api_writes_per_set"] = (rv1 - rv0) / sets
    env.progress("bound")
    placed = sorted(
        max(0.0, tracker.last["bound"][k] - tracker.last["created"][k]) for k in tracker.last["bound"]
    )
    out["pods_per_s"] = sets * replicas / (max(tracker.last["bound"].values()) - t0)
    out["set_placed_s_median"] = placed[len(placed) // 2]
    out["set_placed_s_max"] = placed[-1]
    created, first, last = tracker.last["created"], tracker.first["bound"], tracker.last["bound"]
    waits = sorted(max(0.0, first[k] - created[k]) for k in last if k in first and k in created)
    binding = sorted(max(0.0, last[k] - first[k]) for k in last if k in first)
    out["set_first_bound_s_median"] = waits[len(waits) // 2]
    out["set_binding_s_median"] = binding[len(binding) // 2]
    if node_agent:
        await tracker.wait(sets, "running", 900)
        env.stop_cpu(sets * replicas)  # create -> all Running
        out["all_running_s"] = max(tracker.last["running"].values()) - t0
        # every write of create -> all Running (Events, pod status, Lease renewals included), per pod
        out["api_writes_per_pod"] = (await _current_rv(client) - rv0) / (sets * replicas)
    # read from the store's history once no phase is measured (with the node agent, that is
    # after the last pod is Running); the range stays the bound phase's
    by_write = writes_by_resource(cp.api.store, rv0, rv1)
    for what, n in sorted((by_write or {}).items()):
        out[f"api_writes_per_set.{what}"] = n / sets
    await tracker.stop()
    await cp.stop()
    return out


class SetTracker:
    """One pod watch for every set: when each set's last pod was created, bound and Running.

    A set counts once all ``replicas`` of its pods (label ``app=<set>``) have reached a stage;
    ``last[stage][set]`` is the time the last of them did, ``first[stage][set]`` the time the
    first did.
    """

    def __init__(self, client: Any, namespace: str, replicas: int) -> None:
        self.client = client
        self.namespace = namespace
        self.replicas = replicas
        self.pods: dict[str, dict[str, set[str]]] = {"created": {}, "bound": {}, "running": {}}
        self.last: dict[str, dict[str, float]] = {"created": {}, "bound": {}, "running": {}}
        self.first: dict[str, dict[str, float]] = {"created": {}, "bound": {}, "running": {}}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        lst = await self.client.list(PODS, self.namespace)
        self._task = asyncio.create_task(self._run(lst["metadata"]["resourceVersion"]))

    def _see(self, p: dict[str, Any]) -> None:
        app = (p["metadata"].get("labels") or {}).get("app", "")
        name = p["metadata"]["name"]
        for stage, ok in (("created", True), ("bound", is_bound(p)), ("running", is_running(p))):
            if not ok:
                continue
            members = self.pods[stage].setdefault(app, set())
            if name not in members:
                members.add(name)
                if len(members) == 1:
                    self.first[stage][app] = time.perf_counter()
                if len(members) == self.replicas:
                    self.last[stage][app] = time.perf_counter()
                    self._changed.set()

    async def _run(self, rv: str) -> None:
        async for ev in self.client.watch(PODS, self.namespace, resource_version=rv, read_only=True):
            if ev.type in ("ADDED", "MODIFIED"):
                self._see(ev.object)
            elif ev.type == "ERROR":
                raise RuntimeError(f"pod watch ended: {ev.object.get('message')}")

    async def wait(self, sets: int, stage: str, timeout: float) -> None:
        async def until() -> None:
            while len(self.last[stage]) < sets:
                self._changed.clear()
                if self._task is not None and self._task.done():
                    self._task.result()
                await self._changed.wait()

        await asyncio.wait_for(until(), timeout)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def _current_rv(client: Any) -> int:
    """The store's current resourceVersion (a list's), as an integer."""
    lst = await client.list(NAMESPACES)
    return int(lst["metadata"]["resourceVersion"])


def _ready(node: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )


def _schedulable(node: dict[str, Any]) -> bool:
    taints = (node.get("spec") or {}).get("taints") or []
    return _ready(node) and not any(t.get("key") == "node.kubernetes.io/not-ready" for t in taints)


async def _wait_nodes(client: Any, n: int, pred: Callable[[dict[str, Any]], bool]) -> None:
    """Until ``n`` Nodes satisfy ``pred`` (a list, then a watch from its resourceVersion)."""
    from apiserver.client.interface import NODES

    lst = await client.list(NODES)
    seen = {nd["metadata"]["name"] for nd in lst["items"] if pred(nd)}
    if len(seen) >= n:
        return
    async for ev in client.watch(NODES, resource_version=lst["metadata"]["resourceVersion"]):
        if ev.type in ("ADDED", "MODIFIED"):
            name = ev.object["metadata"]["name"]
            if pred(ev.object):
                seen.add(name)
                if len(seen) >= n:
                    return
            else:
                seen.discard(name)
