"""TTL-after-finished controller: a finished Job is deleted ``ttlSecondsAfterFinished`` after it finished."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import JOBS, Client
from apiserver.meta import FakeClock, rfc3339
from controllers.ttlafterfinished import TTLAfterFinishedController
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio

START = 1_800_000_000.0


@pytest.fixture
async def env() -> AsyncIterator[tuple[Client, TTLAfterFinishedController, FakeClock]]:
    clock = FakeClock(START)
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    cp.register(
        "ttl", lambda c: TTLAfterFinishedController(c.client("ttl-after-finished-controller"), clock=c.clock)
    )
    ctrl = await cp.start_component("ttl")
    assert isinstance(ctrl, TTLAfterFinishedController)
    try:
        yield cp.client("test"), ctrl, clock
    finally:
        await cp.stop()


def job(ttl: int | None) -> Obj:
    spec: Obj = {
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "done"}, "spec": spec}


async def complete(client: Client, at: float) -> None:
    now = rfc3339(at)
    cur = await client.get(JOBS, "done", "default")
    cur["status"] = {
        "startTime": now,
        "completionTime": now,
        "succeeded": 1,
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
            {"type": "Complete", "status": "True", "lastTransitionTime": now},
        ],
    }
    await client.update_status(JOBS, cur, "default")


async def test_finished_job_is_deleted_once_its_ttl_expires(
    env: tuple[Client, TTLAfterFinishedController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(JOBS, job(100), "default")
    await complete(client, START)
    await ctrl.wait_idle()
    clock.step(99)
    ctrl.timers.poke()
    await ctrl.wait_idle()
    assert await client.get(JOBS, "done", "default")
    clock.step(1)
    ctrl.timers.poke()
    # deleted in the foreground (the garbage collector, not running here, then removes the pods first)
    gone = await wait_for_object(
        client, JOBS, "done", "default", lambda o: o is None or bool(o["metadata"].get("deletionTimestamp"))
    )
    assert gone is None or "foregroundDeletion" in gone["metadata"]["finalizers"]


async def test_job_without_ttl_is_kept(env: tuple[Client, TTLAfterFinishedController, FakeClock]) -> None:
    client, ctrl, clock = env
    await client.create(JOBS, job(None), "default")
    await complete(client, START)
    clock.step(10_000)
    ctrl.timers.poke()
    await ctrl.wait_idle()
    assert await client.get(JOBS, "done", "default")


async def test_ttl_raised_before_expiry_is_honoured(
    env: tuple[Client, TTLAfterFinishedController, FakeClock],
) -> None:
    client, ctrl, clock = env
    await client.create(JOBS, job(10), "default")
    await complete(client, START)
    await client.patch(JOBS, "done", {"spec": {"ttlSecondsAfterFinished": 1000}}, "default")
    await ctrl.wait_idle()
    clock.step(20)
    ctrl.timers.poke()
    await ctrl.wait_idle()
    assert await client.get(JOBS, "done", "default")
