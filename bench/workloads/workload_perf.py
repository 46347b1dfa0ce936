"""scheduler_perf's workload-aware cases (``podgroup/gangscheduling``, ``podgroup/tas``,
``workload_preemption``), on fake nodes, with placement-quality figures beside the speed.

One module for the three families, as upstream's templates differ only in a few knobs:

* ``case: gang`` - ``GangScheduling``: ``groups`` PodGroups of ``pods_per_group`` (gang, minCount =
  size), pods of 100m/100Mi on 4-cpu nodes;
* ``case: tas`` - ``TopologyAwareScheduling``: the same with ``schedulingConstraints.topology``
  on ``topology.kubernetes.io/rack`` (``nodes_per_rack`` nodes a rack, 100 nodes a zone);
* ``case: preemption-basic`` - ``GangPreemptionBasic``: ``init_pods`` low-priority pods (40m),
  then high-priority gangs of ``gang_cpu`` each;
* ``case: preemption-podgroups`` - ``GangPreemptionPodGroups``: ``low_groups`` low-priority gangs
  (``low_cpu``), then ``groups`` high-priority gangs (``high_cpu``);
* ``case: preemption-topology-spreading`` - ``GangPreemptionTopologySpreading``: as basic, the
  gang pods spread over 3 zones with a ``DoNotSchedule`` topology spread constraint;
* ``case: preemption-affinity`` - ``GangPreemptionAffinity``: a high-priority anchor pod on every
  node, low-priority pods, then gangs whose pods (3970m) need an anchor beside them (required pod
  affinity on the hostname).

``feature_gates`` sets gates for the whole plane (upstream's ``_CompositePodGroupEnabled`` variants
turn ``CompositePodGroup`` and ``TopologyAwareWorkloadScheduling`` on; their base cases leave
``CompositePodGroup`` off).

Measured from the first measured pod's creation: pods/s until every measured pod is bound, or
until the scheduler is idle with some left (nothing active, backing off or binding: a gang that
cannot fit waits; that is a result, ``gangs_waiting``). Quality: gangs placed and waiting, pods preempted, nodes and racks left
partly used (fragmentation), and racks/zones per placed gang (domain spread). ``scheduler_config``
(a KubeSchedulerConfiguration file) runs the case under that configuration; ``idle_s`` is how long
the scheduler must sit idle to end a run (the preemption cases wait 20 s: a preemptor parked as
unschedulable is retried only when its victims' deletions arrive)
(``gangplane bench --scheduler-config A.yaml --scheduler-config B.yaml`` sets it per run).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import defaultdict
from typing import Any

from apiserver.client.interface import NAMESPACES, NODES, PODGROUPS, PODS, PRIORITYCLASSES
from apiserver.quantity import parse_quantity
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, is_bound

RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"
NS = "perf"
LOW_NS = "perf-low"

METRICS = {
    "pods_per_s": Metric("pods/s", True),
    "gangs_placed": Metric("gangs", True),
    "gangs_waiting": Metric("gangs", False),
    "pods_preempted": Metric("pods", False),
    "nodes_partly_used_pct": Metric("%", False),
    "racks_partly_used_pct": Metric("%", False),
    "racks_per_gang_mean": Metric("racks", False),
    "racks_per_gang_max": Metric("racks", False),
    "zones_per_gang_mean": Metric("zones", False),
    "cpu_s": Metric("s", False),
}
PARAMS = {"case": "gang", "nodes": 100, "groups": 10, "pods_per_group": 3}
#: the scheduler counts as idle after this long without an active or backing-off pod or a binding in flight
IDLE_FOR = 5.0


def _node(i: int, nodes_per_rack: int, cpu: str) -> dict:
    name = f"node-{i}"
    alloc = {"cpu": cpu, "memory": "32Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                ZONE: f"zone-{i // 100}",
                RACK: f"rack-{i // nodes_per_rack}",
            },
        },
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def _zoned_node(i: int, cpu: str) -> dict:
    """GangPreemptionTopologySpreading's nodes: zones 1-3 round robin."""
    n = _node(i, 10, cpu)
    n["metadata"]["labels"][ZONE] = f"zone-{i % 3 + 1}"
    return n


BLUE = {"app": "blue", "label1": "value1", "label2": "value2", "label3": "value3", "label4": "value4"}


