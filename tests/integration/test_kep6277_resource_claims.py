"""KEP-6277 Test Plan (integration): "ResourceClaims from spec.scheduling.resourceClaims propagated
to PodGroup and shared by all pods" — the StatefulSet controller's part: the PodGroup carries the
claims, and every pod (from the unmodified template) declares the matching entry, so a
ResourceClaim controller and the scheduler can share one claim across the group. Generating and
reserving that claim (the next three bullets) is the DRA side and not tested here.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import GANG, NS, group_of, sts_manifest, wait_pods, wait_single

pytestmark = pytest.mark.anyio
CLAIM = {"name": "shared", "resourceClaimTemplateName": "shared-accelerator"}


async def test_claims_reach_the_pod_group_and_every_pod_matches_them(cp: ControlPlane, client: Any) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    body = sts_manifest("shard-server", 4, {**GANG, "resourceClaims": [CLAIM]})
    pod_spec = body["spec"]["template"]["spec"]
    pod_spec["resourceClaims"] = [dict(CLAIM)]
    pod_spec["containers"][0]["resources"] = {"claims": [{"name": "shared"}]}
    await client.create(STATEFULSETS, body, NS)
    pods = await wait_pods(client, "shard-server", 4)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert wl["spec"]["podGroupTemplates"][0]["resourceClaims"] == [CLAIM]
    assert pg["spec"]["resourceClaims"] == [CLAIM]
    for p in pods:
        assert group_of(p) == pg["metadata"]["name"]
        assert p["spec"]["resourceClaims"] == [CLAIM]  # name and source match the PodGroup's claim
