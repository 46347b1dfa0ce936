"""A ``disruptionMode: all`` preemption storm: a high-priority gang evicts a whole low-priority group.

A low-priority gang StatefulSet (``disruptionMode: all``) fills the cluster; then a
high-priority gang of the same size arrives. Measured: seconds from the preemptor's creation to
its last pod bound, and how many victims were evicted (all of the low group, or none).
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.client.interface import NAMESPACES, PODS, PRIORITYCLASSES, STATEFULSETS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, create_nodes, is_bound, start_plane
from bench.workloads.statefulsets import statefulset

METRICS = {"preemptor_bound_s": Metric("s", False), "victims_evicted": Metric("pods", False)}
PARAMS = {"nodes": 100, "replicas": 1000}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    nodes, replicas = int(params.get("nodes", 100)), int(params.get("replicas", 1000))
    cp = await start_plane([])
    client = cp.client("bench")
    # each node fits exactly replicas/nodes pods of 1 cpu: the low group fills the cluster
    per_node = max(1, -(-replicas // nodes))
    await create_nodes(client, nodes, cpu=str(per_node))
    for name, value in (("low", 100), ("high", 1000)):
        await client.create(PRIORITYCLASSES, {"metadata": {"name": name}, "value": value})
    for name in ("garbage-collector-controller", "statefulset-controller", "scheduler"):
        await cp.start_component(name)
    for ns in ("low", "high"):
        await client.create(NAMESPACES, {"metadata": {"name": ns}})
    low = statefulset("train", replicas, True, "", cpu="1")
    low["spec"]["scheduling"]["schedulingPolicy"] = {"gang": {}}
    low["spec"]["scheduling"]["disruptionMode"] = {"all": {}}
    low["spec"]["template"]["spec"]["priorityClassName"] = "low"
    # no kubelet here: without a zero grace period a preempted pod would stay Terminating forever
    # (as on a real node without its kubelet) and the preemptor would wait for it forever
    low["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    low_bound = PodCounter(client, "low", replicas, is_bound)
    await low_bound.start()
    await client.create(STATEFULSETS, low, "low")
    await low_bound.wait(600)
    env.progress("low group placed")
    high = statefulset("serve", replicas, True, "", cpu="1")
    high["spec"]["template"]["spec"]["priorityClassName"] = "high"
    high_bound = PodCounter(client, "high", replicas, is_bound)
    await high_bound.start()
    # victims go at once (no grace period): count the low pods whose UID is gone once the
    # preemptor is bound (the StatefulSet controller recreates them under the same names)
    before = {p["metadata"]["uid"] for p in (await client.list(PODS, "low"))["items"]}
    env.start_cpu()
    t0 = time.perf_counter()
    await client.create(STATEFULSETS, high, "high")
    done = await high_bound.wait(600)
    env.stop_cpu(replicas)  # the preemptor group's pods
    after = {p["metadata"]["uid"] for p in (await client.list(PODS, "low"))["items"]}
    out = {"preemptor_bound_s": done - t0, "victims_evicted": float(len(before - after))}
    for c in (low_bound, high_bound):
        await c.stop()
    await cp.stop()
    return out
