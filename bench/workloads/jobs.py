"""Jobs: create -> ``Complete`` for one Job of ``completions`` pods (``parallelism`` at a time).

The Job controller and the node agent run in-process; the Job's pods are bound by
``spec.nodeName`` (no scheduler) and exit 0 as soon as they run (``time_scale`` 0), so the time
is the controller's work plus the API writes per pod: create, the node agent's status writes, the
tracking-finalizer removal and the Job's status updates. ``gang: true`` turns on
``WorkloadWithJob`` and gives the Job a gang ``spec.scheduling`` (one Workload and one PodGroup
more, and every pod decorated), to show what KEP-5547 costs.
"""

from __future__ import annotations

import time
from typing import Any

from bench.results import Metric
from bench.workloads.common import Env

METRICS = {"complete_s": Metric("s", False), "pods_per_s": Metric("pods/s", True)}
PARAMS = {"completions": 1000, "parallelism": 100, "gang": False}


def _job(completions: int, parallelism: int, gang: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "completions": completions,
        "parallelism": parallelism,
        "template": {
            "spec": {
                "nodeName": "node-1",
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "x"}],
            }
        },
    }
    if gang:
        spec["scheduling"] = {"schedulingPolicy": {"gang": {}}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench"}, "spec": spec}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from apiserver.client.interface import JOBS
    from controllers.fleet import parse_fleet
    from controllers.job import JobController
    from controllers.job.workload import new_scheduling_hook as new_job_scheduling_hook
    from controllers.nodeagent import node_agent_factory
    from featuregates import WORKLOAD_WITH_JOB, FeatureGate
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    completions = int(params.get("completions", 1000))
    parallelism = int(params.get("parallelism", 100))
    gang = bool(params.get("gang", False))
    fleet = parse_fleet(
        {
            "nodes": [
                {
                    "name": "node-{index}",
                    "count": 2,
                    "capacity": {"cpu": "512", "memory": "2Ti", "pods": "5000"},
                }
            ]
        }
    )
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate(overrides={WORKLOAD_WITH_JOB: gang})))
    cp.register("node-agent", node_agent_factory(fleet, time_scale=0.0, container_events=False))
    cp.register(
        "job-controller",
        lambda c: JobController(
            c.client("job-controller"), clock=c.clock, scheduling_hook=new_job_scheduling_hook(c)
        ),
    )
    try:
        await cp.start_component("node-agent")
        await cp.start_component("job-controller")
        client = cp.client("bench")
        rv = (await client.list(JOBS, "default"))["metadata"]["resourceVersion"]
        env.start_cpu()
        t = time.perf_counter()
        await client.create(JOBS, _job(completions, parallelism, gang), "default")
        async for ev in client.watch(JOBS, "default", resource_version=rv):
            conds = (ev.object.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conds):
                secs = time.perf_counter() - t
                env.stop_cpu(completions)
                env.progress(f"{completions} pods in {secs:.1f}s")
                return {"complete_s": secs, "pods_per_s": completions / secs}
        raise RuntimeError("the Job watch ended before the Job completed")
    finally:
        await cp.stop()
