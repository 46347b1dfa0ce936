"""Node-agent throughput: pre-bound pods brought to Running+Ready per second.

An in-process control plane with a 500-node fleet; the agent registers the nodes and is
stopped, N pods are created already bound (``spec.nodeName``, round robin), then a fresh agent
starts (a kubelet restart) and the clock runs until every pod is Ready. That isolates the
agent's work: admission, one status write per pod, events. Prints one line per run; numbers go
in the closing notes, never into assertions.

    python bench/bench_nodeagent.py [--nodes 500] [--pods 1000 10000] [--no-events] [--gc-threshold 50000]

CPython's cyclic GC scans the ever-growing heap of stored objects and costs about half of the
run time at these sizes; ``--gc-threshold`` raises the generation-0 threshold (what a serving
process would do) to show the agent's throughput without that tax.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time

from apiserver.client.interface import NODES, PODS
from controllers.fleet import parse_fleet
from controllers.nodeagent import NodeAgent
from gangplane.controlplane import ControlPlane


def pod(i: int, node: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "bench"}},
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        },
    }


async def run(nodes: int, pods: int, events: bool, gc_note: str = "default gc") -> None:
    cp = ControlPlane()
    fleet = parse_fleet(
        {
            "nodes": [
                {
                    "name": "node-{index}",
                    "count": nodes,
                    "capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                }
            ]
        }
    )
    client = cp.client("bench")
    t = time.perf_counter()
    agent = NodeAgent(
        cp.client("node-agent"), fleet, clock=cp.clock, container_events=events, node_events=events
    )
    await agent.start()
    while True:
        lst = await client.list(NODES)
        ready = sum(1 for n in lst["items"] if not (n.get("spec") or {}).get("taints"))
        if ready == nodes:
            break
        await asyncio.sleep(0.05)
    node_secs = time.perf_counter() - t
    await agent.stop()
    for i in range(pods):
        await client.create(PODS, pod(i, f"node-{i % nodes}"))
    agent = NodeAgent(
        cp.client("node-agent"), fleet, clock=cp.clock, container_events=events, node_events=events
    )
    t = time.perf_counter()
    await agent.start()
    while agent.stats["pods_ready"] < pods:
        await asyncio.sleep(0.01)
    secs = time.perf_counter() - t
    if events:
        await agent.flush_events()
    all_secs = time.perf_counter() - t
    await agent.stop()
    lst = await client.list(PODS, "default")
    assert all(p["status"].get("phase") == "Running" for p in lst["items"]), "some pod is not Running"
    print(
        f"{nodes} nodes Ready in {node_secs:6.2f} s | {pods:>6} pre-bound pods Running+Ready in {secs:6.2f} s "
        f"= {pods / secs:7.0f} pods/s (events {'on ' if events else 'off'}, {gc_note}; {all_secs:6.2f} s incl. event writes) "
        f"| status writes {agent.stats['pod_status_writes']}",
        flush=True,
    )
    await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--no-events", action="store_true", help="only measure with container/node events off")
    ap.add_argument("--gc-threshold", type=int, default=0, help="also run with gc.set_threshold(N, 50, 100)")
    args = ap.parse_args()
    default = gc.get_threshold()
    settings = [(default, "default gc")]
    if args.gc_threshold:
        settings.append(((args.gc_threshold, 50, 100), f"gc threshold {args.gc_threshold}"))
    for threshold, note in settings:
        gc.set_threshold(*threshold)
        for n in args.pods:
            for events in [False] if args.no_events else [True, False]:
                asyncio.run(run(args.nodes, n, events, note))
    gc.set_threshold(*default)


if __name__ == "__main__":
    main()
