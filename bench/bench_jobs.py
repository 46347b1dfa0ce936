"""Job benchmarks: create -> Complete for Jobs of 100 and 1,000 completions, and the KEP-5547 cost.

Run as ``python bench/bench_jobs.py`` (``--help`` for options). Each measurement uses a fresh
in-process control plane with the Job controller and the node agent (pods bound by
``spec.nodeName``, so no scheduler), ``time_scale`` 0 (pods exit as soon as they run), and reports
wall-clock seconds from the create call to the ``Complete`` condition, observed through a watch.
``--gang`` also turns on ``WorkloadWithJob`` and gives the Jobs a gang ``spec.scheduling``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apiserver.client.interface import JOBS  # noqa: E402
from apiserver.controlplane import ControlPlane, ControlPlaneOptions  # noqa: E402
from controllers.fleet import parse_fleet  # noqa: E402
from controllers.job import JobController  # noqa: E402
from controllers.job.scheduling import new_job_scheduling_hook  # noqa: E402
from controllers.nodeagent import node_agent_factory  # noqa: E402
from featuregates import WORKLOAD_WITH_JOB, FeatureGate  # noqa: E402

Obj = dict[str, Any]
FLEET = parse_fleet({"nodes": [{"name": "node-{index}", "count": 20, "capacity": {"cpu": "256", "memory": "1Ti", "pods": "1000"}}]})


def job(completions: int, parallelism: int, gang: bool) -> Obj:
    spec: Obj = {
        "completions": completions,
        "parallelism": parallelism,
        "template": {"spec": {"nodeName": "node-1", "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}},
    }
    if gang:
        spec["scheduling"] = {"schedulingPolicy": {"gang": {}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench"}, "spec": spec}


async def run_once(completions: int, parallelism: int, gang: bool) -> float:
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate(overrides={WORKLOAD_WITH_JOB: gang})))
    cp.register("node-agent", node_agent_factory(FLEET, time_scale=0.0, container_events=False))
    cp.register(
        "job-controller",
        lambda c: JobController(c.client("job-controller"), clock=c.clock, scheduling_hook=new_job_scheduling_hook(c)),
    )
    try:
        await cp.start_component("node-agent")
        await cp.start_component("job-controller")
        client = cp.client("bench")
        lst = await client.list(JOBS, "default")
        start = time.perf_counter()
        await client.create(JOBS, job(completions, parallelism, gang), "default")
        async for ev in client.watch(JOBS, "default", resource_version=lst["metadata"]["resourceVersion"]):
            conds = (ev.object.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Complete" and c["status"] == "True" for c in conds):
                return time.perf_counter() - start
        raise RuntimeError("watch ended")
    finally:
        await cp.stop()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100,1000", help="completions per Job (parallelism = completions / 10, min 10)")
    ap.add_argument("--gang", action="store_true", help="WorkloadWithJob on, gang spec.scheduling")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for n in (int(x) for x in args.sizes.split(",")):
        p = max(n // 10, 10)
        secs = await asyncio.wait_for(run_once(n, p, args.gang), 600)
        print(f"completions={n} parallelism={p} gang={args.gang}: create -> Complete {secs:.2f}s ({n / secs:.0f} pods/s)")


if __name__ == "__main__":
    asyncio.run(main())
