"""CronJob controller behaviours (kube's ``cronjob_controllerv2_test.go``), driven by a fake clock.

The control plane and the controller share a :class:`FakeClock`: a test steps it past a schedule
time and pokes the controller's deadline heap, so "the CronJob fires when the clock advances" is
checked without waiting for real minutes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CRONJOBS, EVENTS, JOBS, Client
from apiserver.meta import FakeClock, rfc3339
from controllers.cronjob import CronJobController
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list, wait_for_object

pytestmark = pytest.mark.anyio

START = 1_800_000_000.0  # 2027-01-15T08:00:00Z, on a 5-minute boundary


@pytest.fixture
async def env() -> AsyncIterator[tuple[Client, CronJobController, FakeClock]]:
    clock = FakeClock(START)
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    cp.register(
        "cronjob-controller", lambda c: CronJobController(c.client("cronjob-controller"), clock=c.clock)
    )
    ctrl = await cp.start_component("cronjob-controller")
    assert isinstance(ctrl, CronJobController)
    try:
        yield cp.client("test"), ctrl, clock
    finally:
        await cp.stop()


def cronjob(name: str = "hello", schedule: str = "*/5 * * * *", **spec: Any) -> Obj:
    body: Obj = {
        "schedule": schedule,
        "jobTemplate": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}
                }
            },
        },
    }
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


async def advance(ctrl: CronJobController, clock: FakeClock, seconds: float) -> None:
    clock.step(seconds)
    ctrl.timers.poke()


async def jobs_of(client: Client, n: int, label: str = "app=hello") -> list[Obj]:
    return await wait_for_list(client, JOBS, "default", lambda items: len(items) == n, label_selector=label)


async def event(client: Client, name: str, reason: str) -> Obj:
    def mine(items: list[Obj]) -> list[Obj]:
        return [e for e in items if e["involvedObject"].get("name") == name and e["reason"] == reason]

    return mine(await wait_for_list(client, EVENTS, "default", lambda items: bool(mine(items))))[0]


async def finish(client: Client, job: Obj, ctype: str = "Complete") -> None:
    """Write a finished status as the Job controller would (the Job started when it was created)."""
    started = job["metadata"]["creationTimestamp"]
    now = rfc3339(START + 10_000)
    conds = [
        {
            "type": "SuccessCriteriaMet" if ctype == "Complete" else "FailureTarget",
            "status": "True",
            "lastTransitionTime": now,
        },
        {"type": ctype, "status": "True", "lastTransitionTime": now},
    ]
    job = await client.get(JOBS, job["metadata"]["name"], "default")
    job["status"] = {"conditions": conds, "startTime": started}
    if ctype == "Complete":
        job["status"]["completionTime"] = now
    await client.update_status(JOBS, job, "default")


async def test_cronjob_creates_a_job_when_the_clock_reaches_its_schedule(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(), "default")
    await ctrl.wait_idle()
    assert (await client.list(JOBS, "default"))["items"] == []
    await advance(ctrl, clock, 300)
    (job,) = await jobs_of(client, 1)
    scheduled = START + 300
    assert job["metadata"]["name"] == f"hello-{int(scheduled // 60)}"
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == rfc3339(
        scheduled
    )
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["apiVersion"], ref["controller"]) == ("CronJob", "batch/v1", True)
    cj = await wait_for_object(
        client, CRONJOBS, "hello", "default", lambda o: bool((o or {}).get("status", {}).get("active"))
    )
    assert cj["status"]["lastScheduleTime"] == rfc3339(scheduled)
    assert cj["status"]["active"][0]["name"] == job["metadata"]["name"]
    assert (await event(client, "hello", "SuccessfulCreate"))[
        "message"
    ] == f"Created job {job['metadata']['name']}"


async def test_completed_job_leaves_active_and_sets_last_successful_time(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(), "default")
    await advance(ctrl, clock, 300)
    (job,) = await jobs_of(client, 1)
    await finish(client, job)
    cj = await wait_for_object(
        client,
        CRONJOBS,
        "hello",
        "default",
        lambda o: bool((o or {}).get("status", {}).get("lastSuccessfulTime")),
    )
    assert "active" not in cj["status"]
    assert (await event(client, "hello", "SawCompletedJob"))[
        "message"
    ] == f"Saw completed job: {job['metadata']['name']}, condition: Complete"


async def test_forbid_concurrency_skips_while_a_job_is_active(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(concurrencyPolicy="Forbid"), "default")
    await advance(ctrl, clock, 300)
    await jobs_of(client, 1)
    await advance(ctrl, clock, 300)
    ev = await event(client, "hello", "JobAlreadyActive")
    assert (
        ev["message"]
        == "Not starting job because prior execution is running and concurrency policy is Forbid"
    )
    assert len((await client.list(JOBS, "default"))["items"]) == 1


async def test_replace_concurrency_deletes_the_active_job(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(concurrencyPolicy="Replace"), "default")
    await advance(ctrl, clock, 300)
    (first,) = await jobs_of(client, 1)
    await advance(ctrl, clock, 300)
    (second,) = await wait_for_list(
        client,
        JOBS,
        "default",
        lambda items: [j["metadata"]["name"] for j in items] == [f"hello-{int((START + 600) // 60)}"],
    )
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert (await event(client, "hello", "SuccessfulDelete"))[
        "message"
    ] == f"Deleted job {first['metadata']['name']}"


async def test_allow_concurrency_runs_jobs_side_by_side(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(), "default")
    await advance(ctrl, clock, 300)
    await jobs_of(client, 1)
    await advance(ctrl, clock, 300)
    await jobs_of(client, 2)


async def test_successful_jobs_history_limit_deletes_the_oldest(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(successfulJobsHistoryLimit=1), "default")
    await advance(ctrl, clock, 300)
    (a,) = await jobs_of(client, 1)
    await finish(client, a)
    await advance(ctrl, clock, 300)
    both = await jobs_of(client, 2)
    b = next(j for j in both if j["metadata"]["name"] != a["metadata"]["name"])
    await finish(client, b)
    await wait_for_list(
        client,
        JOBS,
        "default",
        lambda items: [j["metadata"]["name"] for j in items] == [b["metadata"]["name"]],
    )


async def test_starting_deadline_seconds_skips_a_schedule_that_is_too_late(
    env: tuple[Client, CronJobController, FakeClock],
) -> None:
    client, ctrl, clock = env
    ctrl_clock_before = clock.now()
    await client.create(CRONJOBS, cronjob(startingDeadlineSeconds=10), "default")
    await ctrl.wait_idle()
    # The controller is away for a while: when it looks again the 08:05 run is 50s late.
    ctrl.timers.cancel("default/hello")
    clock.step(350)
    ctrl.enqueue("default/hello")
    await ctrl.wait_idle()
    assert clock.now() - ctrl_clock_before == 350
    assert (await client.list(JOBS, "default"))["items"] == []
    # the next schedule is on time again
    await advance(ctrl, clock, 250)
    await jobs_of(client, 1)


async def test_suspended_cronjob_creates_no_jobs(env: tuple[Client, CronJobController, FakeClock]) -> None:
    client, ctrl, clock = env
    await client.create(CRONJOBS, cronjob(suspend=True), "default")
    await advance(ctrl, clock, 300)
    ctrl.enqueue("default/hello")
    await ctrl.wait_idle()
    assert (await client.list(JOBS, "default"))["items"] == []


async def test_time_zone_shifts_the_schedule(env: tuple[Client, CronJobController, FakeClock]) -> None:
    client, ctrl, clock = env
    # 08:00 UTC is 09:00 in Berlin (CET): "0 10 * * *" there fires at 09:00 UTC, one hour from now
    await client.create(CRONJOBS, cronjob(schedule="0 10 * * *", timeZone="Europe/Berlin"), "default")
    await advance(ctrl, clock, 3000)
    await ctrl.wait_idle()
    assert (await client.list(JOBS, "default"))["items"] == []
    await advance(ctrl, clock, 600)
    (job,) = await jobs_of(client, 1)
    assert (
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        == "2027-01-15T10:00:00+01:00"
    )
