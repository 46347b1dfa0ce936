"""Controller benchmarks: StatefulSet scale-out and garbage collection at 100 and 1,000 pods.

Run as ``python bench/bench_controllers.py`` (``--help`` for options). Each measurement uses a fresh
in-process control plane with only the components it needs:

* **create -> all pods created / all Ready** for a Parallel StatefulSet of 100 and 1,000
  replicas. Pods become Ready through the scheduler and the node agent when both are installed
  (``--ready agent``), otherwise the benchmark plays the kubelet and marks each new pod Ready
  (``--ready bench``), or nobody does (``--ready none``: creation only).
* **garbage collection**: delete a StatefulSet owning 1,000 pods (background and foreground
  propagation) and time until the last pod is gone.

Times are wall-clock seconds measured from the API call to the event that completes the step,
observed through watches (no polling).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from apiserver.api.types import Obj

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import PODS, STATEFULSETS, Client  # noqa: E402
from controllers.manager import GARBAGE_COLLECTOR, NODE_AGENT, STATEFULSET, register_controllers  # noqa: E402
from controllers.testing import PodReadier, statefulset  # noqa: E402
from gangplane.controlplane import ControlPlane, ControlPlaneOptions  # noqa: E402

NS = "default"


async def count_until(
    client: Client, label: str, rv: str, done: Callable[[int, int], bool], timeout: float
) -> float:
    """Follow the pods with ``app=<label>`` from ``rv`` until ``done(existing, ready)``; returns when."""
    ready: dict[str, bool] = {}

    async def run() -> float:
        nready = 0
        async for ev in client.watch(PODS, NS, label_selector=f"app={label}", resource_version=rv):
            if ev.type in ("BOOKMARK", "ERROR"):
                continue
            name = ev.object["metadata"]["name"]
            nready -= ready.pop(name, False)
            if ev.type != "DELETED":
                ready[name] = _ready(ev.object)
                nready += ready[name]
            if done(len(ready), nready):
                return time.perf_counter()
        raise RuntimeError("watch ended")

    return await asyncio.wait_for(run(), timeout)


def _ready(p: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (p.get("status") or {}).get("conditions") or []
    )


def bench_fleet(pods: int) -> Any:
    """Enough identical nodes for ``pods`` pods (110 pods per node, like kubelet's default)."""
    from controllers.fleet import parse_fleet

    count = max(1, -(-pods // 100))
    doc = {
        "nodes": [
            {
                "name": "bench-{index}",
                "count": count,
                "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            }
        ]
    }
    return parse_fleet(doc, "<bench>")


@contextlib.asynccontextmanager
async def control_plane(
    components: list[str], ready: str, replicas: int
) -> AsyncIterator[tuple[ControlPlane, Client]]:
    cp = ControlPlane(ControlPlaneOptions(bookmark_interval=1.0, client_bookmark_interval=0.5))
    register_controllers(cp, ",".join(components) or "")
    names = list(components)
    if ready == "agent":
        from controllers.nodeagent import node_agent_factory
        from scheduler.component import register_scheduler

        cp.register(NODE_AGENT, node_agent_factory(bench_fleet(replicas), time_scale=0.001))
        names = [NODE_AGENT, *register_scheduler(cp), *names]
    client = cp.client("bench")
    try:
        for name in names:
            await cp.start_component(name)
        if ready == "bench":
            async with PodReadier(client, NS):
                yield cp, client
        else:
            yield cp, client
    finally:
        await cp.stop()


def manifest(name: str, replicas: int) -> Obj:
    body = statefulset(name, replicas, policy="Parallel")
    body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 0
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "10m", "memory": "16Mi"}
    }
    return body


async def bench_scale_out(replicas: int, ready: str) -> dict[str, float]:
    async with control_plane([STATEFULSET], ready, replicas) as (_, client):
        rv = (await client.list(PODS, NS))["metadata"]["resourceVersion"]
        created_at: list[float] = []

        def all_created(existing: int, nready: int) -> bool:
            if not created_at and existing == replicas:
                created_at.append(time.perf_counter())
            return existing == replicas and (ready == "none" or nready == replicas)

        start = time.perf_counter()
        waiter = asyncio.create_task(
            count_until(client, "web", rv, all_created, timeout=max(60.0, replicas * 0.3))
        )
        await asyncio.sleep(0)
        await client.create(STATEFULSETS, manifest("web", replicas), NS)
        end = await waiter
        out = {"created": created_at[0] - start}
        if ready != "none":
            out["ready"] = end - start
        return out


async def bench_gc(replicas: int, ready: str, policy: str) -> float:
    async with control_plane([STATEFULSET, GARBAGE_COLLECTOR], ready, replicas) as (cp, client):
        rv = (await client.list(PODS, NS))["metadata"]["resourceVersion"]
        waiter = asyncio.create_task(
            count_until(client, "web", rv, lambda existing, _: existing == replicas, 120)
        )
        await asyncio.sleep(0)
        await client.create(STATEFULSETS, manifest("web", replicas), NS)
        await waiter
        sts_ctrl = cp.components[STATEFULSET]
        gc = cp.components[GARBAGE_COLLECTOR]
        await sts_ctrl.wait_idle(120)  # type: ignore[attr-defined]
        await gc.wait_idle(120)  # type: ignore[attr-defined]
        lst = await client.list(PODS, NS, label_selector="app=web")
        rv = lst["metadata"]["resourceVersion"]
        remaining = {p["metadata"]["name"] for p in lst["items"]}
        start = time.perf_counter()

        async def until_gone() -> float:
            async for ev in client.watch(PODS, NS, label_selector="app=web", resource_version=rv):
                if ev.type == "DELETED":
                    remaining.discard(ev.object["metadata"]["name"])
                    if not remaining:
                        return time.perf_counter()
            raise RuntimeError("watch ended")

        waiter2 = asyncio.create_task(asyncio.wait_for(until_gone(), 300))
        await asyncio.sleep(0)
        await client.delete(STATEFULSETS, "web", NS, propagation_policy=policy)
        end = await waiter2
        return end - start


async def main(args: argparse.Namespace) -> int:
    ready = args.ready
    if ready == "auto":
        ready = "agent"
    print(f"gangplane controller benchmarks (readiness: {ready})")
    for n in args.replicas:
        res = await bench_scale_out(n, ready)
        line = f"  StatefulSet Parallel {n:>5} replicas: all pods created {res['created']:7.3f}s"
        if "ready" in res:
            line += f", all Ready {res['ready']:7.3f}s"
        print(line, flush=True)
    gc_ready = "bench" if ready == "agent" and args.gc_without_agent else ready
    for policy in ("Background", "Foreground"):
        t = await bench_gc(args.gc_pods, gc_ready, policy)
        print(
            f"  garbage collector, {policy:<10} delete of a StatefulSet with {args.gc_pods} pods: {t:7.3f}s",
            flush=True,
        )
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--replicas", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--gc-pods", type=int, default=1000)
    p.add_argument("--ready", choices=["auto", "agent", "bench", "none"], default="auto")
    p.add_argument(
        "--gc-without-agent",
        action="store_true",
        help="measure the garbage collector with bench readiness even when the node agent exists",
    )
    p.add_argument("--log-level", default="warning")
    return p.parse_args(argv)


if __name__ == "__main__":
    ns = parse()
    logging.basicConfig(level=ns.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.exit(asyncio.run(main(ns)))
