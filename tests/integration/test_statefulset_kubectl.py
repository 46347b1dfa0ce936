"""``kubectl rollout status``, ``scale``, ``rollout restart``, ``rollout undo``, ``rollout history`` and
``delete --cascade=foreground`` against an in-process control plane served over HTTP, with the
StatefulSet controller, the garbage collector and a fake kubelet (:class:`PodReadier`)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from apiserver.client.interface import PODS, STATEFULSETS
from controllers.manager import GARBAGE_COLLECTOR, STATEFULSET, register_controllers
from controllers.testing import PodReadier, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from gangplane.kubeconfig import write_kubeconfig
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio

KUBECTL = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")


class Kubectl:
    def __init__(self, kubeconfig: Path, home: Path) -> None:
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(home)}

    async def __call__(self, *args: str, ok: bool = True, timeout: float = 60) -> str:
        assert KUBECTL is not None
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, *args, env=self.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        text = out.decode()
        if ok:
            assert proc.returncode == 0, f"kubectl {' '.join(args)} failed:\n{text}"
        return text


@pytest.fixture
async def kubectl(cp: ControlPlane, client: Any, tmp_path: Path) -> AsyncIterator[Kubectl]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    url = await cp.serve_http("127.0.0.1", 0)
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, url)
    (tmp_path / "home").mkdir()
    register_controllers(cp, "statefulset,garbagecollector")
    await cp.start_component(STATEFULSET)
    await cp.start_component(GARBAGE_COLLECTOR)
    async with PodReadier(client):
        yield Kubectl(kubeconfig, tmp_path / "home")


def image_of(sts: dict[str, Any]) -> str:
    return str(sts["spec"]["template"]["spec"]["containers"][0]["image"])


async def test_rollout_scale_restart_undo_delete(client: Any, kubectl: Kubectl) -> None:
    await client.create(STATEFULSETS, statefulset("web", 3, image="nginx:1.25"), "default")
    out = await kubectl("rollout", "status", "sts/web", "--timeout=60s")
    # apps/v1 defaults rollingUpdate.partition to 0, so kubectl reports a partitioned rollout (as on
    # kube); before that it prints a line for each change it watched while pods were still getting
    # ready, which depends on when it started (as on kube)
    *waiting, done = out.splitlines()
    assert done == "partitioned roll out complete: 3 new pods have been updated..."
    assert all(re.fullmatch(r"Waiting for [1-3] pods to be ready\.\.\.", line) for line in waiting), out

    out = await kubectl("scale", "sts", "web", "--replicas=4")
    assert "statefulset.apps/web scaled" in out
    await kubectl("rollout", "status", "sts/web", "--timeout=60s")
    assert len((await client.list(PODS, "default", label_selector="app=web"))["items"]) == 4

    first = (await client.get(STATEFULSETS, "web", "default"))["status"]["currentRevision"]
    out = await kubectl("rollout", "restart", "sts/web")
    assert "statefulset.apps/web restarted" in out
    out = await kubectl("rollout", "status", "sts/web", "--timeout=60s")
    assert "partitioned roll out complete: 4 new pods have been updated" in out
    restarted = await client.get(STATEFULSETS, "web", "default")
    assert restarted["status"]["currentRevision"] != first
    assert "kubectl.kubernetes.io/restartedAt" in restarted["spec"]["template"]["metadata"]["annotations"]

    history = await kubectl("rollout", "history", "sts/web")
    assert "REVISION" in history and "1" in history and "2" in history

    out = await kubectl("rollout", "undo", "sts/web")
    assert "statefulset.apps/web rolled back" in out
    await kubectl("rollout", "status", "sts/web", "--timeout=60s")
    undone = await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: (o or {}).get("status", {}).get("currentRevision") == first,
    )
    assert undone is not None
    assert "annotations" not in undone["spec"]["template"]["metadata"] or (
        "kubectl.kubernetes.io/restartedAt" not in undone["spec"]["template"]["metadata"]["annotations"]
    )
    assert image_of(undone) == "nginx:1.25"

    out = await kubectl("delete", "sts", "web", "--cascade=foreground", "--timeout=60s")
    assert 'statefulset.apps "web" deleted' in out
    await wait_for_list(client, PODS, "default", lambda items: not items, label_selector="app=web")
