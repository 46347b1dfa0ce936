"""KEP-6277 Test Plan (e2e, run in-process here): "Rolling update with a changed Pod claim reference:
verify that nonmatching replacement-Pod claims are Pod-scoped, matching claims still use the
PodGroup claim, and an unused shared claim remains allocated to the PodGroup".

The StatefulSet shares two claims through its PodGroup (``shared``: the rack accelerator,
``gpu``: one GPU). The update keeps ``shared`` and points ``gpu`` at another template, so the
replacement pods' ``gpu`` entry no longer matches the PodGroup's and each gets its own claim.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, STATEFULSETS
from gangplane.controlplane import ControlPlane
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
    wait_running,
)
from tests.integration.kep6277_support import CASCADE_TIMEOUT

pytestmark = pytest.mark.anyio

SHARED = {"name": "shared", "resourceClaimTemplateName": "shared-accelerator"}
GPU = {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
GPU_V2 = {"name": "gpu", "resourceClaimTemplateName": "one-gpu-v2"}


def _statuses(pod: dict) -> dict[str, str]:
    return {s["name"]: s.get("resourceClaimName", "") for s in pod["status"].get("resourceClaimStatuses", [])}


async def test_rolling_update_splits_matching_and_pod_scoped_claims(cp: ControlPlane, client) -> None:
    await start_dra_stack(cp)
    for tpl in (
        claim_template(),
        claim_template("one-gpu", GPU_CLASS),
        claim_template("one-gpu-v2", GPU_CLASS),
    ):
        await client.create(RESOURCECLAIMTEMPLATES, tpl, NS)
    body = shared_sts("db", 2, policy={"basic": {}}, pod_claims=[dict(SHARED), dict(GPU)])
    body["spec"]["scheduling"]["resourceClaims"] = [dict(SHARED), dict(GPU)]
    body["spec"]["template"]["spec"]["containers"][0]["resources"]["claims"] = [
        {"name": "shared"},
        {"name": "gpu"},
    ]
    await client.create(STATEFULSETS, body, NS)
    await wait_running(client, "db", 2)
    pg = await only_pod_group(client)
    group_claims = {s["name"]: s["resourceClaimName"] for s in pg["status"]["resourceClaimStatuses"]}
    assert set(group_claims) == {"shared", "gpu"}

    await client.patch(
        STATEFULSETS,
        "db",
        {"spec": {"template": {"spec": {"resourceClaims": [dict(SHARED), dict(GPU_V2)]}}}},
        NS,
    )

    def rolled(items: list[dict]) -> bool:
        pods = [
            p
            for p in items
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
        ]
        return len(pods) == 2 and all(
            {c.get("resourceClaimTemplateName") for c in p["spec"]["resourceClaims"]}
            == {"shared-accelerator", "one-gpu-v2"}
            for p in pods
        )

    pods = await wait_for_list(client, PODS, NS, rolled, timeout=CASCADE_TIMEOUT * 2, label_selector="app=db")
    pods = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    claims = {c["metadata"]["name"]: c for c in (await client.list(RESOURCECLAIMS, NS))["items"]}
    for p in pods:
        st = _statuses(p)
        # the matching claim still is the PodGroup's
        assert st["shared"] == group_claims["shared"]
        # the changed reference is pod-scoped: generated for this pod, owned by it, reserved for it
        own = claims[st["gpu"]]
        assert own["metadata"]["name"].startswith(f"{p['metadata']['name']}-gpu-")
        assert claim_owner(own) == ("Pod", p["metadata"]["name"])
        assert [r["uid"] for r in own["status"]["reservedFor"]] == [p["metadata"]["uid"]]
    # the PodGroup's gpu claim is used by no pod now, and still allocated to the PodGroup
    unused = claims[group_claims["gpu"]]
    assert unused["status"]["allocation"] is not None
    assert unused["status"]["reservedFor"] == group_reservation(pg)
