"""A CronJob created with real kubectl fires when the test clock advances (in-process server over HTTP).

The control plane, its HTTP listener and the CronJob controller share a :class:`FakeClock`; the
test steps it past the schedule and kubectl then sees the Job the controller created.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from apiserver.client.interface import JOBS, Client
from apiserver.meta import FakeClock
from controllers.cronjob import CronJobController
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from gangplane.kubeconfig import write_kubeconfig
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio

KUBECTL = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
START = 1_800_000_000.0  # on a 5-minute boundary


class Kubectl:
    def __init__(self, kubeconfig: Path, home: Path) -> None:
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)}

    async def __call__(self, *args: str) -> str:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, *args, env=self.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed:\n{out.decode()}"
        return out.decode()


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[tuple[Kubectl, Client, CronJobController, FakeClock]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    clock = FakeClock(START)
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(), clock=clock, bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    try:
        url = await cp.serve_http("127.0.0.1", 0)
        kubeconfig = tmp_path / "kubeconfig"
        write_kubeconfig(kubeconfig, url)
        (tmp_path / "home").mkdir()
        cp.register(
            "cronjob-controller", lambda c: CronJobController(c.client("cronjob-controller"), clock=c.clock)
        )
        ctrl = await cp.start_component("cronjob-controller")
        assert isinstance(ctrl, CronJobController)
        yield Kubectl(kubeconfig, tmp_path / "home"), cp.client("test"), ctrl, clock
    finally:
        await cp.stop()


async def test_cronjob_created_with_kubectl_fires_when_the_clock_advances(
    env: tuple[Kubectl, Client, CronJobController, FakeClock],
) -> None:
    kubectl, client, ctrl, clock = env
    out = await kubectl("create", "cronjob", "hello", "--image=busybox", "--schedule=*/5 * * * *")
    assert out == "cronjob.batch/hello created\n"
    await ctrl.wait_idle()
    assert json.loads(await kubectl("get", "jobs", "-o", "json"))["items"] == []
    clock.step(300)
    ctrl.timers.poke()
    await wait_for_list(client, JOBS, "default", lambda items: len(items) == 1)
    jobs = json.loads(await kubectl("get", "jobs", "-o", "json"))["items"]
    assert [j["metadata"]["name"] for j in jobs] == [f"hello-{int((START + 300) // 60)}"]
    cj = json.loads(await kubectl("get", "cronjob", "hello", "-o", "json"))
    assert cj["status"]["lastScheduleTime"] == "2027-01-15T08:05:00Z"
    events = await kubectl("get", "events", "--field-selector", "involvedObject.name=hello")
    assert f"Created job hello-{int((START + 300) // 60)}" in events
