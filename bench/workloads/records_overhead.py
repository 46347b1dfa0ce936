"""What gangplane's scheduling records cost on SchedulingBasic: the same backlog drained with and without.

Each repetition drains a backlog of plain pods onto fake nodes four times, records off, on, on,
off (each on a fresh control plane, the previous one's garbage collected first): the ABBA order
cancels what running second or later costs a drain in one process (a larger heap, warmer caches),
which a plain off-then-on order charged to one side. Each side is the mean of its two drains. It measures the process's CPU seconds from the scheduler's start
until every pod is bound (``cpu_s_records_*``: the scheduling path, where records are captured
and the first-try successes' writes are deferred) and until every record is written too
(``cpu_s_records_on_written``). CPU seconds, not wall time: the machine is shared.
``overhead_pct`` is the scheduling path's, ``overhead_written_pct`` everything's.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from apiserver.client.interface import PODS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, create_nodes, is_bound, pod

METRICS = {
    "cpu_s_records_off": Metric("s", False),
    "cpu_s_records_on": Metric("s", False),
    "cpu_s_records_on_written": Metric("s", False),
    "overhead_pct": Metric("%", False),
    "overhead_written_pct": Metric("%", False),
    "pods_per_s_records_off": Metric("pods/s", True),
    "pods_per_s_records_on": Metric("pods/s", True),
    "record_writes": Metric("writes", False),
}
PARAMS = {"nodes": 500, "pods": 1000}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    nodes, pods = int(params.get("nodes", 500)), int(params.get("pods", 1000))
    runs: dict[bool, list[tuple[float, float, float, int]]] = {False: [], True: []}
    for records in (False, True, True, False):
        gc.collect()  # the previous plane's cycles, outside the measured phase
        runs[records].append(await _drain(nodes, pods, records, env))
    off_cpu, _, off_wall, _ = _mean(runs[False])
    on_cpu, on_written, on_wall, writes = _mean(runs[True])
    return {
        "cpu_s_records_off": off_cpu,
        "cpu_s_records_on": on_cpu,
        "cpu_s_records_on_written": on_written,
        "overhead_pct": 100.0 * (on_cpu / off_cpu - 1.0) if off_cpu else 0.0,
        "overhead_written_pct": 100.0 * (on_written / off_cpu - 1.0) if off_cpu else 0.0,
        "pods_per_s_records_off": pods / off_wall,
        "pods_per_s_records_on": pods / on_wall,
        "record_writes": float(writes),
    }


def _mean(runs: list[tuple[float, float, float, int]]) -> tuple[float, float, float, int]:
    n = len(runs)
    return (
        sum(r[0] for r in runs) / n,
        sum(r[1] for r in runs) / n,
        sum(r[2] for r in runs) / n,
        round(sum(r[3] for r in runs) / n),
    )


async def _drain(nodes: int, pods: int, records: bool, env: Env) -> tuple[float, float, float, int]:
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components

    cp = ControlPlane(ControlPlaneOptions(scheduling_records=records))
    default_components(cp, Fleet.empty(), "*")
    client = cp.client("bench")
    await create_nodes(client, nodes)
    for i in range(pods):
        await client.create(PODS, pod(f"queued-{i}"))
    counter = PodCounter(client, "default", pods, is_bound)
    await counter.start()
    cpu0, t0 = time.process_time(), time.perf_counter()
    sched = await cp.start_component("scheduler")
    await counter.wait(600)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    writes = 0
    written = cpu
    if records:
        rec = sched.records  # type: ignore[attr-defined]
        await rec.flush()
        writes = rec.writes
        written = time.process_time() - cpu0
    env.progress(
        f"records {'on' if records else 'off'}: {cpu:.2f} CPU s ({written:.2f} written), {wall:.2f} s"
    )
    await counter.stop()
    await cp.stop()
    return cpu, written, wall, writes
