"""KEP-6277 benchmarks: what ``spec.scheduling`` costs the StatefulSet controller.

Run as ``python bench/bench_kep6277.py`` (``--help`` for options). Two measurements, each on a
fresh in-process control plane running only the StatefulSet controller (no scheduler, no node
agent: creation is what is measured):

* **sync cost** (KEP-6277 "Scalability" / SLO "StatefulSets without spec.scheduling see no change
  in controller sync latency"): the controller's ``sync(key)`` is called directly (informers
  running, no workers, so nothing races it) for sets of ``--sync-replicas`` pods in three
  variants — the upstream controller (no hook) on a set without ``spec.scheduling``, the KEP-6277
  controller on the same kind of set, and the KEP-6277 controller on a gang set. For each:
  API calls of the first sync (which creates everything) and of a steady-state sync, and the
  median time of a steady-state sync over ``--syncs`` calls.
* **create -> all pods created** for a Parallel StatefulSet of 100 and 1,000 replicas, without
  and with a gang ``spec.scheduling``: wall-clock seconds from the create call until a watch has
  seen every pod.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from apiserver.api.types import Obj

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import EVENTS, GVR, PODS, STATEFULSETS, Client, WatchEvent  # noqa: E402
from controllers.manager import STATEFULSET, register_controllers  # noqa: E402
from controllers.statefulset import NoopSchedulingHook, StatefulSetController  # noqa: E402
from controllers.statefulset.workload import new_scheduling_hook  # noqa: E402
from controllers.testing import observed, statefulset  # noqa: E402
from gangplane.controlplane import ControlPlane, ControlPlaneOptions  # noqa: E402

NS = "default"
GANG: Obj = {"schedulingPolicy": {"gang": {}}}


class CountingClient:
    """Counts every API call but Events (written asynchronously by the recorder), by resource."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.by_resource: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.by_resource.values())

    def _count(self, gvr: GVR) -> None:
        if gvr != EVENTS:
            self.by_resource[gvr.resource] = self.by_resource.get(gvr.resource, 0) + 1

    def __getattr__(self, verb: str) -> Any:
        method = getattr(self.inner, verb)
        if verb == "watch":

            def watch(gvr: GVR, *args: Any, **kw: Any) -> AsyncIterator[WatchEvent]:
                self._count(gvr)
                return method(gvr, *args, **kw)

            return watch

        async def call(gvr: GVR, *args: Any, **kw: Any) -> Any:
            self._count(gvr)
            return await method(gvr, *args, **kw)

        return call


def manifest(name: str, replicas: int, scheduling: Obj | None) -> Obj:
    body = statefulset(name, replicas, policy="Parallel")
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    if scheduling is not None:
        body["spec"]["scheduling"] = scheduling
    return body


# ---------------------------------------------------------------------------------- sync cost
async def sync_cost(variant: str, replicas: int, syncs: int) -> dict[str, float]:
    cp = ControlPlane(ControlPlaneOptions(bookmark_interval=1.0, client_bookmark_interval=0.5))
    client = cp.client("bench")
    counting = CountingClient(cp.client(STATEFULSET))
    hook = (
        NoopSchedulingHook()
        if variant == "upstream"
        else new_scheduling_hook(cp.context_for("statefulset-controller"))
    )
    ctrl = StatefulSetController(counting, clock=cp.clock, scheduling_hook=hook)  # type: ignore[arg-type]
    ctrl.informers.start()
    await ctrl.informers.wait_for_sync()
    try:
        scheduling = GANG if variant == "gang" else None
        await client.create(STATEFULSETS, manifest("web", replicas, scheduling), NS)
        key = f"{NS}/web"
        await observed(ctrl.sets, key, lambda o: o is not None)
        before = counting.total
        await ctrl.sync(key)
        first = counting.total - before
        for i in range(replicas):
            await observed(ctrl.pods, f"{NS}/web-{i}", lambda o: o is not None)
        await observed(
            ctrl.sets, key, lambda o: bool(o and (o.get("status") or {}).get("replicas") == replicas)
        )
        await ctrl.sync(key)  # settle: the status and revision caches have caught up after this
        await observed(ctrl.sets, key, lambda o: o is not None)
        before = counting.total
        times = []
        for _ in range(syncs):
            t0 = time.perf_counter()
            await ctrl.sync(key)
            times.append(time.perf_counter() - t0)
        steady = (counting.total - before) / syncs
        return {"first_calls": first, "steady_calls": steady, "steady_ms": statistics.median(times) * 1000}
    finally:
        await ctrl.stop()
        await cp.stop()


# ---------------------------------------------------------------------------------- latency
async def create_latency(replicas: int, scheduling: Obj | None) -> float:
    cp = ControlPlane(ControlPlaneOptions(bookmark_interval=1.0, client_bookmark_interval=0.5))
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    client = cp.client("bench")
    try:
        rv = (await client.list(PODS, NS))["metadata"]["resourceVersion"]
        seen: set[str] = set()

        async def until_all() -> float:
            async for ev in client.watch(PODS, NS, label_selector="app=web", resource_version=rv):
                if ev.type == "ADDED":
                    seen.add(ev.object["metadata"]["name"])
                    if len(seen) == replicas:
                        return time.perf_counter()
            raise RuntimeError("watch ended")

        waiter = asyncio.create_task(asyncio.wait_for(until_all(), max(60.0, replicas * 0.3)))
        await asyncio.sleep(0)
        start = time.perf_counter()
        await client.create(STATEFULSETS, manifest("web", replicas, scheduling), NS)
        return await waiter - start
    finally:
        await cp.stop()


async def main(args: argparse.Namespace) -> int:
    print(
        f"KEP-6277 StatefulSet controller sync cost ({args.sync_replicas} replicas, median of {args.syncs} syncs)"
    )
    labels = {
        "upstream": "no hook,   no spec.scheduling",
        "plain": "KEP hook,  no spec.scheduling",
        "gang": "KEP hook,  gang spec.scheduling",
    }
    results = {}
    for variant in ("upstream", "plain", "gang"):
        r = await sync_cost(variant, args.sync_replicas, args.syncs)
        results[variant] = r
        print(
            f"  {labels[variant]}: first sync {r['first_calls']:4.0f} API calls; "
            f"steady sync {r['steady_calls']:4.1f} calls, {r['steady_ms']:7.3f} ms",
            flush=True,
        )
    same = (results["upstream"]["first_calls"], results["upstream"]["steady_calls"]) == (
        results["plain"]["first_calls"],
        results["plain"]["steady_calls"],
    )
    print(f"  no spec.scheduling: same API calls with and without the hook: {'yes' if same else 'NO'}")
    print(
        f"KEP-6277 create -> all pods created (Parallel, StatefulSet controller only; "
        f"median of {args.rounds} rounds after a warm-up)"
    )
    await create_latency(10, GANG)
    for n in args.replicas:
        plain, gang = [], []
        for _ in range(args.rounds):
            plain.append(await create_latency(n, None))
            gang.append(await create_latency(n, GANG))
        print(
            f"  {n:>5} replicas: no spec.scheduling {statistics.median(plain):7.3f}s, "
            f"gang {statistics.median(gang):7.3f}s",
            flush=True,
        )
    return 0 if same else 1


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replicas", type=int, nargs="+", default=[100, 1000], help="latency sizes")
    p.add_argument("--sync-replicas", type=int, default=100, help="pods of the set whose sync is timed")
    p.add_argument("--syncs", type=int, default=200, help="steady-state syncs timed per variant")
    p.add_argument("--rounds", type=int, default=3, help="latency runs per size and variant")
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
