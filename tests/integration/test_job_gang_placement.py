"""KEP-5547 with the gang scheduler: a gang Job (parallelism 4) is placed all-or-nothing.

The Job controller compiles the Job into a Workload and a gang PodGroup (minCount 4) and creates
its four pods; with room for three, none is bound and the PodGroup reports
``PodGroupInitiallyScheduled=False``; once a node is added all four bind. Runs once the gang
scheduler (PodGroup cycle) is part of the build; until then it is skipped, not faked.
"""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import JOBS, NODES, PODGROUPS, PODS, Client
from controllers.job import JobController
from controllers.job.workload import new_scheduling_hook as new_job_scheduling_hook
from featuregates import WORKLOAD_WITH_JOB, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.scheduler_support import create_nodes, node, start_scheduler

pytest.importorskip(
    "scheduler.schedule_one_podgroup", reason="the gang scheduler has not landed in this build"
)

pytestmark = pytest.mark.anyio


def gang_job(name: str, parallelism: int, cpu: str) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "w", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            },
        },
    }


def scheduled(pg: Obj | None) -> Obj | None:
    for c in ((pg or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodGroupInitiallyScheduled":
            return c
    return None


async def wait_scheduled(client: Client, name: str, status: str) -> Obj:
    pg = await wait_for_object(
        client, PODGROUPS, name, "default", lambda o: (scheduled(o) or {}).get("status") == status, 15
    )
    assert pg is not None
    return pg


def bound(items: list[Obj], group: str) -> list[Obj]:
    return [
        p
        for p in items
        if (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == group and p["spec"].get("nodeName")
    ]


async def test_gang_job_is_placed_all_or_nothing() -> None:
    cp = ControlPlane(ControlPlaneOptions(gates=FeatureGate(overrides={WORKLOAD_WITH_JOB: True})))
    try:
        client = cp.client("test")
        await create_nodes(client, [node("n1", "4"), node("n2", "2")])  # room for 3 pods of 2 cpu
        await start_scheduler(cp)
        cp.register(
            "job-controller",
            lambda c: JobController(
                c.client("job-controller"), clock=c.clock, scheduling_hook=new_job_scheduling_hook(c)
            ),
        )
        await cp.start_component("job-controller")
        await client.create(JOBS, gang_job("train", 4, "2"), "default")
        (pg,) = await wait_for_list(client, PODGROUPS, "default", lambda items: len(items) == 1)
        name = pg["metadata"]["name"]
        pg = await wait_scheduled(client, name, "False")
        assert (scheduled(pg) or {}).get("reason") == "Unschedulable"
        assert bound((await client.list(PODS, "default"))["items"], name) == [], (
            "no pod bound while 4 do not fit"
        )
        await client.create(NODES, node("n3", "4"))
        await wait_for_list(client, PODS, "default", lambda items: len(bound(items, name)) == 4)
        pg = await wait_scheduled(client, name, "True")
        assert (scheduled(pg) or {}).get("reason") == "Scheduled"
    finally:
        await cp.stop()
