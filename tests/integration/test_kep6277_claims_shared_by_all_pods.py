"""KEP-6277 Test Plan (integration): "ResourceClaims from spec.scheduling.resourceClaims propagated to
PodGroup and shared by all pods" and "ResourceClaimTemplate generates one ResourceClaim per PodGroup,
not per pod"; (e2e) "ResourceClaimTemplate generates one claim per PodGroup; scaling up adds pods
referencing the existing claim without generating new claims".
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODS, RESOURCECLAIMS, STATEFULSETS
from gangplane.controlplane import ControlPlane
from resourceclaims.claims import POD_CLAIM_NAME_ANNOTATION
from tests.integration.dra_support import (
    NS,
    claim_owner,
    create_story4,
    only_pod_group,
    start_dra_stack,
    wait_claims,
    wait_running,
)

pytestmark = pytest.mark.anyio


def allocated(c: dict) -> bool:
    return (c.get("status") or {}).get("allocation") is not None


async def test_one_claim_per_pod_group_shared_by_every_pod(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await create_story4(client, replicas=4)
    pods = await wait_running(client, "shard-server", 4)
    pg = await only_pod_group(client)
    (claim,) = await wait_claims(client, lambda cs: len(cs) == 1 and allocated(cs[0]))
    name = claim["metadata"]["name"]
    assert name.startswith(f"{pg['metadata']['name']}-shared-")
    assert claim_owner(claim) == ("PodGroup", pg["metadata"]["name"])
    assert claim["metadata"]["annotations"][POD_CLAIM_NAME_ANNOTATION] == "shared"
    pg = await only_pod_group(client)
    assert pg["status"]["resourceClaimStatuses"] == [{"name": "shared", "resourceClaimName": name}]
    for p in pods:
        assert p["status"]["resourceClaimStatuses"] == [{"name": "shared", "resourceClaimName": name}]
    # one device for the whole group: every pod runs in the rack the shared accelerator serves
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    rack = result["pool"]
    assert {p["spec"]["nodeName"].rsplit("-", 1)[0] for p in pods} == {f"n-{rack}"}


async def test_scaling_up_generates_no_new_claim(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    await create_story4(client, replicas=2)
    await wait_running(client, "shard-server", 2)
    (before,) = await wait_claims(client, lambda cs: len(cs) == 1 and allocated(cs[0]))
    await client.patch(STATEFULSETS, "shard-server", {"spec": {"replicas": 4}}, NS)
    pods = await wait_running(client, "shard-server", 4)
    claims = (await client.list(RESOURCECLAIMS, NS))["items"]
    assert [c["metadata"]["uid"] for c in claims] == [before["metadata"]["uid"]]
    for p in pods:
        assert p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == before["metadata"]["name"]
    assert len((await client.list(PODS, NS))["items"]) == 4
