"""SchedulingBasic (after kube's scheduler_perf): plain pods onto fake nodes, pods/s.

Two numbers per run: *create→bound* (pods created while the scheduler runs, ``creators`` per loop
pass as that many clients would send them, :func:`~bench.workloads.common.create_arriving`;
the clock stops when a watch has seen the last one bound) and *backlog* (pods created while the
scheduler is stopped, then drained: kube's SchedulingThroughput).

Each measured phase starts right after a full collection (:func:`_collected`), so that the
cyclic collector's older-generation passes stay out of both windows by construction.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from apiserver.client.interface import PODS
from bench.results import Metric
from bench.workloads.common import (
    DEFAULT_CREATORS,
    Env,
    PodCounter,
    create_arriving,
    create_nodes,
    is_bound,
    pod,
    start_plane,
)

METRICS = {"pods_per_s": Metric("pods/s", True), "backlog_pods_per_s": Metric("pods/s", True)}
PARAMS = {"nodes": 500, "pods": 1000, "backlog": True, "creators": DEFAULT_CREATORS}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    nodes, pods = int(params.get("nodes", 500)), int(params.get("pods", 1000))
    creators = int(params.get("creators", DEFAULT_CREATORS))
    out = {"pods_per_s": await _create_to_bound(nodes, pods, env, creators)}
    if params.get("backlog", True):
        out["backlog_pods_per_s"] = await _backlog(nodes, pods, env)
    return out


async def _create_to_bound(nodes: int, pods: int, env: Env, creators: int = DEFAULT_CREATORS) -> float:
    cp = await start_plane([])
    client = cp.client("bench")
    await create_nodes(client, nodes)
    await cp.start_component("scheduler")
    env.progress(f"{nodes} nodes")
    counter = PodCounter(client, "default", pods, is_bound)
    await counter.start()
    _collected()
    env.start_cpu()
    t0 = time.perf_counter()
    await create_arriving(
        lambda body: client.create(PODS, body), (pod(f"run-{i}") for i in range(pods)), creators
    )
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
    _collected()
    env.start_cpu()
    t0 = time.perf_counter()
    await cp.start_component("scheduler")
    done = await counter.wait(600)
    env.stop_cpu(pods)
    await counter.stop()
    await cp.stop()
    return pods / (done - t0)


def _collected() -> None:
    """A full collection just before a measured phase (its CPU is not in the phase).

    With the plane's thresholds a generation-1 pass comes every 20 generation-0 passes, about
    once per 25,000–30,000 pods here, and traverses everything that survived since the last one: the
    second phase's included the first phase's torn-down plane (~350,000 objects in cycles), about
    0.7 s. Whether that pass fell inside a 10,000-pod window depended on how many objects the
    whole run had allocated before it, so a change that allocated less could move it in (+7 %
    CPU per pod) or out. After a full collection the young generations are empty and their
    counters zero: a window sees its own generation-0 passes (one per ~1,250–1,600 pods) and no older
    pass. (Measured with ``bench/micro/loop_idle.py``; see docs/bench.md, session 12, basicwall.)
    """
    gc.collect()
