"""KEP-6277 "Feature Enablement and Rollback" from outside: real ``gangplane serve --data-dir``
processes, stopped (SIGTERM) and started again on the same data dir with other
``--controller-manager-feature-gates``, or killed with SIGKILL and started again; every check goes
over HTTP. The scenarios are the ones tests/integration/test_kep6277_feature_enablement_restart.py
runs in-process (tests/integration/enablement_support.py).

Leader election is on, as ``gangplane serve`` defaults, with short leases: after a graceful stop
the released Leases are taken at once; after ``kill -9`` the restarted process waits the dead
holder's lease out (2 s here, kube's 15 s by default) before its controllers act.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import Server
from tests.e2e.data_dir_support import kill9, start, stop
from tests.e2e.http_client import HTTPClient
from tests.integration.enablement_support import (
    FLEET,
    gate_toggled_off_then_on,
    restart_between_workload_and_pod_group,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
SHORT_LEASES = (
    "--leader-elect-lease-duration=2s",
    "--leader-elect-renew-deadline=1500ms",
    "--leader-elect-retry-period=500ms",
)


class ProcessCluster:
    """``gangplane serve --data-dir`` restarted as an operator (or a crash) would, one run per dir."""

    def __init__(self, tmp: Path, controllers: str = "*") -> None:
        self.tmp = tmp
        self.data = tmp / "data"
        self.fleet = tmp / "fleet.yaml"
        self.fleet.write_text(yaml.safe_dump(FLEET))
        self.controllers = controllers
        self.gates: Mapping[str, bool] | None = None
        self.runs = 0
        self.server: Server | None = None
        self.client = HTTPClient("")

    def _flags(self) -> list[str]:
        flags = ["--cluster", str(self.fleet), "--controllers", self.controllers, *SHORT_LEASES]
        if self.gates:
            flags += [
                "--controller-manager-feature-gates",
                ",".join(f"{k}={str(v).lower()}" for k, v in self.gates.items()),
            ]
        return flags

    async def start(self) -> None:
        self.runs += 1
        self.server = await asyncio.to_thread(start, self.tmp / f"run{self.runs}", self.data, *self._flags())
        self.client.url = self.server.url

    async def restart(
        self, controller_manager_gates: Mapping[str, bool] | None = None, controllers: str = "*"
    ) -> None:
        assert self.server is not None
        assert await asyncio.to_thread(stop, self.server) == 0
        self.gates, self.controllers = controller_manager_gates, controllers
        await self.start()

    async def crash(self) -> None:
        assert self.server is not None
        await asyncio.to_thread(kill9, self.server)
        await self.start()

    async def close(self) -> None:
        if self.server is not None and self.server.proc.poll() is None:
            await asyncio.to_thread(stop, self.server)
        await self.client.aclose()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[ProcessCluster]:
    c = ProcessCluster(tmp_path)
    try:
        yield c
    finally:
        await c.close()


@pytest.mark.timeout(300)
async def test_gate_toggled_off_then_on_across_process_restarts(cluster: ProcessCluster) -> None:
    await cluster.start()
    await gate_toggled_off_then_on(cluster)
    assert cluster.runs == 3


@pytest.mark.timeout(300)
async def test_kill_9_between_workload_and_pod_group_creation(cluster: ProcessCluster) -> None:
    cluster.controllers = "*,-statefulset"
    await cluster.start()
    await restart_between_workload_and_pod_group(cluster)
    assert cluster.runs == 3
