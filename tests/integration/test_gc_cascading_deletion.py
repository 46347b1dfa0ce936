"""Test plan: "cascading deletion in all three modes" — background, foreground and orphan, as
``kubectl delete --cascade=background|foreground|orphan`` does it on a real cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONFIGMAPS, PODS, STATEFULSETS
from controllers.garbagecollector import GarbageCollector
from controllers.manager import GARBAGE_COLLECTOR, STATEFULSET, register_controllers
from controllers.testing import observed, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import cm, wait_for_list

pytestmark = pytest.mark.anyio

HOLD = "example.com/hold"


@pytest.fixture
async def gc(cp: ControlPlane) -> AsyncIterator[GarbageCollector]:
    register_controllers(cp, "garbagecollector")
    c = await cp.start_component(GARBAGE_COLLECTOR)
    assert isinstance(c, GarbageCollector)
    yield c


def ref(owner: Obj, block: bool = True, controller: bool = False) -> Obj:
    r = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        r["blockOwnerDeletion"] = True
    if controller:
        r["controller"] = True
    return r


async def dependent(
    client: Any, name: str, *owners: Obj, block: bool = True, finalizers: list[str] | None = None
) -> Obj:
    body = cm(name)
    body["metadata"]["ownerReferences"] = [ref(o, block) for o in owners]
    if finalizers:
        body["metadata"]["finalizers"] = finalizers
    return await client.create(CONFIGMAPS, body, "default")


def gone(o: Obj | None) -> bool:
    return o is None


async def test_background_deletes_the_owner_then_its_dependents(client: Any, gc: GarbageCollector) -> None:
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    for i in range(3):
        await dependent(client, f"dep-{i}", owner)
    await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Background")
    for i in range(3):
        await wait_object(client, CONFIGMAPS, f"dep-{i}", "default", gone)


async def test_a_dependent_with_another_live_owner_survives_and_loses_the_dangling_reference(
    client: Any, gc: GarbageCollector
) -> None:
    a = await client.create(CONFIGMAPS, cm("a"), "default")
    b = await client.create(CONFIGMAPS, cm("b"), "default")
    await dependent(client, "shared", a, b)
    await client.delete(CONFIGMAPS, "a", "default")
    left = await wait_object(
        client,
        CONFIGMAPS,
        "shared",
        "default",
        lambda o: o is not None and len(o["metadata"]["ownerReferences"]) == 1,
    )
    assert left is not None and left["metadata"]["ownerReferences"][0]["uid"] == b["metadata"]["uid"]


async def test_foreground_keeps_the_owner_until_blocking_dependents_are_gone(
    client: Any, gc: GarbageCollector
) -> None:
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    await dependent(client, "blocking", owner, finalizers=[HOLD])
    await dependent(client, "plain", owner)
    deleting = await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Foreground")
    assert "foregroundDeletion" in deleting["metadata"]["finalizers"]
    # the unheld dependent goes; the held one is marked for deletion and keeps the owner waiting
    await wait_object(client, CONFIGMAPS, "plain", "default", gone)
    held = await wait_object(
        client,
        CONFIGMAPS,
        "blocking",
        "default",
        lambda o: bool(o and o["metadata"].get("deletionTimestamp")),
    )
    assert held is not None
    await observed(
        gc.informers.informer(CONFIGMAPS),
        "default/blocking",
        lambda o: bool(o and o["metadata"].get("deletionTimestamp")),
    )
    await gc.wait_idle()
    still = await client.get(CONFIGMAPS, "owner", "default")
    assert still["metadata"]["finalizers"] == ["foregroundDeletion"]
    await client.patch(CONFIGMAPS, "blocking", {"metadata": {"finalizers": None}}, "default")
    await wait_object(client, CONFIGMAPS, "owner", "default", gone)


async def test_foreground_does_not_wait_for_non_blocking_dependents(
    client: Any, gc: GarbageCollector
) -> None:
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    await dependent(client, "soft", owner, block=False, finalizers=[HOLD])
    await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Foreground")
    await wait_object(client, CONFIGMAPS, "owner", "default", gone)
    soft = await wait_object(
        client, CONFIGMAPS, "soft", "default", lambda o: bool(o and o["metadata"].get("deletionTimestamp"))
    )
    assert soft is not None
    await client.patch(CONFIGMAPS, "soft", {"metadata": {"finalizers": None}}, "default")


async def test_foreground_cascades_through_dependents_that_have_dependents(
    client: Any, gc: GarbageCollector
) -> None:
    top = await client.create(CONFIGMAPS, cm("top"), "default")
    mid = await dependent(client, "mid", top)
    await dependent(client, "leaf", mid, finalizers=[HOLD])
    await client.delete(CONFIGMAPS, "top", "default", propagation_policy="Foreground")
    mid_deleting = await wait_object(
        client,
        CONFIGMAPS,
        "mid",
        "default",
        lambda o: bool(o and "foregroundDeletion" in (o["metadata"].get("finalizers") or [])),
    )
    assert mid_deleting is not None and mid_deleting["metadata"].get("deletionTimestamp")
    assert (await client.get(CONFIGMAPS, "top", "default"))["metadata"].get("deletionTimestamp")
    await client.patch(CONFIGMAPS, "leaf", {"metadata": {"finalizers": None}}, "default")
    await wait_object(client, CONFIGMAPS, "top", "default", gone)
    await wait_object(client, CONFIGMAPS, "mid", "default", gone)


async def test_orphan_removes_the_reference_and_keeps_dependents(client: Any, gc: GarbageCollector) -> None:
    owner = await client.create(CONFIGMAPS, cm("owner"), "default")
    other = await client.create(CONFIGMAPS, cm("other"), "default")
    await dependent(client, "dep-0", owner)
    await dependent(client, "dep-1", owner, other)
    deleting = await client.delete(CONFIGMAPS, "owner", "default", propagation_policy="Orphan")
    assert deleting["metadata"]["finalizers"] == ["orphan"]
    await wait_object(client, CONFIGMAPS, "owner", "default", gone)
    d0 = await client.get(CONFIGMAPS, "dep-0", "default")
    d1 = await client.get(CONFIGMAPS, "dep-1", "default")
    assert not d0["metadata"].get("ownerReferences")
    assert [r["uid"] for r in d1["metadata"]["ownerReferences"]] == [other["metadata"]["uid"]]


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
async def test_statefulset_cascade(cp: ControlPlane, client: Any, gc: GarbageCollector, policy: str) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    await client.create(STATEFULSETS, statefulset("web", 3, policy="Parallel"), "default")
    await wait_for_list(client, PODS, "default", lambda items: len(items) == 3, label_selector="app=web")
    await client.delete(STATEFULSETS, "web", "default", propagation_policy=policy)
    await wait_object(client, STATEFULSETS, "web", "default", gone)
    if policy == "Orphan":
        await cp.stop_component(STATEFULSET)
        pods = (await client.list(PODS, "default", label_selector="app=web"))["items"]
        assert len(pods) == 3
        assert all(not p["metadata"].get("ownerReferences") for p in pods)
    else:
        await wait_for_list(client, PODS, "default", lambda items: not items, label_selector="app=web")
