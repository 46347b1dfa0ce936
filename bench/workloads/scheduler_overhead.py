"""``scheduler-overhead-sts-workloads``: KEP-6277's Beta criterion "Performance testing to verify
acceptable scheduler overhead with StatefulSet Workloads".

The same StatefulSets (``sets`` × ``replicas``, one namespace) are placed twice on the same kind
of cluster, each time on a fresh in-process control plane: once with ``spec.scheduling``
(``policy: gang`` or ``basic``, so the controller creates a Workload and a PodGroup per set and the
scheduler runs PodGroup cycles) and once without (plain pod-by-pod scheduling). The variants
alternate ``repeat`` times inside one run so machine load hits both alike.

Metrics, from the first create to the last pod bound: pods/s of each variant, the process CPU
seconds each used (``time.process_time()``: the control plane runs in this process, so this is
API server + controller + scheduler CPU), and the overhead ratios with/without of wall time and
of CPU — the numbers the KEP asks for; nothing is asserted here.
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.client.interface import NAMESPACES, STATEFULSETS
from bench.results import Metric
from bench.workloads.common import Env, create_nodes, start_plane
from bench.workloads.statefulsets import SetTracker, statefulset

METRICS = {
    "with_pods_per_s": Metric("pods/s", True),
    "without_pods_per_s": Metric("pods/s", True),
    "with_cpu_s": Metric("s", False),
    "without_cpu_s": Metric("s", False),
    "overhead_ratio_wall": Metric("x", False),
    "overhead_ratio_cpu": Metric("x", False),
}
PARAMS = {"nodes": 500, "racks": 10, "sets": 200, "replicas": 3, "policy": "gang", "pairs": 1}


def _scheduling(policy: str) -> dict[str, Any] | None:
    if policy == "gang":
        return {"schedulingPolicy": {"gang": {}}}
    if policy == "basic":
        return {"schedulingPolicy": {"basic": {}}}
    raise ValueError(f"policy must be gang or basic, not {policy!r}")


async def place(
    nodes: int, racks: int, sets: int, replicas: int, scheduling: dict[str, Any] | None
) -> tuple[float, float]:
    """Wall and CPU seconds from the first create to the last pod bound, on a fresh plane."""
    cp = await start_plane([])
    try:
        client = cp.client("bench")
        await create_nodes(client, nodes, racks=racks)
        for name in ("statefulset-controller", "scheduler"):
            await cp.start_component(name)
        await client.create(NAMESPACES, {"metadata": {"name": "bench"}})
        tracker = SetTracker(client, "bench", replicas)
        await tracker.start()
        wall, cpu = time.perf_counter(), time.process_time()
        for s in range(sets):
            body = statefulset(f"sts-{s}", replicas, False, "")
            if scheduling is not None:
                body["spec"]["scheduling"] = scheduling
            await client.create(STATEFULSETS, body, "bench")
        await tracker.wait(sets, "bound", 900)
        elapsed = max(tracker.last["bound"].values()) - wall
        used = time.process_time() - cpu
        await tracker.stop()
        return elapsed, used
    finally:
        await cp.stop()


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    nodes, racks = int(params.get("nodes", 500)), int(params.get("racks", 10))
    sets, replicas = int(params.get("sets", 200)), int(params.get("replicas", 3))
    scheduling = _scheduling(str(params.get("policy", "gang")))
    pods = sets * replicas
    with_wall = with_cpu = without_wall = without_cpu = 0.0
    pairs = max(1, int(params.get("pairs", 1)))
    for i in range(pairs):
        w, c = await place(nodes, racks, sets, replicas, scheduling)
        with_wall, with_cpu = with_wall + w, with_cpu + c
        env.progress(f"pair {i + 1}: with spec.scheduling {w:.2f}s ({c:.2f}s CPU)")
        w, c = await place(nodes, racks, sets, replicas, None)
        without_wall, without_cpu = without_wall + w, without_cpu + c
        env.progress(f"pair {i + 1}: without {w:.2f}s ({c:.2f}s CPU)")
    return {
        "with_pods_per_s": pods * pairs / with_wall,
        "without_pods_per_s": pods * pairs / without_wall,
        "with_cpu_s": with_cpu / pairs,
        "without_cpu_s": without_cpu / pairs,
        "overhead_ratio_wall": with_wall / without_wall,
        "overhead_ratio_cpu": with_cpu / without_cpu,
    }