def _pod(
    name: str,
    ns: str,
    cpu: str,
    *,
    group: str = "",
    priority_class: str = "",
    host_port: int = 0,
    labels: dict | None = None,
) -> dict:
    c: dict = {
        "name": "pause",
        "image": "registry.k8s.io/pause:3.10.1",
        "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}},
    }
    if host_port:
        c["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: dict = {"terminationGracePeriodSeconds": 0, "containers": [c]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority_class:
        spec["priorityClassName"] = priority_class
    meta: dict = {"name": name, "namespace": ns}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _pod_group(name: str, ns: str, size: int, *, rack: bool = False, priority_class: str = "") -> dict:
    spec: dict = {"schedulingPolicy": {"gang": {"minCount": size}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def _scheduler_factory(path: str) -> Any:
    from scheduler.component import scheduler_factory
    from scheduler.config import load_scheduler_config

    return scheduler_factory(load_scheduler_config(path))


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
    from scheduler.component import COMPONENT_NAME

    case = str(params.get("case", "gang"))
    nodes = int(params.get("nodes", 100))
    groups = int(params.get("groups", 10))
    size = int(params.get("pods_per_group", 3))
    per_rack = int(params.get("nodes_per_rack", 10))
    from featuregates import FeatureGate

    gates = FeatureGate().with_overrides(
        {str(k): bool(v) for k, v in (params.get("feature_gates") or {}).items()}
    )
    cp = ControlPlane(ControlPlaneOptions(gates=gates))
    default_components(cp, Fleet.empty(), "*")
    if params.get("scheduler_config"):
        cp.register(COMPONENT_NAME, _scheduler_factory(str(params["scheduler_config"])))
    client = cp.client("bench")
    for ns in (NS, LOW_NS):
        await client.create(NAMESPACES, {"metadata": {"name": ns}})
    for name, value in (("low", 1000), ("high", 9999999)):
        await client.create(PRIORITYCLASSES, {"metadata": {"name": name}, "value": value})
    for i in range(nodes):
        n = _zoned_node(i, "4") if case == "preemption-topology-spreading" else _node(i, per_rack, "4")
        await client.create(NODES, n)
    await cp.start_component("scheduler")
    sched = cp.components[COMPONENT_NAME]

    # what is there before the measured pods (the preemption cases' victims)
    low_uids: set[str] = set()
    if case == "preemption-affinity":
        # high-priority anchors, one a node (one host port), that the gang pods must sit beside
        for i in range(nodes):
            await client.create(
                PODS,
                _pod(f"anchor-{i}", "default", "10m", priority_class="high", host_port=7000, labels=BLUE),
            )
        await _wait_bound(client, "default", nodes)
    if case in ("preemption-basic", "preemption-topology-spreading", "preemption-affinity"):
        init = int(params.get("init_pods", 1000))
        per_node = max(1, init // nodes)
        for i in range(init):
            await client.create(
                PODS,
                _pod(
                    f"low-{i}",
                    LOW_NS,
                    "40m",
                    priority_class="low",
                    host_port=8000 + i % per_node,
                    labels=BLUE,
                ),
            )
        await _wait_bound(client, LOW_NS, init)
    elif case == "preemption-podgroups":
        low_groups = int(params.get("low_groups", 5))
        for g in range(low_groups):
            await client.create(PODGROUPS, _pod_group(f"low-{g}", LOW_NS, size, priority_class="low"), LOW_NS)
        for g in range(low_groups):
            for j in range(size):
                await client.create(
                    PODS,
                    _pod(
                        f"low-{g}-{j}",
                        LOW_NS,
                        str(params.get("low_cpu", "600m")),
                        group=f"low-{g}",
                        priority_class="low",
                        host_port=8000 + g,
                    ),
                )
        await _wait_bound(client, LOW_NS, low_groups * size)
    if case.startswith("preemption"):
        low_uids = {p["metadata"]["uid"] for p in (await client.list(PODS, LOW_NS))["items"]}
        env.progress(f"{len(low_uids)} low-priority pods placed")

    high = "high" if case.startswith("preemption") else ""
    cpu = str(params.get("gang_cpu") or params.get("high_cpu") or "100m")
    for g in range(groups):
        await client.create(
            PODGROUPS, _pod_group(f"gang-{g}", NS, size, rack=case == "tas", priority_class=high), NS
        )
    total = groups * size
    counter = PodCounter(client, NS, total, is_bound)
    await counter.start()
    cpu0, t0 = time.process_time(), time.perf_counter()
    for g in range(groups):
        for j in range(size):
            p = _pod(f"gang-{g}-{j}", NS, cpu, group=f"gang-{g}", priority_class=high)
            if case == "preemption-podgroups":
                p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 9000 + g}]
            if case == "preemption-affinity":
                p["spec"]["affinity"] = {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": dict(BLUE)},
                                "topologyKey": "kubernetes.io/hostname",
                                "namespaceSelector": {},
                            }
                        ]
                    }
                }
                p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "3970m", "memory": "500Mi"}
            if case == "preemption-topology-spreading":
                p["metadata"]["labels"] = {"gang": f"gang-{g}"}
                p["spec"]["topologySpreadConstraints"] = [
                    {
                        "maxSkew": 1,
                        "topologyKey": ZONE,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"gang": f"gang-{g}"}},
                    }
                ]
            await client.create(PODS, p)
    done = await _until_bound_or_idle(
        counter, sched, float(params.get("timeout", 600)), float(params.get("idle_s", IDLE_FOR))
    )
    cpu_s, wall = time.process_time() - cpu0, (done or time.perf_counter()) - t0
    out = await _quality(client, groups, size, low_uids)
    bound = out.pop("_bound")
    out["pods_per_s"] = bound / wall if wall > 0 else 0.0
    out["cpu_s"] = cpu_s
    env.progress(f"{int(bound)}/{total} pods bound, {int(out['gangs_placed'])} gangs placed")
    await counter.stop()
    await cp.stop()
    return out


