"""Every component in its own process against ``gangplane serve --components apiserver`` over HTTPS:
``gangplane scheduler``, ``gangplane controller-manager`` and ``gangplane node-agent``, each with
the kubeconfig the server wrote, take a gang StatefulSet (KEP-6277 ``spec.scheduling``) to all pods
Running; a component process killed mid-workflow is replaced by a new one that takes its Lease
over once it expires and carries the work on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from apiserver.api.types import Obj
from apiserver.client.http import HTTPClient
from apiserver.client.interface import LEASES, PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from apiserver.client.restconfig import load_kubeconfig
from apiserver.client.until import collection_until, object_until
from tests.e2e.conftest import Server, _start_server, _stop

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SHORT_LEASES = (
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1500ms",
    "--leader-elect-retry-period=500ms",
)


@dataclass
class ComponentProcess:
    name: str
    proc: subprocess.Popen[str]
    log: Path


def start_component(name: str, server: Server, workdir: Path, *extra: str) -> ComponentProcess:
    """``gangplane <name> --kubeconfig …``, returned once it reports running (its log in workdir)."""
    log = workdir / f"{name}-{len(list(workdir.glob(f'{name}-*.log')))}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gangplane.cli",
                name,
                "--kubeconfig",
                str(server.kubeconfig),
                *SHORT_LEASES,
                *extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=workdir,
        )
    ready = re.compile(rf"^gangplane: {name} running against https://")
    # the process prints its start line once its Lease attempt is made and its components run
    while proc.poll() is None:
        if any(ready.match(line) for line in log.read_text().splitlines()):
            return ComponentProcess(name, proc, log)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(0.05)
    raise AssertionError(f"gangplane {name} exited ({proc.returncode}):\n{log.read_text()}")


def stop_component(c: ComponentProcess, sig: int = signal.SIGTERM) -> int:
    if c.proc.poll() is None:
        os.kill(c.proc.pid, sig)
    return c.proc.wait(30)


@pytest.fixture
def apiserver_only(tmp_path: Path) -> Iterator[Server]:
    (tmp_path / "apiserver").mkdir()
    s = _start_server(tmp_path / "apiserver", ["--components", "apiserver"])
    yield s
    _stop(s)


@pytest.fixture
async def client(apiserver_only: Server) -> AsyncIterator[HTTPClient]:
    c = HTTPClient.from_config(load_kubeconfig(apiserver_only.kubeconfig), "e2e")
    yield c
    await c.aclose()


@pytest.fixture
def processes() -> Iterator[list[ComponentProcess]]:
    started: list[ComponentProcess] = []
    yield started
    for c in started:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait(30)


def gang_statefulset(name: str, replicas: int) -> Obj:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "db",
                            "image": "cockroachdb/cockroach:v23.2",
                            "resources": {"requests": {"cpu": "2"}},
                        }
                    ]
                },
            },
        },
    }


async def all_running(client: HTTPClient, app: str, count: int, timeout: float = 90) -> list[Obj]:
    def done(pods: list[Obj]) -> bool:
        return len(pods) == count and all(
            p["spec"].get("nodeName") and (p.get("status") or {}).get("phase") == "Running" for p in pods
        )

    return await asyncio.wait_for(
        collection_until(client, PODS, done, "default", label_selector=f"app={app}"), timeout
    )


async def holder(client: HTTPClient, lease: str) -> str:
    return (await client.get(LEASES, lease, "kube-system"))["spec"].get("holderIdentity", "")


async def test_gang_statefulset_runs_with_every_component_in_its_own_process(
    apiserver_only: Server, client: HTTPClient, processes: list[ComponentProcess], tmp_path: Path
) -> None:
    """KEP-6277 Story 1 with kube's process layout: the API server runs nothing but itself."""
    assert (await client.list(PODS, ""))["items"] == []
    for name in ("node-agent", "controller-manager", "scheduler"):
        processes.append(start_component(name, apiserver_only, tmp_path))
    await client.create(STATEFULSETS, gang_statefulset("db", 5), "default")
    pods = await all_running(client, "db", 5)
    assert sorted(p["metadata"]["name"] for p in pods) == [f"db-{i}" for i in range(5)]
    workloads = (await client.list(WORKLOADS, "default"))["items"]
    assert [w["spec"]["controllerRef"]["name"] for w in workloads] == ["db"]
    groups = (await client.list(PODGROUPS, "default"))["items"]
    assert len(groups) == 1 and groups[0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 5
    conditions = {c["type"]: c["status"] for c in groups[0]["status"]["conditions"]}
    assert conditions.get("PodGroupInitiallyScheduled") == "True"
    # each Lease is held by its own process (the API server process competes for none)
    holders = {
        lease: await holder(client, lease)
        for lease in ("kube-scheduler", "kube-controller-manager", "gangplane-node-agent")
    }
    assert all(holders.values()) and len(set(holders.values())) == 3
    for c in processes:
        assert stop_component(c) == 0
        assert f"gangplane: {c.name} shutting down" in c.log.read_text()
    # a graceful stop releases the Lease (client-go's ReleaseOnCancel)
    assert await holder(client, "kube-scheduler") == ""


async def test_a_component_process_killed_mid_workflow_is_replaced(
    apiserver_only: Server, client: HTTPClient, processes: list[ComponentProcess], tmp_path: Path
) -> None:
    for name in ("node-agent", "controller-manager", "scheduler"):
        processes.append(start_component(name, apiserver_only, tmp_path))
    await client.create(STATEFULSETS, gang_statefulset("first", 3), "default")
    await all_running(client, "first", 3)
    old_scheduler = await holder(client, "kube-scheduler")
    scheduler = next(c for c in processes if c.name == "scheduler")
    stop_component(scheduler, signal.SIGKILL)
    # mid-workflow: the second gang's pods are created while no scheduler runs
    await client.create(STATEFULSETS, gang_statefulset("second", 3), "default")
    pending = await asyncio.wait_for(
        collection_until(client, PODS, lambda ps: len(ps) == 3, "default", label_selector="app=second"), 60
    )
    assert all(not p["spec"].get("nodeName") for p in pending)
    processes.append(start_component("scheduler", apiserver_only, tmp_path))
    await all_running(client, "second", 3)
    # the new process took the dead one's Lease over (after it expired, never while it was fresh)
    lease = await object_until(
        client,
        LEASES,
        "kube-scheduler",
        lambda o: bool(o and o["spec"].get("holderIdentity") != old_scheduler),
        "kube-system",
    )
    assert lease is not None and lease["spec"]["leaseTransitions"] >= 1
    assert len((await client.list(PODS, "default", label_selector="app=first"))["items"]) == 3


async def test_a_scheduler_process_runs_the_profiles_of_its_scheduler_config(
    apiserver_only: Server, client: HTTPClient, processes: list[ComponentProcess], tmp_path: Path
) -> None:
    """``gangplane scheduler --scheduler-config FILE``: kube-scheduler's ``--config`` in its own process.
    A pod naming the file's second profile is bound by it, and its scheduling record (the server is
    gangplane's, so it serves them) names that profile."""
    from scheduler.records import SCHEDULINGRECORDS

    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "- schedulerName: bin-packer\n"
        "  pluginConfig:\n"
        "  - name: NodeResourcesFit\n"
        "    args: {scoringStrategy: {type: MostAllocated}}\n"
    )
    processes.append(start_component("node-agent", apiserver_only, tmp_path))
    processes.append(
        start_component(
            "scheduler", apiserver_only, tmp_path, "--scheduler-config", str(tmp_path / "sched.yaml")
        )
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "packed"},
        "spec": {"schedulerName": "bin-packer", "containers": [{"name": "c", "image": "pause"}]},
    }
    await client.create(PODS, pod, "default")
    bound = await asyncio.wait_for(
        object_until(client, PODS, "packed", lambda p: bool(p and p["spec"].get("nodeName")), "default"), 60
    )
    assert bound is not None
    record = await asyncio.wait_for(
        object_until(
            client,
            SCHEDULINGRECORDS,
            "pod.packed",
            lambda r: bool(r and any(a.get("result") == "Scheduled" for a in r.get("attempts") or [])),
            "default",
        ),
        60,
    )
    assert record is not None
    assert {a["profile"] for a in record["attempts"]} == {"bin-packer"}
    for c in processes:
        assert stop_component(c) == 0
