"""Shared setup of the Job, CronJob and TTL-after-finished integration tests.

Each test runs an in-process control plane with the controller under test and the node agent on
a two-node fleet at ``time_scale=0.01``; Job pod templates carry ``spec.nodeName`` so no scheduler
is needed (the node agent runs pods bound to its nodes). Pods finish through the agent's own
behaviour: the run-to-completion default (exit 0), ``gangplane.dev/fail`` (exit 1),
``gangplane.dev/complete-after``.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, JOBS, PODS, Client
from controllers.fleet import parse_fleet
from controllers.job import JobController
from controllers.job.workload import new_scheduling_hook as new_job_scheduling_hook
from controllers.nodeagent import node_agent_factory
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list, wait_for_object

FLEET = parse_fleet(
    {
        "nodes": [
            {"name": "node-{index}", "count": 2, "capacity": {"cpu": "64", "memory": "64Gi", "pods": "200"}}
        ]
    }
)
TIME_SCALE = 0.01


def job(
    name: str = "pi", *, annotations: dict[str, str] | None = None, restart: str = "Never", **spec: Any
) -> Obj:
    tmpl: Obj = {
        "spec": {
            "nodeName": "node-1",
            "restartPolicy": restart,
            "containers": [{"name": "main", "image": "busybox"}],
        }
    }
    if annotations:
        tmpl["metadata"] = {"annotations": annotations}
    body: Obj = {"template": tmpl}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": body}


def condition(job: Obj | None, ctype: str) -> Obj | None:
    for c in ((job or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def has_condition(ctype: str, status: str = "True"):  # noqa: ANN201 - predicate factory
    return lambda j: (condition(j, ctype) or {}).get("status") == status


async def wait_job(client: Client, name: str, cond: Any, timeout: float = 15.0) -> Obj:
    out = await wait_for_object(client, JOBS, name, "default", cond, timeout)
    assert out is not None
    return out


async def job_pods(client: Client, name: str) -> list[Obj]:
    return (await client.list(PODS, "default", label_selector=f"batch.kubernetes.io/job-name={name}"))[
        "items"
    ]


async def wait_events(client: Client, name: str, reason: str, timeout: float = 10.0) -> list[Obj]:
    def mine(items: list[Obj]) -> list[Obj]:
        return [e for e in items if e["involvedObject"].get("name") == name and e["reason"] == reason]

    return mine(await wait_for_list(client, EVENTS, "default", lambda items: bool(mine(items)), timeout))


async def start_cluster(
    cp: ControlPlane, *, workload_hook: bool = False, **job_options: Any
) -> JobController:
    """The node agent plus a Job controller (with the KEP-5547 hook when ``workload_hook``)."""
    cp.register("node-agent", node_agent_factory(FLEET, time_scale=TIME_SCALE))
    await cp.start_component("node-agent")
    opts = {"pod_failure_backoff": 0.0, **job_options}

    def factory(c: ControlPlane) -> JobController:
        hook = new_job_scheduling_hook(c) if workload_hook else None
        return JobController(c.client("job-controller"), clock=c.clock, scheduling_hook=hook, **opts)

    cp.register("job-controller", factory)
    ctrl = await cp.start_component("job-controller")
    assert isinstance(ctrl, JobController)
    return ctrl
