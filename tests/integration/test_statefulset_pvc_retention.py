"""Test plan: "PVC retention policies" — claims from ``volumeClaimTemplates`` (``<claim>-<sts>-<n>``),
bound by the PV binder, kept or deleted on scale-down and on StatefulSet deletion as
``persistentVolumeClaimRetentionPolicy`` says (via ownerReferences and the garbage collector)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, PVCS, PVS, STATEFULSETS
from controllers.manager import GARBAGE_COLLECTOR, PV_BINDER, STATEFULSET, register_controllers
from controllers.testing import PodReadier, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def controllers(cp: ControlPlane) -> AsyncIterator[None]:
    register_controllers(cp, "statefulset,garbagecollector,persistentvolume-binder")
    for name in (GARBAGE_COLLECTOR, PV_BINDER, STATEFULSET):
        await cp.start_component(name)
    yield


def claim_names(items: list[Obj]) -> list[str]:
    return sorted(i["metadata"]["name"] for i in items)


async def claims(client: Any, cond: Any) -> list[Obj]:
    return await wait_for_list(client, PVCS, "default", cond, label_selector="app=web")


async def ready(client: Any, n: int) -> None:
    await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: (
            (o or {}).get("status", {}).get("readyReplicas") == n
            and (o or {}).get("status", {}).get("replicas") == n
        ),
    )


async def test_claims_are_created_named_and_bound(client: Any, controllers: None) -> None:
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel", claims=["data"]), "default")
    bound = await claims(
        client, lambda items: len(items) == 2 and all(i["status"].get("phase") == "Bound" for i in items)
    )
    assert claim_names(bound) == ["data-web-0", "data-web-1"]
    pvc = next(c for c in bound if c["metadata"]["name"] == "data-web-0")
    assert pvc["spec"]["volumeName"] == f"pvc-{pvc['metadata']['uid']}"
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert pvc["status"]["capacity"] == {"storage": "1Gi"}
    pv = await client.get(PVS, pvc["spec"]["volumeName"])
    assert pv["spec"]["claimRef"]["name"] == "data-web-0" and pv["status"]["phase"] == "Bound"
    pod = await client.get(PODS, "web-0", "default")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}} in pod["spec"]["volumes"]
    assert not pvc["metadata"].get("ownerReferences"), "Retain/Retain leaves claims unowned"


async def test_retain_keeps_claims_on_scale_down_and_deletion(client: Any, controllers: None) -> None:
    async with PodReadier(client):
        await client.create(
            STATEFULSETS, statefulset("web", 3, policy="Parallel", claims=["data"]), "default"
        )
        await ready(client, 3)
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default")
        await ready(client, 1)
    await client.delete(STATEFULSETS, "web", "default")
    await wait_for_list(client, PODS, "default", lambda items: not items, label_selector="app=web")
    left = (await client.list(PVCS, "default"))["items"]
    assert claim_names(left) == ["data-web-0", "data-web-1", "data-web-2"]


async def test_when_scaled_delete_removes_the_claims_of_removed_ordinals(
    client: Any, controllers: None
) -> None:
    async with PodReadier(client):
        await client.create(
            STATEFULSETS,
            statefulset("web", 3, policy="Parallel", claims=["data"], retention=("Retain", "Delete")),
            "default",
        )
        await ready(client, 3)
        before = await claims(client, lambda items: len(items) == 3)
        assert all(not c["metadata"].get("ownerReferences") for c in before), "in range: no owner yet"
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default")
        left = await claims(client, lambda items: len(items) == 1)
        assert claim_names(left) == ["data-web-0"]
        # scaling back up gets fresh claims for the new pods
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 2}}, "default")
        await ready(client, 2)
        again = await claims(client, lambda items: len(items) == 2)
        assert claim_names(again) == ["data-web-0", "data-web-1"]
    await client.delete(STATEFULSETS, "web", "default")
    await wait_for_list(client, PODS, "default", lambda items: not items, label_selector="app=web")
    assert claim_names((await client.list(PVCS, "default"))["items"]) == ["data-web-0", "data-web-1"]


async def test_when_deleted_delete_owns_claims_by_the_statefulset(client: Any, controllers: None) -> None:
    async with PodReadier(client):
        sts = await client.create(
            STATEFULSETS,
            statefulset("web", 2, policy="Parallel", claims=["data"], retention=("Delete", "Retain")),
            "default",
        )
        await ready(client, 2)
        owned = await claims(
            client, lambda items: len(items) == 2 and all(i["metadata"].get("ownerReferences") for i in items)
        )
        for c in owned:
            (ref,) = c["metadata"]["ownerReferences"]
            assert (ref["kind"], ref["uid"], ref["controller"]) == (
                "StatefulSet",
                sts["metadata"]["uid"],
                True,
            )
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default")
        await ready(client, 1)
        assert claim_names((await client.list(PVCS, "default"))["items"]) == ["data-web-0", "data-web-1"]
    await client.delete(STATEFULSETS, "web", "default")
    await claims(client, lambda items: not items)
    # the provisioned volumes go with their claims (reclaim policy Delete)
    await wait_for_list(client, PVS, "", lambda items: not items)