async def _wait_bound(client: Any, ns: str, n: int) -> None:
    c = PodCounter(client, ns, n, is_bound)
    await c.start()
    await c.wait(600)
    await c.stop()


async def _until_bound_or_idle(
    counter: PodCounter, sched: Any, timeout: float, idle_for: float
) -> float | None:
    """The time the last pod was bound, or None once the scheduler sat idle with pods left."""
    deadline = time.perf_counter() + timeout
    idle_since: float | None = None
    while time.perf_counter() < deadline:
        try:
            await asyncio.wait_for(asyncio.shield(counter.done.wait()), 0.2)
            return counter.finished_at
        except TimeoutError:
            pass
        pending = sched.queue.pending_pods()
        # backoff counts as busy: a preemptor waits there for its victims to go
        busy = pending["active"] > 0 or pending["backoff"] > 0 or bool(sched._binding_tasks)
        now = time.perf_counter()
        if busy:
            idle_since = None
        elif idle_since is None:
            idle_since = now
        elif now - idle_since >= idle_for:
            return None
    return None


def _cpu_milli(q: str) -> int:
    return int(parse_quantity(q) * 1000)


async def _quality(client: Any, groups: int, size: int, low_uids: set[str]) -> dict[str, float]:
    nodes = {n["metadata"]["name"]: n for n in (await client.list(NODES))["items"]}
    pods = (await client.list(PODS))["items"]
    used: dict[str, int] = defaultdict(int)
    by_gang: dict[str, list[str]] = defaultdict(list)
    still_low: set[str] = set()
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if not node:
            continue
        for c in p["spec"].get("containers") or []:
            used[node] += _cpu_milli(((c.get("resources") or {}).get("requests") or {}).get("cpu", "0"))
        if p["metadata"]["namespace"] == NS:
            by_gang[p["spec"]["schedulingGroup"]["podGroupName"]].append(node)
        else:
            still_low.add(p["metadata"]["uid"])
    alloc = {name: _cpu_milli(n["status"]["allocatable"]["cpu"]) for name, n in nodes.items()}
    partly = [n for n in nodes if 0 < used.get(n, 0) < alloc[n]]
    used_nodes = [n for n in nodes if used.get(n, 0) > 0]
    racks: dict[str, list[str]] = defaultdict(list)
    for name, n in nodes.items():
        racks[n["metadata"]["labels"].get(RACK, "")].append(name)
    # a rack is left partly used when some of its nodes carry pods and some cpu is still free in it
    racks_used = [r for r, ns in racks.items() if any(used.get(x, 0) > 0 for x in ns)]
    racks_partly = [r for r in racks_used if any(used.get(x, 0) < alloc[x] for x in racks[r])]
    placed = {g: ns for g, ns in by_gang.items() if len(ns) == size}
    spread = [len({nodes[n]["metadata"]["labels"].get(RACK) for n in ns}) for ns in placed.values()]
    zones = [len({nodes[n]["metadata"]["labels"].get(ZONE) for n in ns}) for ns in placed.values()]
    return {
        "_bound": float(sum(len(v) for v in by_gang.values())),
        "gangs_placed": float(len(placed)),
        "gangs_waiting": float(groups - len(placed)),
        "pods_preempted": float(len(low_uids - still_low)),
        "nodes_partly_used_pct": 100.0 * len(partly) / len(used_nodes) if used_nodes else 0.0,
        "racks_partly_used_pct": 100.0 * len(racks_partly) / len(racks_used) if racks_used else 0.0,
        "racks_per_gang_mean": statistics.mean(spread) if spread else 0.0,
        "racks_per_gang_max": float(max(spread, default=0)),
        "zones_per_gang_mean": statistics.mean(zones) if zones else 0.0,
    }
