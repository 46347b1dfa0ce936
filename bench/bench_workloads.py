"""Workload controller benchmarks: Deployments (create and rolling update) and DaemonSets.

Run as ``python bench/bench_workloads.py`` (``--help`` for options). Each measurement uses a fresh
in-process control plane with the Deployment and ReplicaSet (or DaemonSet) controllers, the
scheduler and the node agent, so pods are really bound and become Ready (``--ready agent``, the
default when both are installed), or the benchmark plays the kubelet (``--ready bench``):

* **Deployment create -> all pods created / all available**, 100 and 1,000 replicas;
* **rolling update** of that Deployment (new image, 25%/25%) -> the rollout is complete;
* **DaemonSet create -> one available pod per node**, on 100 and 500 Ready nodes.

Times are wall-clock seconds from the API call to the watch event that completes the step.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from apiserver.api.types import Obj

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import DAEMONSETS, DEPLOYMENTS, GVR, NODES, Client  # noqa: E402
from bench.bench_controllers import _have, control_plane  # noqa: E402
from controllers.manager import DAEMONSET, DEPLOYMENT, REPLICASET  # noqa: E402

NS = "default"


async def until(
    client: Client, gvr: GVR, name: str, rv: str, done: Callable[[Obj], bool], timeout: float
) -> float:
    async def run() -> float:
        async for ev in client.watch(gvr, NS, field_selector=f"metadata.name={name}", resource_version=rv):
            if ev.type in ("ADDED", "MODIFIED") and done(ev.object):
                return time.perf_counter()
        raise RuntimeError("watch ended")

    return await asyncio.wait_for(run(), timeout)


def _status(o: Obj) -> Obj:
    return o.get("status") or {}


def deployment(replicas: int, image: str = "nginx:1") -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [
                        {
                            "name": "c",
                            "image": image,
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        }
                    ],
                },
            },
        },
    }


def rolled_out(replicas: int, generation: int) -> Callable[[Obj], bool]:
    def done(o: Obj) -> bool:
        st = _status(o)
        return (
            st.get("observedGeneration", 0) >= generation
            and st.get("updatedReplicas") == replicas
            and st.get("availableReplicas") == replicas
            and st.get("replicas") == replicas
        )

    return done


async def bench_deployment(replicas: int, ready: str) -> dict[str, float]:
    async with control_plane([DEPLOYMENT, REPLICASET], ready, replicas) as (_, client):
        rv = (await client.list(DEPLOYMENTS, NS))["metadata"]["resourceVersion"]
        timeout = max(60.0, replicas * 0.3)
        created = asyncio.create_task(
            until(client, DEPLOYMENTS, "web", rv, lambda o: _status(o).get("replicas") == replicas, timeout)
        )
        available = asyncio.create_task(
            until(client, DEPLOYMENTS, "web", rv, rolled_out(replicas, 1), timeout)
        )
        await asyncio.sleep(0)
        start = time.perf_counter()
        await client.create(DEPLOYMENTS, deployment(replicas), NS)
        out = {"created": await created - start, "available": await available - start}
        rv = (await client.list(DEPLOYMENTS, NS))["metadata"]["resourceVersion"]
        updated = asyncio.create_task(
            until(client, DEPLOYMENTS, "web", rv, rolled_out(replicas, 2), timeout * 2)
        )
        await asyncio.sleep(0)
        start = time.perf_counter()
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}
        await client.patch(DEPLOYMENTS, "web", patch, NS, patch_type="application/strategic-merge-patch+json")
        out["rolled"] = await updated - start
        return out


async def nodes_ready(client: Client, count: int, timeout: float) -> None:
    """Until ``count`` nodes are registered and none carries a taint (the not-ready taint is gone)."""

    async def run() -> None:
        lst = await client.list(NODES)
        nodes = {n["metadata"]["name"]: n for n in lst["items"]}

        def done() -> bool:
            return len(nodes) >= count and not any(
                (n.get("spec") or {}).get("taints") for n in nodes.values()
            )

        if done():
            return
        async for ev in client.watch(NODES, resource_version=lst["metadata"]["resourceVersion"]):
            if ev.type in ("ADDED", "MODIFIED"):
                nodes[ev.object["metadata"]["name"]] = ev.object
            if done():
                return

    await asyncio.wait_for(run(), timeout)


async def bench_daemonset(nodes: int, ready: str) -> float:
    async with control_plane([DAEMONSET], ready, nodes * 100) as (_, client):
        await nodes_ready(client, nodes, 120)
        rv = (await client.list(DAEMONSETS, NS))["metadata"]["resourceVersion"]
        body = deployment(0)
        body["kind"] = "DaemonSet"
        body["metadata"]["name"] = "agent"
        del body["spec"]["replicas"]
        done = asyncio.create_task(
            until(
                client,
                DAEMONSETS,
                "agent",
                rv,
                lambda o: (
                    _status(o).get("numberAvailable") == nodes
                    and _status(o).get("desiredNumberScheduled") == nodes
                ),
                max(60.0, nodes * 0.5),
            )
        )
        await asyncio.sleep(0)
        start = time.perf_counter()
        await client.create(DAEMONSETS, body, NS)
        return await done - start


async def main(args: argparse.Namespace) -> int:
    ready = args.ready
    if ready == "auto":
        ready = "agent" if _have("controllers.nodeagent") and _have("scheduler.component") else "bench"
    print(f"gangplane workload benchmarks (readiness: {ready})")
    for n in args.replicas:
        r = await bench_deployment(n, ready)
        print(
            f"  Deployment {n:>5} replicas: all pods created {r['created']:7.3f}s, all available {r['available']:7.3f}s, "
            f"rolling update complete {r['rolled']:7.3f}s",
            flush=True,
        )
    if ready == "agent":
        for n in args.nodes:
            t = await bench_daemonset(n, ready)
            print(f"  DaemonSet on {n:>4} nodes: one available pod per node {t:7.3f}s", flush=True)
    return 0


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--replicas", type=int, nargs="+", default=[100, 1000])
    p.add_argument(
        "--nodes", type=int, nargs="+", default=[100, 500], help="DaemonSet fleet sizes (node agent only)"
    )
    p.add_argument("--ready", choices=["auto", "agent", "bench"], default="auto")
    p.add_argument("--log-level", default="warning")
    return p.parse_args(argv)


if __name__ == "__main__":
    ns = parse()
    logging.basicConfig(level=ns.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.exit(asyncio.run(main(ns)))
