"""KEP-6277 Beta criterion: "Decide and implement the scale-to-zero lifecycle for PodGroup-backed
ResourceClaims: whether and how to release device allocations while preserving safe scale-up,
including the impact on PodGroup identity; test the chosen behavior".

gangplane makes it selectable (``StatefulSetWorkloadClaimRelease``): off — the KEP's Alpha
behaviour — the claim stays allocated and reserved for the retained PodGroup (see also
test_kep6277_pod_group_deletion_cascades_to_claim.py) and the scale-up reuses that allocation; on, it is released at replicas 0: no
reservation, no allocation, the delete-protection finalizer gone, while the claim object and the
PodGroup keep their names and UIDs. Scaling back up allocates afresh for the same PodGroup, and
every pod shares that one claim (no second allocation, no pod-scoped claim).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.client.interface import PODS, RESOURCECLAIMS, STATEFULSETS
from featuregates import STATEFULSET_WORKLOAD_CLAIM_RELEASE, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list
from tests.integration.dra_support import (
    NS,
    create_story4,
    group_reservation,
    only_pod_group,
    start_dra_stack,
    wait_claim,
    wait_claims,
    wait_running,
)
from tests.integration.kep6277_support import CASCADE_TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.fixture
async def released() -> AsyncIterator[ControlPlane]:
    plane = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate().with_overrides({STATEFULSET_WORKLOAD_CLAIM_RELEASE: True}),
            bookmark_interval=0.5,
            client_bookmark_interval=0.2,
        )
    )
    try:
        yield plane
    finally:
        await plane.stop()


def reserved(c: dict) -> bool:
    return bool((c.get("status") or {}).get("reservedFor"))


async def test_scale_to_zero_releases_the_claim_and_scale_up_allocates_for_the_same_pod_group(
    released: ControlPlane,
) -> None:
    cp = released
    client = cp.client("test")
    await start_dra_stack(cp)
    await create_story4(client, replicas=3)
    await wait_running(client, "shard-server", 3)
    (claim,) = await wait_claims(client, lambda cs: len(cs) == 1 and reserved(cs[0]))
    pg = await only_pod_group(client)
    name = claim["metadata"]["name"]

    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 0}}, NS)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    after = await wait_claim(
        client, name, lambda c: bool(c) and not reserved(c) and "allocation" not in (c.get("status") or {})
    )
    assert after is not None
    assert after["metadata"]["uid"] == claim["metadata"]["uid"]  # the claim object stays
    assert "resource.kubernetes.io/delete-protection" not in (after["metadata"].get("finalizers") or [])
    same = await only_pod_group(client)
    assert same["metadata"]["uid"] == pg["metadata"]["uid"]  # PodGroup identity unchanged

    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 3}}, NS)
    pods = await wait_running(client, "shard-server", 3)
    again = await wait_claim(client, name, lambda c: bool(c) and reserved(c) and "allocation" in c["status"])
    assert again is not None and again["metadata"]["uid"] == claim["metadata"]["uid"]
    assert again["status"]["reservedFor"] == group_reservation(pg)
    assert [c["metadata"]["name"] for c in (await client.list(RESOURCECLAIMS, NS))["items"]] == [name]
    assert {p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] for p in pods} == {name}


async def test_keep_policy_scale_up_reuses_the_retained_allocation(cp: ControlPlane, client) -> None:  # noqa: ANN001
    """The gate off (the KEP's Alpha behaviour): the allocation survives replicas 0, and the
    scale-up uses it as it is — same claim, same devices, one reservation for the same PodGroup."""
    await start_dra_stack(cp)
    await create_story4(client, replicas=3)
    await wait_running(client, "shard-server", 3)
    (claim,) = await wait_claims(client, lambda cs: len(cs) == 1 and reserved(cs[0]))
    pg = await only_pod_group(client)
    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 0}}, NS)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 3}}, NS)
    pods = await wait_running(client, "shard-server", 3)
    after = await client.get(RESOURCECLAIMS, claim["metadata"]["name"], NS)
    assert after["metadata"]["uid"] == claim["metadata"]["uid"]
    assert after["status"]["allocation"] == claim["status"]["allocation"]
    assert after["status"]["reservedFor"] == group_reservation(pg)
    assert (await only_pod_group(client))["metadata"]["uid"] == pg["metadata"]["uid"]
    assert {p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] for p in pods} == {
        claim["metadata"]["name"]
    }
