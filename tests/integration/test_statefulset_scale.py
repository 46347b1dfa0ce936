"""Test plan: "scale down removes the highest ordinals first" (and scale up through /scale, like
``kubectl scale``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.client.interface import PODS, STATEFULSETS
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import StatefulSetController
from controllers.testing import PodReadier, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[StatefulSetController]:
    register_controllers(cp, "statefulset")
    c = await cp.start_component(STATEFULSET)
    assert isinstance(c, StatefulSetController)
    yield c


async def record_deletions(client: Any, rv: str, count: int, timeout: float = 10.0) -> list[str]:
    """The names of the next ``count`` pods deleted after resourceVersion ``rv``, in order."""
    out: list[str] = []

    async def run() -> None:
        async for ev in client.watch(PODS, "default", label_selector="app=web", resource_version=rv):
            if ev.type == "DELETED":
                out.append(ev.object["metadata"]["name"])
                if len(out) == count:
                    return

    try:
        await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        pytest.fail(f"only saw deletions {out}")
    return out


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
async def test_scale_down_removes_the_highest_ordinals_first(
    client: Any, ctrl: StatefulSetController, policy: str
) -> None:
    async with PodReadier(client):
        await client.create(STATEFULSETS, statefulset("web", 5, policy=policy), "default")
        await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("readyReplicas") == 5,
        )
        rv = (await client.list(PODS, "default"))["metadata"]["resourceVersion"]
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 2}}, "default", subresource="scale")
        deleted = await record_deletions(client, rv, 3)
    if policy == "OrderedReady":
        assert deleted == ["web-4", "web-3", "web-2"]
    else:
        assert sorted(deleted) == ["web-2", "web-3", "web-4"]
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 2, label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1"]
    sts = await wait_object(
        client, STATEFULSETS, "web", "default", lambda o: (o or {}).get("status", {}).get("replicas") == 2
    )
    assert sts is not None


async def test_ordered_scale_down_waits_for_unhealthy_predecessors(
    client: Any, ctrl: StatefulSetController
) -> None:
    async with PodReadier(client, hold={"web-3"}):
        await client.create(STATEFULSETS, statefulset("web", 3), "default")
        await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("readyReplicas") == 3,
        )
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 4}}, "default")
        await wait_object(client, PODS, "web-3", "default", lambda o: o is not None)
        # web-3 never becomes Ready; it is the first unhealthy pod, so scaling down may remove it
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 1}}, "default")
        pods = await wait_for_list(
            client, PODS, "default", lambda items: len(items) == 1, label_selector="app=web"
        )
    assert [p["metadata"]["name"] for p in pods] == ["web-0"]


async def test_scale_subresource_scales_up(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(STATEFULSETS, statefulset("web", 1, policy="Parallel"), "default")
    await wait_for_list(client, PODS, "default", lambda items: len(items) == 1, label_selector="app=web")
    scale = await client.get_subresource(STATEFULSETS, "web", "scale", "default")
    scale["spec"]["replicas"] = 3
    await client.update_subresource(STATEFULSETS, "web", "scale", scale, "default")
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 3, label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1", "web-2"]
