"""Workload-aware preemption cost: a high-priority gang preempting a 1,000-pod low-priority group.

In-process control plane, fake Nodes (no node agent; pods have no grace period, so a preempted
pod is gone as soon as the scheduler deletes it). A low-priority gang PodGroup of ``--victims``
pods fills the cluster (two 16-cpu pods per 32-cpu node) and is scheduled first; then a
high-priority gang of ``--preemptor`` pods is created and the clock runs until every preemptor
pod is bound. Reported per victim ``disruptionMode``:

* **post-filter**: time inside WorkloadAwarePreemption, split into the *search* (victim units and
  the reprieve search, re-running the group algorithm on the snapshot; how many runs) and the
  *API writes* (DisruptionTarget + delete + ``Preempted`` event per victim pod, DisruptionTarget
  on an ``all`` PodGroup);
* **create→bound**: preemptor created → all its pods bound (includes the preemption cycle, the
  deletes reaching the scheduler's cache, and the second cycle that binds).

    python bench/bench_preemption.py                          # 1,000 victims on 500 nodes, all and single
    python bench/bench_preemption.py --mode all --profile     # cProfile the preemption

With ``single`` every victim pod is its own unit: the search reprieves one unit per algorithm run,
so it costs one group scheduling per victim - the price of preempting "only as many as needed".
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

from apiserver.api.types import Obj

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import NODES, PODGROUPS, PODS, PRIORITYCLASSES, Client  # noqa: E402
from gangplane.controlplane import ControlPlane  # noqa: E402
from scheduler.component import register_scheduler  # noqa: E402
from scheduler.plugins.workload_preemption import WorkloadAwarePreemption  # noqa: E402
from scheduler.scheduler import Scheduler  # noqa: E402


def make_node(i: int) -> Obj:
    name = f"node-{i:05d}"
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def pod_group(name: str, min_count: int, mode: str, priority_class: str) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": min_count}},
            "disruptionMode": {mode: {}},
            "priorityClassName": priority_class,
        },
    }


def member(group: str, i: int, priority_class: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{group}-{i}", "namespace": "default", "labels": {"app": group}},
        "spec": {
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": 0,
            "schedulingGroup": {"podGroupName": group},
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": "16"}}}
            ],
        },
    }


class Bound:
    """Fires when ``target`` pods whose name starts with ``prefix`` carry ``spec.nodeName``."""

    def __init__(self, client: Client, prefix: str, target: int) -> None:
        self.client, self.prefix, self.target = client, prefix, target
        self.bound: set[str] = set()
        self.done = asyncio.Event()
        self.at = 0.0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> Bound:
        lst = await self.client.list(PODS, "default")
        for p in lst["items"]:
            self._see(p)
        self._task = asyncio.create_task(self._run(lst["metadata"]["resourceVersion"]))
        return self

    def _see(self, p: Obj) -> None:
        name = p["metadata"]["name"]
        if name.startswith(self.prefix) and (p.get("spec") or {}).get("nodeName"):
            self.bound.add(name)
            if len(self.bound) >= self.target and not self.done.is_set():
                self.at = time.perf_counter()
                self.done.set()

    async def _run(self, rv: str) -> None:
        async for ev in self.client.watch(PODS, "default", resource_version=rv):
            if ev.type in ("ADDED", "MODIFIED"):
                self._see(ev.object)

    async def stop(self) -> None:
        while self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.1)


class Timed:
    """Wraps WorkloadAwarePreemption.preempt to time it and count group-algorithm runs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.actuation = 0.0
        self.runs = 0
        self.calls = 0
        self._orig = WorkloadAwarePreemption.preempt
        self._orig_prepare = WorkloadAwarePreemption.prepare

    def install(self) -> None:
        timed = self

        async def preempt(plugin: WorkloadAwarePreemption, group: Any, schedule: Any) -> Any:
            def counted() -> Any:
                timed.runs += 1
                return schedule()

            t0 = time.perf_counter()
            try:
                return await timed._orig(plugin, group, counted)
            finally:
                timed.seconds += time.perf_counter() - t0
                timed.calls += 1

        async def prepare(plugin: WorkloadAwarePreemption, *args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await timed._orig_prepare(plugin, *args)
            finally:
                timed.actuation += time.perf_counter() - t0

        WorkloadAwarePreemption.preempt = preempt  # type: ignore[method-assign]
        WorkloadAwarePreemption.prepare = prepare  # type: ignore[method-assign]

    def uninstall(self) -> None:
        WorkloadAwarePreemption.preempt = self._orig  # type: ignore[method-assign]
        WorkloadAwarePreemption.prepare = self._orig_prepare  # type: ignore[method-assign]


async def run(mode: str, victims: int, preemptor: int, profile: cProfile.Profile | None) -> None:
    nodes = victims // 2
    cp = ControlPlane()
    client = cp.client("bench")
    for name, value in (("low", 10), ("high", 1000)):
        await client.create(
            PRIORITYCLASSES,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
    for i in range(nodes):
        await client.create(NODES, make_node(i))
    register_scheduler(cp)
    sched = await cp.start_component("scheduler")
    assert isinstance(sched, Scheduler)

    low = await Bound(client, "low-", victims).start()
    t0 = time.perf_counter()
    await client.create(PODGROUPS, pod_group("low", victims, mode, "low"))
    for i in range(victims):
        await client.create(PODS, member("low", i, "low"))
    await low.done.wait()
    placed = low.at - t0
    await low.stop()

    timed = Timed()
    timed.install()
    high = await Bound(client, "high-", preemptor).start()
    gc.collect()
    if profile is not None:
        profile.enable()
    t0 = time.perf_counter()
    await client.create(PODGROUPS, pod_group("high", preemptor, "single", "high"))
    for i in range(preemptor):
        await client.create(PODS, member("high", i, "high"))
    await high.done.wait()
    elapsed = high.at - t0
    if profile is not None:
        profile.disable()
    timed.uninstall()
    await high.stop()
    left = sum(
        1 for p in (await client.list(PODS, "default"))["items"] if p["metadata"]["name"].startswith("low-")
    )
    print(
        f"disruptionMode={mode:<6} victims {victims:>5} on {nodes:>4} nodes  gang placed in {placed:6.2f} s | "
        f"preemptor of {preemptor}: post-filter {timed.seconds:6.3f} s = search "
        f"{timed.seconds - timed.actuation:6.3f} s ({timed.runs} group-algorithm runs) + API writes "
        f"{timed.actuation:6.3f} s ({timed.calls} call); create→bound {elapsed:6.3f} s; "
        f"{victims - left} victims preempted",
        flush=True,
    )
    await cp.stop()


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--victims", type=int, default=1000, help="pods in the low-priority group")
    ap.add_argument("--preemptor", type=int, default=10, help="pods in the high-priority gang")
    ap.add_argument("--mode", choices=["all", "single", "both"], default="both")
    ap.add_argument("--profile", action="store_true", help="cProfile the preemption; print the top 30")
    args = ap.parse_args(argv)
    profile = cProfile.Profile() if args.profile else None
    for mode in ("all", "single") if args.mode == "both" else (args.mode,):
        await run(mode, args.victims, args.preemptor, profile)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    asyncio.run(main())
