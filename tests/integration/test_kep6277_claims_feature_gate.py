"""KEP-6277 Upgrade/Downgrade and Notes 5 for ``DRAWorkloadResourceClaims``: off in the API server,
``spec.scheduling.resourceClaims`` is cleared before it is stored (so is the PodGroup's field) and
every pod claim is pod-scoped; off in the claim controller or in the scheduler, claims are per pod
(one generated per pod, or one claim reserved pod by pod) while the rest keeps working; off in the
kubelet (node agent), a claim reserved only for the pod's PodGroup does not let the pod start.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.client.interface import PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, STATEFULSETS
from controllers.testing import observed
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list
from tests.integration.dra_support import (
    GPU_CLASS,
    NS,
    claim_owner,
    claim_template,
    group_reservation,
    only_pod_group,
    shared_sts,
    start_dra_stack,
    wait_claims,
    wait_running,
)

pytestmark = pytest.mark.anyio


async def _plane(component: str) -> AsyncIterator[ControlPlane]:
    plane = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(),
            bookmark_interval=0.5,
            client_bookmark_interval=0.2,
            component_gates={component: {DRA_WORKLOAD_RESOURCE_CLAIMS: False}},
        )
    )
    try:
        yield plane
    finally:
        await plane.stop()


@pytest.fixture
async def api_off() -> AsyncIterator[ControlPlane]:
    async for p in _plane("apiserver"):
        yield p


@pytest.fixture
async def controller_off() -> AsyncIterator[ControlPlane]:
    async for p in _plane("resource-claim-controller"):
        yield p


@pytest.fixture
async def scheduler_off() -> AsyncIterator[ControlPlane]:
    async for p in _plane("scheduler"):
        yield p


async def _story(cp: ControlPlane, replicas: int = 3) -> None:
    client = cp.client("test")
    await start_dra_stack(cp)
    await client.create(RESOURCECLAIMTEMPLATES, claim_template("one-gpu", GPU_CLASS), NS)
    await client.create(STATEFULSETS, shared_sts("db", replicas, template="one-gpu"), NS)
    await wait_running(client, "db", replicas)


def allocated(c: dict) -> bool:
    return bool((c.get("status") or {}).get("reservedFor"))


async def test_api_server_gate_off_drops_the_field_and_claims_are_per_pod(api_off: ControlPlane) -> None:
    client = api_off.client("test")
    await _story(api_off)
    sts = await client.get(STATEFULSETS, "db", NS)
    assert "resourceClaims" not in sts["spec"]["scheduling"]
    pg = await only_pod_group(client)
    assert "resourceClaims" not in pg["spec"]
    claims = await wait_claims(client, lambda cs: len(cs) == 3 and all(allocated(c) for c in cs))
    assert sorted(claim_owner(c)[1] for c in claims) == ["db-0", "db-1", "db-2"]


async def test_controller_gate_off_generates_a_claim_per_pod(controller_off: ControlPlane) -> None:
    client = controller_off.client("test")
    await _story(controller_off)
    pg = await only_pod_group(client)
    assert pg["spec"]["resourceClaims"] == [{"name": "shared", "resourceClaimTemplateName": "one-gpu"}]
    assert "resourceClaimStatuses" not in pg.get("status", {})
    claims = await wait_claims(client, lambda cs: len(cs) == 3 and all(allocated(c) for c in cs))
    for c in claims:
        kind, owner = claim_owner(c)
        assert kind == "Pod"
        assert [r["name"] for r in c["status"]["reservedFor"]] == [owner]


async def test_scheduler_gate_off_reserves_the_group_claim_pod_by_pod(scheduler_off: ControlPlane) -> None:
    client = scheduler_off.client("test")
    await _story(scheduler_off)
    pg = await only_pod_group(client)
    (claim,) = await wait_claims(
        client, lambda cs: len(cs) == 1 and len((cs[0].get("status") or {}).get("reservedFor") or []) == 3
    )
    assert claim_owner(claim) == ("PodGroup", pg["metadata"]["name"])
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["db-0", "db-1", "db-2"]
    assert claim["status"]["reservedFor"] != group_reservation(pg)
    assert len((await client.list(RESOURCECLAIMS, NS))["items"]) == 1
    assert (await client.get(PODGROUPS, pg["metadata"]["name"], NS))["status"]["resourceClaimStatuses"]


@pytest.fixture
async def kubelet_off() -> AsyncIterator[ControlPlane]:
    async for p in _plane("node-agent"):
        yield p


async def test_kubelet_gate_off_does_not_start_pods_on_a_pod_group_reservation(
    kubelet_off: ControlPlane,
) -> None:
    client = kubelet_off.client("test")
    await start_dra_stack(kubelet_off)
    await client.create(RESOURCECLAIMTEMPLATES, claim_template("one-gpu", GPU_CLASS), NS)
    await client.create(STATEFULSETS, shared_sts("db", 2, template="one-gpu"), NS)
    pods = await wait_for_list(
        client, PODS, NS, lambda items: len(items) == 2 and all(p["spec"].get("nodeName") for p in items)
    )
    pg = await only_pod_group(client)
    await wait_claims(
        client,
        lambda cs: len(cs) == 1 and (cs[0].get("status") or {}).get("reservedFor") == group_reservation(pg),
    )
    agent = kubelet_off.components["node-agent"]
    for p in pods:
        await observed(
            agent.pod_informer,
            f"{NS}/{p['metadata']['name']}",
            lambda o: o is not None and bool(o["spec"].get("nodeName")),
        )
    await agent.wait_idle()
    assert [p["status"].get("phase") for p in (await client.list(PODS, NS))["items"]] == [
        "Pending",
        "Pending",
    ]
