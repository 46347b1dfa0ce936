"""Scheduling throughput of the in-process scheduler (pods/s), after kube's scheduler_perf.

Fake Nodes are created through the API (no node agent: nothing runs the pods), the scheduler is
started, and two numbers are taken per cluster size:

* **create→bound**: pods are created one after another while the scheduler runs; the clock
  stops when a watch has seen the last pod bound (``spec.nodeName`` set by the binding);
* **backlog**: pods are created while the scheduler is stopped, then it starts and the clock
  measures how fast it drains the queue (kube's SchedulingThroughput).

    python bench/bench_scheduler.py                    # 1,000 and 10,000 pods on 500 and 5,000 nodes
    python bench/bench_scheduler.py --pods 1000 --nodes 500 --profile   # cProfile the hot path

Numbers go in notes, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import NODES, PODS, Client  # noqa: E402
from apiserver.controlplane import ControlPlane  # noqa: E402
from scheduler.component import register_scheduler  # noqa: E402
from scheduler.scheduler import Scheduler  # noqa: E402

Obj = dict[str, Any]
ZONES = 10


def make_node(i: int) -> Obj:
    name = f"node-{i:05d}"
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": f"zone-{i % ZONES}",
                "topology.kubernetes.io/region": "region-1",
            },
        },
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def make_pod(prefix: str, i: int) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "labels": {"app": prefix}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                }
            ]
        },
    }


class BoundCounter:
    """Watches pods and fires when ``target`` of them carry ``spec.nodeName``."""

    def __init__(self, client: Client, target: int) -> None:
        self.client = client
        self.target = target
        self.bound: set[str] = set()
        self.done = asyncio.Event()
        self.finished_at = 0.0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        lst = await self.client.list(PODS, "default")
        for p in lst["items"]:
            self._see(p)
        self._task = asyncio.create_task(self._run(lst["metadata"]["resourceVersion"]))

    def _see(self, p: Obj) -> None:
        if (p.get("spec") or {}).get("nodeName"):
            self.bound.add(p["metadata"]["name"])
            if len(self.bound) >= self.target and not self.done.is_set():
                self.finished_at = time.perf_counter()
                self.done.set()

    async def _run(self, rv: str) -> None:
        async for ev in self.client.watch(PODS, "default", resource_version=rv):
            if ev.type in ("ADDED", "MODIFIED"):
                self._see(ev.object)

    async def stop(self) -> None:
        while self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.1)


async def new_cluster(nodes: int) -> ControlPlane:
    cp = ControlPlane()
    c = cp.client("bench")
    for i in range(nodes):
        await c.create(NODES, make_node(i))
    register_scheduler(cp)
    return cp


def report(what: str, pods: int, nodes: int, seconds: float, sched: Scheduler | None = None) -> None:
    extra = f"  ({sched.cycles} cycles)" if sched is not None else ""
    print(
        f"{what:<14} {pods:>6} pods on {nodes:>5} nodes  {seconds:>8.2f} s  {pods / seconds:>8.0f} pods/s{extra}",
        flush=True,
    )


async def create_to_bound(pods: int, nodes: int, profile: cProfile.Profile | None = None) -> float:
    cp = await new_cluster(nodes)
    client = cp.client("bench")
    sched = await cp.start_component("scheduler")
    assert isinstance(sched, Scheduler)
    counter = BoundCounter(client, pods)
    await counter.start()
    gc.collect()
    if profile is not None:
        profile.enable()
    t0 = time.perf_counter()
    for i in range(pods):
        await client.create(PODS, make_pod("run", i))
    await counter.done.wait()
    elapsed = counter.finished_at - t0
    if profile is not None:
        profile.disable()
    report("create→bound", pods, nodes, elapsed, sched)
    await counter.stop()
    await cp.stop()
    return pods / elapsed


async def backlog(pods: int, nodes: int, profile: cProfile.Profile | None = None) -> float:
    cp = await new_cluster(nodes)
    client = cp.client("bench")
    for i in range(pods):
        await client.create(PODS, make_pod("queued", i))
    counter = BoundCounter(client, pods)
    await counter.start()
    gc.collect()
    if profile is not None:
        profile.enable()
    t0 = time.perf_counter()
    sched = await cp.start_component("scheduler")
    assert isinstance(sched, Scheduler)
    await counter.done.wait()
    elapsed = counter.finished_at - t0
    if profile is not None:
        profile.disable()
    report("backlog", pods, nodes, elapsed, sched)
    await counter.stop()
    await cp.stop()
    return pods / elapsed


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, action="append", help="pod counts (default 1000 and 10000)")
    ap.add_argument("--nodes", type=int, action="append", help="node counts (default 500 and 5000)")
    ap.add_argument("--mode", choices=["create", "backlog", "both"], default="both")
    ap.add_argument("--profile", action="store_true", help="cProfile the measured part; print the top 40")
    args = ap.parse_args(argv)
    pod_counts = args.pods or [1000, 10000]
    node_counts = args.nodes or [500, 5000]
    profile = cProfile.Profile() if args.profile else None
    for nodes in node_counts:
        for pods in pod_counts:
            if args.mode in ("create", "both"):
                await create_to_bound(pods, nodes, profile)
            if args.mode in ("backlog", "both"):
                await backlog(pods, nodes, profile)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    asyncio.run(main())
