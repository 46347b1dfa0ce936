"""Resident memory: a cluster of ``nodes`` node-agent hosts and ``pods`` Running pods, per object.

Every shipped component runs (as in ``gangplane serve``): the node agent plays kubelet for the
fleet, so each pod has its binding, status updates, events and watch history, not just one
stored object. The process's resident set (``VmRSS``) is read after a full collection at three
points: before the control plane exists, once every node is Ready, and once every pod is
Running; ``kb_per_node`` and ``kb_per_pod`` are the differences divided by the counts. The
bench process itself and what earlier scenarios left allocated are in the baseline, so run the
scenario on its own for absolute figures; the per-object figures hold either way.
"""

from __future__ import annotations

import gc
import resource
import time
from pathlib import Path
from typing import Any

from apiserver.client.interface import PODS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, is_running, pod
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


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from controllers.fleet import parse_fleet
    from gangplane.controlplane import ControlPlane, default_components

    nodes, racks, pods = (
        int(params.get("nodes", 1000)),
        int(params.get("racks", 20)),
        int(params.get("pods", 10000)),
    )
    base = settled_rss_mb()
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
