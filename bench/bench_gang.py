"""PodGroup scheduling throughput: gangs against the same pods without gangs (issue 15's scale ask).

Scenarios, each on a fresh in-process control plane with ``--nodes`` fake Nodes (default 5,000;
racks of 100 nodes via ``topology.kubernetes.io/rack``, 32 cpu each, no node agent):

* ``plain``   N×M pods with no PodGroup (the pod-by-pod baseline);
* ``gang``    N gangs of M pods (``schedulingPolicy.gang.minCount = M``);
* ``rack``    the same gangs with ``schedulingConstraints.topology: [rack]``.

for ``1000×3`` and ``3×1000``. Objects are created while the scheduler is stopped (a backlog, as
kube's scheduler_perf measures throughput); the clock runs from the scheduler's start until a
watch has seen the last pod bound; the process CPU time of that span is printed too (the wall
clock of a shared machine is noisy). Numbers go in notes, never into assertions.

    python bench/bench_gang.py                          # all scenarios on 5,000 nodes
    python bench/bench_gang.py --nodes 500 --shape 3x1000 --mode rack --profile
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

from apiserver.api.types import Obj

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import NODES, PODGROUPS, PODS  # noqa: E402
from bench.bench_scheduler import BoundCounter  # noqa: E402
from gangplane.controlplane import ControlPlane  # noqa: E402
from scheduler.component import register_scheduler  # noqa: E402
from scheduler.scheduler import Scheduler  # noqa: E402

RACK = "topology.kubernetes.io/rack"
NODES_PER_RACK = 100


def make_node(i: int) -> Obj:
    name = f"node-{i:05d}"
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, RACK: f"rack-{i // NODES_PER_RACK:03d}"},
        },
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": dict(alloc)},
    }


def make_pod(name: str, group: str) -> Obj:
    spec: Obj = {
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            }
        ]
    }
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def make_pod_group(name: str, size: int, rack: bool) -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": size}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


async def run(mode: str, groups: int, size: int, nodes: int, profile: cProfile.Profile | None) -> float:
    cp = ControlPlane()
    client = cp.client("bench")
    for i in range(nodes):
        await client.create(NODES, make_node(i))
    register_scheduler(cp)
    for g in range(groups):
        group = "" if mode == "plain" else f"g{g}"
        if group:
            await client.create(PODGROUPS, make_pod_group(group, size, mode == "rack"))
        for i in range(size):
            await client.create(PODS, make_pod(f"p{g}-{i}", group))
    pods = groups * size
    counter = BoundCounter(client, pods)
    await counter.start()
    gc.collect()
    if profile is not None:
        profile.enable()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    sched = await cp.start_component("scheduler")
    assert isinstance(sched, Scheduler)
    await counter.done.wait()
    elapsed = counter.finished_at - t0
    cpu = time.process_time() - cpu0
    if profile is not None:
        profile.disable()
    racks = len({(await client.get(PODS, f"p{g}-0", "default"))["spec"]["nodeName"] for g in range(groups)})
    print(
        f"{mode:<6} {groups:>5}x{size:<5} on {nodes:>5} nodes  {elapsed:>7.2f} s ({cpu:.2f} s cpu)"
        f"  {pods / elapsed:>7.0f} pods/s  ({sched.cycles} cycles, first pods on {racks} distinct nodes)",
        flush=True,
    )
    await counter.stop()
    await cp.stop()
    return pods / elapsed


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--shape", action="append", help="GROUPSxSIZE (default 1000x3 and 3x1000)")
    ap.add_argument("--mode", action="append", choices=["plain", "gang", "rack"])
    ap.add_argument("--profile", action="store_true", help="cProfile the measured part; print the top 40")
    args = ap.parse_args(argv)
    shapes = [tuple(int(x) for x in s.split("x")) for s in (args.shape or ["1000x3", "3x1000"])]
    modes = args.mode or ["plain", "gang", "rack"]
    profile = cProfile.Profile() if args.profile else None
    for groups, size in shapes:
        for mode in modes:
            await run(mode, groups, size, args.nodes, profile)
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    asyncio.run(main())
