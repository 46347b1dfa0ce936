"""DynamicResources plugin pieces that the integration tests cannot reach on demand."""

from __future__ import annotations

import copy

import pytest

from apiserver.client.interface import RESOURCECLAIMS
from scheduler.framework import CycleState, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.dynamic_resources import DynamicResources, _generated_for
from scheduler.status import Code

pytestmark = pytest.mark.anyio
NS = "default"


def consumer(i: int) -> dict:
    return {"resource": "pods", "name": f"p{i}", "uid": f"00000000-0000-0000-0000-{i:012d}"}


async def test_unreserve_takes_back_a_written_reservation_and_deallocates_when_last(client) -> None:
    claim = await client.create(
        RESOURCECLAIMS,
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": NS},
            "spec": {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": "x"}}]}},
        },
        NS,
    )
    body = copy.deepcopy(claim)
    body["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "device", "driver": "d.example.com", "pool": "p", "device": "x"}]
            }
        },
        "reservedFor": [consumer(1), consumer(2)],
    }
    await client.update_status(RESOURCECLAIMS, body, NS)
    plugin = DynamicResources({}, Handle(client=client))
    await plugin._take_back(f"{NS}/c", consumer(1)["uid"])
    got = await client.get(RESOURCECLAIMS, "c", NS)
    assert got["status"]["reservedFor"] == [consumer(2)] and got["status"]["allocation"] is not None
    await plugin._take_back(f"{NS}/c", consumer(2)["uid"])
    assert (await client.get(RESOURCECLAIMS, "c", NS)).get("status", {}) == {}


def test_without_informers_pods_with_claims_are_an_error_others_skip() -> None:
    plugin = DynamicResources({}, Handle())
    plain = PodInfo(
        {"metadata": {"name": "a", "namespace": NS, "uid": "u"}, "spec": {"containers": [{"name": "c"}]}}
    )
    _, s = plugin.pre_filter(CycleState(), plain, [])
    assert s is not None and s.code == Code.SKIP
    with_claim = PodInfo(
        {
            "metadata": {"name": "b", "namespace": NS, "uid": "v"},
            "spec": {
                "containers": [{"name": "c"}],
                "resourceClaims": [{"name": "d", "resourceClaimName": "x"}],
            },
        }
    )
    _, s = plugin.pre_filter(CycleState(), with_claim, [])
    assert s is not None and s.code == Code.ERROR


def test_a_template_claim_belongs_to_its_pod_or_the_pods_group() -> None:
    pod = {"metadata": {"uid": "pod"}, "spec": {"schedulingGroup": {"podGroupName": "g"}}}
    mine = {"metadata": {"ownerReferences": [{"kind": "Pod", "name": "p", "uid": "pod", "controller": True}]}}
    group = {
        "metadata": {"ownerReferences": [{"kind": "PodGroup", "name": "g", "uid": "pg", "controller": True}]}
    }
    other = {
        "metadata": {"ownerReferences": [{"kind": "Pod", "name": "q", "uid": "other", "controller": True}]}
    }
    assert _generated_for(mine, pod) and _generated_for(group, pod) and not _generated_for(other, pod)
