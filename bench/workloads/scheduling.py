"""SchedulingBasic (after kube's scheduler_perf): plain pods onto fake nodes, pods/s.

Two numbers per run: *create→bound* (pods created one after another while the scheduler runs;
the clock stops when a watch has seen the last one bound) and *backlog* (pods created while the
scheduler is stopped, then drained: kube's SchedulingThroughput).
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.client.interface import PODS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, create_nodes, is_bound, pod, start_plane

METRICS = {"pods_per_s": Metric("pods/s", True), "backlog_pods_per_s": Metric("pods/s", True)}
PARAMS = {"nodes": 500, "pods": 1000, "backlog": True}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    nodes, pods = int(params.get("nodes", 500)), int(params.get("pods", 1000))
    out = {"pods_per_s": await _create_to_bound(nodes, pods, env)}
    if params.get("backlog", True):
        out["backlog_pods_per_s"] = await _backlog(nodes, pods, env)
    return out


async def _create_to_bound(nodes: int, pods: int, env: Env) -> float:
    cp = await start_plane([])
    client = cp.client("bench")
    await create_nodes(client, nodes)
    await cp.start_component("scheduler")
    env.progress(f"{nodes} nodes")
    counter = PodCounter(client, "default", pods, is_bound)
    await counter.start()
    env.start_cpu()
    t0 = time.perf_counter()
    for i in range(pods):
        await client.create(PODS, pod(f"run-{i}"))
    done = await counter.wait(600)
    env.stop_cpu(pods)
    await counter.stop()
    await cp.stop()
    return pods / (done - t0)


async def _backlog(nodes: int, pods: int, env: Env) -> float:
    cp = await start_plane([])
    client = cp.client("bench")
    await create_nodes(client, nodes)
    for i in range(pods):
        await client.create(PODS, pod(f"queued-{i}"))
    env.progress("backlog created")
    counter = PodCounter(client, "default", pods, is_bound)
    await counter.start()
    env.start_cpu()
    t0 = time.perf_counter()
    await cp.start_component("scheduler")
    done = await counter.wait(600)
    env.stop_cpu(pods)
    await counter.stop()
    await cp.stop()
    return pods / (done - t0)
