"""KEP-6277 Test Plan (integration): "PodGroup deletion cascades to generated ResourceClaim deletion";
(e2e) "Scale to zero with a shared ResourceClaim: verify that the claim remains allocated and
reserved for the retained PodGroup after all pods are gone"; and, from the Design Details, a
pre-existing claim referenced by name is deallocated once the PodGroup's reservation is gone but
never deleted.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODGROUPS, PODS, RESOURCECLAIMS, STATEFULSETS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.dra_support import (
    NS,
    SHARED_CLASS,
    create_story4,
    group_reservation,
    only_pod_group,
    start_dra_stack,
    wait_claims,
    wait_running,
)
from tests.integration.kep6277_support import CASCADE_TIMEOUT, sts_manifest

pytestmark = pytest.mark.anyio


def reserved(c: dict) -> bool:
    return bool((c.get("status") or {}).get("reservedFor"))


async def test_scale_to_zero_keeps_the_claim_allocated_and_reserved(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await create_story4(client, replicas=3)
    await wait_running(client, "shard-server", 3)
    (claim,) = await wait_claims(client, lambda cs: len(cs) == 1 and reserved(cs[0]))
    pg = await only_pod_group(client)
    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 0}}, NS)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    # the claim controller has seen every pod go; the group's reservation stays
    ctrl = cp.components["resource-claim-controller"]
    await ctrl.wait_idle()
    after = await client.get(RESOURCECLAIMS, claim["metadata"]["name"], NS)
    assert after["status"]["allocation"] == claim["status"]["allocation"]
    assert after["status"]["reservedFor"] == group_reservation(pg)


async def test_deleting_the_statefulset_cascades_to_the_generated_claim(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await create_story4(client, replicas=2)
    await wait_running(client, "shard-server", 2)
    await wait_claims(client, lambda cs: len(cs) == 1 and reserved(cs[0]))
    await client.delete(STATEFULSETS, "shard-server", NS)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_list(client, RESOURCECLAIMS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)


async def test_a_claim_referenced_by_name_is_deallocated_never_deleted(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await client.create(
        RESOURCECLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "pool", "namespace": NS},
            "spec": {
                "devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": SHARED_CLASS}}]}
            },
        },
        NS,
    )
    ref = {"name": "shared", "resourceClaimName": "pool"}
    body = sts_manifest("byname", 2, {"schedulingPolicy": {"gang": {}}, "resourceClaims": [ref]})
    spec = body["spec"]["template"]["spec"]
    spec["resourceClaims"] = [dict(ref)]
    spec["containers"][0]["resources"] = {"claims": [{"name": "shared"}]}
    await client.create(STATEFULSETS, body, NS)
    await wait_running(client, "byname", 2)
    pg = await only_pod_group(client)
    claim = await wait_for_object(client, RESOURCECLAIMS, "pool", NS, lambda c: c is not None and reserved(c))
    assert claim is not None and claim["status"]["reservedFor"] == group_reservation(pg)
    await client.delete(STATEFULSETS, "byname", NS)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    claim = await wait_for_object(
        client,
        RESOURCECLAIMS,
        "pool",
        NS,
        lambda c: c is not None and not reserved(c) and "allocation" not in (c.get("status") or {}),
        timeout=CASCADE_TIMEOUT,
    )
    assert claim is not None
    assert "resource.kubernetes.io/delete-protection" not in (claim["metadata"].get("finalizers") or [])
