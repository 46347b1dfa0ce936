"""KEP-6277 Beta criterion: "Metrics for Workload/PodGroup creation and update latency" and the
PRR's proposed Beta metrics — gangplane's ``StatefulSetWorkloadBetaMetrics``:
``statefulset_workload_creation_duration_seconds`` (eligible → Workload and PodGroup exist),
``statefulset_workload_update_duration_seconds`` (spec change → minCount on both objects) and
the ``statefulset_workloads{policy}`` gauge of StatefulSet-owned Workloads by resolved policy.
Read from the control plane's /metrics registry, as a scrape would."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET
from featuregates import STATEFULSET_WORKLOAD_BETA_METRICS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.kep6277_beta_support import plane
from tests.integration.kep6277_support import BASIC, GANG, NS, start_statefulset_controller, sts_manifest

pytestmark = pytest.mark.anyio

DURATION = "statefulset_workload_creation_duration_seconds"
UPDATE = "statefulset_workload_update_duration_seconds"


def sample(cp: ControlPlane, name: str, **labels: str) -> float | None:
    return cp.metrics_registry.get_sample_value(name, labels)


async def wait_count(cp: ControlPlane, gang: float, basic: float, timeout: float = 10) -> None:
    """Until the gauge reads ``gang``/``basic``: re-checked on every event of the controller's own
    Workload informer, whose earlier-registered handler is what updates the gauge."""
    informer = cp.components[STATEFULSET].scheduling_hook.workloads
    changed = asyncio.Event()
    informer.add_event_handler(
        lambda _o: changed.set(), lambda _o, _n: changed.set(), lambda _o: changed.set()
    )

    def ok() -> bool:
        return (
            sample(cp, "statefulset_workloads", policy="gang") == gang
            and sample(cp, "statefulset_workloads", policy="basic") == basic
        )

    async def until() -> None:
        while not ok():
            changed.clear()
            await changed.wait()

    await asyncio.wait_for(until(), timeout)


async def test_creation_latency_and_workloads_by_policy() -> None:
    async with plane({STATEFULSET_WORKLOAD_BETA_METRICS: True}, scheduler=False) as cp:
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("a", 3, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("b", 2, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("c", 1, BASIC, policy="OrderedReady"), NS)
        await client.create(STATEFULSETS, sts_manifest("plain", 1), NS)  # no spec.scheduling
        # each set's pods are created after its Workload and PodGroup (and so after the observation)
        await wait_for_list(client, PODS, NS, lambda items: len(items) == 3 + 2 + 1 + 1, 10)
        await wait_count(cp, 2, 1)
        count = sample(cp, f"{DURATION}_count")
        total = sample(cp, f"{DURATION}_sum")
        assert count == 3 and total is not None and 0 <= total < 30
        assert sample(cp, f"{UPDATE}_count") == 0
        # a scale is an update: Workload template, then PodGroup minCount, before the new pod
        await client.patch(STATEFULSETS, "a", {"spec": {"replicas": 4}}, NS)
        await wait_for_list(client, PODS, NS, lambda items: len(items) == 8, 10)
        assert sample(cp, f"{UPDATE}_count") == 1
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
        assert sample(cp, f"{UPDATE}_count") is None


async def test_a_retried_pod_group_create_is_observed_once() -> None:
    """The PodGroup create fails once: the next sync creates it, and the latency (covering the
    retry) is observed once; the Workload was created once."""
    from apiserver.client.interface import PODGROUPS as PG
    from featuregates import FeatureGate
    from gangplane.controlplane import ControlPlaneOptions
    from tests.integration.kep6277_support import FaultyClient

    cp = ControlPlane(
        ControlPlaneOptions(gates=FeatureGate().with_overrides({STATEFULSET_WORKLOAD_BETA_METRICS: True}))
    )
    try:
        fc = FaultyClient(cp.client(STATEFULSET))
        fc.fail("create", PG)
        await start_statefulset_controller(cp, fc)
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("a", 3, GANG), NS)
        await wait_for_list(client, PODS, NS, lambda items: len(items) == 3, 10)
        await wait_count(cp, 1, 0)
        assert fc.failures == 1
        assert sample(cp, f"{DURATION}_count") == 1
        assert len((await client.list(WORKLOADS, NS))["items"]) == 1
    finally:
        await cp.stop()
