"""Resident memory: a cluster of ``nodes`` node-agent hosts and ``pods`` Running pods, per object.

Every shipped component runs (as in ``gangplane serve``): the node agent plays kubelet for the
fleet, so each pod has its binding, status updates, events and watch history, not just one
stored object. The process's resident set (``VmRSS``) is read after a full collection at three
points: before the control plane exists, once every node is Ready, and once every pod is
Running; ``kb_per_node`` and ``kb_per_pod`` are the differences divided by the counts.

Each repetition runs in a child process of its own (this module as ``python -m``, with the
parameters as JSON; it prints its figures as one JSON line). In the bench's process the
baseline held what earlier scenarios and repetitions had left: CPython and the C allocator keep
the memory of freed objects for reuse, so the pods fitted into memory the process already held
(session 24: 0 KB per pod after ``gangs-10x5000`` in one run; a tiny scenario's second
repetition 0.04 KB against its first's 27.5). ``cpu_s`` is the child's
CPU from the plane's start to the last pod Running, under the cyclic-collector settings of
``gangplane serve`` (:func:`~bench.workloads.common.server_gc`).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

from apiserver.client.interface import PODS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, is_running, pod, server_gc
from bench.workloads.statefulsets import _schedulable, _wait_nodes, fleet_doc

METRICS = {
    "rss_mb": Metric("MB", False),
    "kb_per_node": Metric("KB", False),
    "kb_per_pod": Metric("KB", False),
    "pods_running_s": Metric("s", False),
}
PARAMS = {"nodes": 1000, "racks": 20, "pods": 10000}


def rss_mb() -> float:
    """The resident set of this process in MB (``VmRSS``; the peak from getrusage without procfs)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def settled_rss_mb() -> float:
    gc.collect()
    return rss_mb()


#: the folder holding the ``bench`` package this module belongs to: the child imports the same tree
_TREE = Path(__file__).resolve().parents[2]


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    """One repetition, measured in a fresh child process (see the module docstring)."""
    env.progress("measuring in a fresh process")
    path = os.environ.get("PYTHONPATH", "")
    child_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_TREE), path]) if path else str(_TREE)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.workloads.memory",
        json.dumps(params),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_env,
    )
    out, err = await proc.communicate()
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError(f"the measuring process exited with {proc.returncode}: " + " | ".join(tail))
    figures: dict[str, float] = json.loads(out.decode().strip().splitlines()[-1])
    env.cpu_s = (env.cpu_s or 0.0) + figures.pop("cpu_s")
    return figures


async def measure(params: dict[str, Any], env: Env) -> dict[str, float]:
    """The figures of the module docstring, in this process; the plane's CPU marked on ``env``."""
    from controllers.fleet import parse_fleet
    from gangplane.controlplane import ControlPlane, default_components

    nodes, racks, pods = (
        int(params.get("nodes", 1000)),
        int(params.get("racks", 20)),
        int(params.get("pods", 10000)),
    )
    base = settled_rss_mb()
    env.start_cpu()
    cp = ControlPlane()
    fleet = parse_fleet(fleet_doc(nodes, racks))
    names = default_components(cp, fleet, "*")
    await cp.start(names)
    client = cp.client("bench")
    await _wait_nodes(client, len(fleet.node_objects()), _schedulable)
    with_nodes = settled_rss_mb()
    env.progress(f"{nodes} nodes Ready")
    counter = PodCounter(client, "default", pods, is_running)
    await counter.start()
    t0 = time.perf_counter()
    for i in range(pods):
        await client.create(PODS, pod(f"mem-{i}", cpu="10m", memory="16Mi"))
    done = await counter.wait(1800)
    await counter.stop()
    env.stop_cpu()
    env.progress(f"{pods} pods Running")
    with_pods = settled_rss_mb()
    out = {
        "rss_mb": with_pods - base,
        "kb_per_node": (with_nodes - base) * 1024 / max(1, nodes),
        "kb_per_pod": (with_pods - with_nodes) * 1024 / max(1, pods),
        "pods_running_s": done - t0,
    }
    await cp.stop()
    return out


def main(argv: list[str]) -> None:
    """The child's side of :func:`run`: ``argv[0]`` the parameters as JSON; prints the figures."""
    env = Env()
    with server_gc():
        figures = asyncio.run(measure(json.loads(argv[0]), env))
    print(json.dumps({**figures, "cpu_s": env.cpu_s or 0.0}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
