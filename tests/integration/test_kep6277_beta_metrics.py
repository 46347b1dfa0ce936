"""KEP-6277 Beta criterion: "Metrics for Workload/PodGroup creation and update latency" and the
PRR's proposed Beta metrics — gangplane's ``StatefulSetWorkloadBetaMetrics``:
``statefulset_workload_creation_duration_seconds`` (eligible → Workload and PodGroup exist) and
the ``statefulset_workloads{policy}`` gauge of StatefulSet-owned Workloads by resolved policy.
Read from the control plane's /metrics registry, as a scrape would."""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET
from featuregates import STATEFULSET_WORKLOAD_BETA_METRICS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.kep6277_beta_support import plane
from tests.integration.kep6277_support import BASIC, GANG, NS, start_statefulset_controller, sts_manifest

pytestmark = pytest.mark.anyio

DURATION = "statefulset_workload_creation_duration_seconds"


def sample(cp: ControlPlane, name: str, **labels: str) -> float | None:
    return cp.metrics_registry.get_sample_value(name, labels)


async def wait_count(cp: ControlPlane, gang: float, basic: float) -> None:
    client = cp.client("metrics-test")

    def ok(_items: list) -> bool:
        return (
            sample(cp, "statefulset_workloads", policy="gang") == gang
            and sample(cp, "statefulset_workloads", policy="basic") == basic
        )

    await wait_for_list(client, WORKLOADS, NS, ok, 10)


async def test_creation_latency_and_workloads_by_policy() -> None:
    async with plane({STATEFULSET_WORKLOAD_BETA_METRICS: True}, scheduler=False) as cp:
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("a", 3, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("b", 2, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("c", 1, BASIC, policy="OrderedReady"), NS)
        await client.create(STATEFULSETS, sts_manifest("plain", 1), NS)  # no spec.scheduling
        await wait_for_list(client, PODGROUPS, NS, lambda items: len(items) == 3, 10)
        await wait_count(cp, 2, 1)
        count = sample(cp, f"{DURATION}_count")
        total = sample(cp, f"{DURATION}_sum")
        assert count == 3 and total is not None and 0 <= total < 30
        # a restart recounts from the informer and observes nothing new for existing objects
        await cp.stop_component(STATEFULSET)
        await start_statefulset_controller(cp)
        await wait_count(cp, 2, 1)
        assert sample(cp, f"{DURATION}_count") == 3
        # a deleted Workload leaves the gauge (its set has pods: the controller creates no other)
        (wl,) = [
            w
            for w in (await client.list(WORKLOADS, NS))["items"]
            if w["spec"]["controllerRef"]["name"] == "a"
        ]
        await client.delete(WORKLOADS, wl["metadata"]["name"], NS)
        await wait_count(cp, 1, 1)


async def test_gate_off_registers_no_beta_metric() -> None:
    async with plane({}, scheduler=False) as cp:
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("a", 3, GANG), NS)
        await wait_for_list(client, PODGROUPS, NS, lambda items: len(items) == 1, 10)
        assert sample(cp, f"{DURATION}_count") is None
        assert sample(cp, "statefulset_workloads", policy="gang") is None
