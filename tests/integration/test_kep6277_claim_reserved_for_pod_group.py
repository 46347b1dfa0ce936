"""KEP-6277 Test Plan (integration): "ResourceClaim is reserved for PodGroup (not individual pods) in
status.reservedFor" — so the 256-entry limit does not cap the StatefulSet: a 300-replica
StatefulSet sharing one claim runs, while pod-scoped reservations keep the limit.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODS, RESOURCECLAIMS
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_object
from tests.integration.dra_support import (
    NS,
    SHARED_CLASS,
    create_story4,
    fleet_doc,
    group_reservation,
    only_pod_group,
    start_dra_stack,
    wait_claims,
    wait_running,
)
from tests.integration.scheduler_support import wait_unschedulable

pytestmark = pytest.mark.anyio


async def test_the_claim_is_reserved_for_the_pod_group_once(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await create_story4(client, replicas=4)
    await wait_running(client, "shard-server", 4)
    pg = await only_pod_group(client)
    (claim,) = await wait_claims(
        client, lambda cs: len(cs) == 1 and (cs[0].get("status") or {}).get("reservedFor")
    )
    assert claim["status"]["reservedFor"] == group_reservation(pg)
    assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]


@pytest.mark.timeout(240)
async def test_a_300_replica_statefulset_shares_one_claim_past_the_256_limit(
    cp: ControlPlane, client
) -> None:
    await start_dra_stack(cp, fleet_doc(per_rack=2, pods=200))
    await create_story4(client, replicas=300)
    pods = await wait_running(client, "shard-server", 300, timeout=200)
    pg = await only_pod_group(client)
    (claim,) = (await client.list(RESOURCECLAIMS, NS))["items"]
    assert claim["status"]["reservedFor"] == group_reservation(pg)
    assert {p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] for p in pods} == {
        claim["metadata"]["name"]
    }


async def test_a_pod_scoped_claim_keeps_the_256_limit(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp, controllers="node-agent")
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "busy", "namespace": NS},
        "spec": {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": SHARED_CLASS}}]}},
    }
    created = await client.create(RESOURCECLAIMS, claim, NS)
    created["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "device", "driver": SHARED_CLASS, "pool": "rack-0", "device": "accel-0"}
                ]
            }
        },
        "reservedFor": [
            {"resource": "pods", "name": f"p{i}", "uid": f"00000000-0000-0000-0000-{i:012d}"}
            for i in range(256)
        ],
    }
    await client.update_status(RESOURCECLAIMS, created, NS)
    await client.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "late", "namespace": NS},
            "spec": {
                "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "d"}]}}],
                "resourceClaims": [{"name": "d", "resourceClaimName": "busy"}],
            },
        },
        NS,
    )
    p = await wait_unschedulable(client, "late")
    cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["message"].startswith("0/4 nodes are available: resourceclaim in use.")
    # the claim controller drops the reservations of pods that do not exist; then the pod fits
    await cp.start_component("resource-claim-controller")
    claim = await wait_for_object(
        client,
        RESOURCECLAIMS,
        "busy",
        NS,
        lambda c: c is not None and [r["name"] for r in c["status"].get("reservedFor", [])] == ["late"],
        timeout=20,
    )
    assert claim is not None
    await wait_for_object(
        client, PODS, "late", NS, lambda p: p is not None and p["status"].get("phase") == "Running"
    )
