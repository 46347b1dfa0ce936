"""KEP-6277 "Feature Enablement and Rollback" and the Test Plan's "controller restart between Workload
creation and PodGroup creation", as control-plane restarts: every component of one ControlPlane is
stopped and started again (with other controller-manager gates) while the API server and its store
keep running. tests/e2e/test_restart_feature_enablement.py runs the same scenarios against real
``gangplane serve --data-dir`` processes restarted over the same data.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.client.leaderelection import LeaderElectionConfig
from controllers.fleet import parse_fleet
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.integration.enablement_support import (
    FLEET,
    InProcessCluster,
    gate_toggled_off_then_on,
    restart_between_workload_and_pod_group,
)

pytestmark = pytest.mark.anyio
#: short leases, so a crashed control plane's successor waits seconds, not kube's 15 s
SHORT_LEASES = LeaderElectionConfig(lease_duration=2.0, renew_deadline=1.5, retry_period=0.5)


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    cp = ControlPlane(
        ControlPlaneOptions(bookmark_interval=0.5, client_bookmark_interval=0.2, leader_election=SHORT_LEASES)
    )
    try:
        yield cp
    finally:
        await cp.stop()


async def test_gate_toggled_off_then_on_across_restarts(plane: ControlPlane) -> None:
    cluster = InProcessCluster(plane, parse_fleet(FLEET))
    await cluster.start()
    await gate_toggled_off_then_on(cluster)


async def test_restart_between_workload_and_pod_group_creation(plane: ControlPlane) -> None:
    cluster = InProcessCluster(plane, parse_fleet(FLEET), controllers="*,-statefulset")
    await cluster.start()
    await restart_between_workload_and_pod_group(cluster)
