"""Test plan: "a rolling update with partition updates only ordinals >= partition" — then the
rollout completes once the partition is lowered; maxUnavailable bounds Parallel rollouts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, STATEFULSETS
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import StatefulSetController
from controllers.statefulset.utils import REVISION_LABEL
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


def image_patch(image: str) -> Obj:
    return {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}


def status(o: Obj | None) -> Obj:
    return (o or {}).get("status") or {}


async def test_partition_updates_only_ordinals_at_or_above_it(
    client: Any, ctrl: StatefulSetController
) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    async with PodReadier(client):
        await client.create(STATEFULSETS, statefulset("web", 4, updateStrategy=strategy), "default")
        ready = await wait_object(
            client, STATEFULSETS, "web", "default", lambda o: status(o).get("readyReplicas") == 4
        )
        assert ready is not None
        old_rev = ready["status"]["currentRevision"]
        await client.patch(STATEFULSETS, "web", image_patch("v2"), "default")
        done = await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: status(o).get("updatedReplicas") == 2 and status(o).get("readyReplicas") == 4,
        )
        assert done is not None
        new_rev = done["status"]["updateRevision"]
        assert new_rev != old_rev
        assert done["status"]["currentRevision"] == old_rev, "a partitioned rollout is not complete"
        assert done["status"]["currentReplicas"] == 2
        pods = {
            p["metadata"]["name"]: p
            for p in (await client.list(PODS, "default", label_selector="app=web"))["items"]
        }
        assert {n: p["metadata"]["labels"][REVISION_LABEL] for n, p in pods.items()} == {
            "web-0": old_rev,
            "web-1": old_rev,
            "web-2": new_rev,
            "web-3": new_rev,
        }
        assert pods["web-3"]["spec"]["containers"][0]["image"] == "v2"
        assert pods["web-1"]["spec"]["containers"][0]["image"] != "v2"

        # lowering the partition finishes the rollout; the update revision becomes current
        await client.patch(
            STATEFULSETS, "web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}, "default"
        )
        final = await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: status(o).get("currentRevision") == new_rev and status(o).get("readyReplicas") == 4,
        )
        assert (
            final is not None
            and final["status"]["updatedReplicas"] == 4
            and final["status"]["currentReplicas"] == 4
        )


async def test_ordered_rolling_update_goes_from_the_highest_ordinal_down(
    client: Any, ctrl: StatefulSetController
) -> None:
    async with PodReadier(client):
        await client.create(STATEFULSETS, statefulset("web", 3), "default")
        await wait_object(
            client, STATEFULSETS, "web", "default", lambda o: status(o).get("readyReplicas") == 3
        )
        rv = (await client.list(PODS, "default"))["metadata"]["resourceVersion"]
        await client.patch(STATEFULSETS, "web", image_patch("v2"), "default")
        deleted: list[str] = []
        async for ev in client.watch(PODS, "default", label_selector="app=web", resource_version=rv):
            if ev.type == "DELETED":
                deleted.append(ev.object["metadata"]["name"])
                if len(deleted) == 3:
                    break
        assert deleted == ["web-2", "web-1", "web-0"]
        await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: status(o).get("updatedReplicas") == 3 and status(o).get("readyReplicas") == 3,
        )


async def test_parallel_rollout_respects_max_unavailable(client: Any, ctrl: StatefulSetController) -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 2}}
    async with PodReadier(client):
        await client.create(
            STATEFULSETS, statefulset("web", 5, policy="Parallel", updateStrategy=strategy), "default"
        )
        await wait_object(
            client, STATEFULSETS, "web", "default", lambda o: status(o).get("readyReplicas") == 5
        )
        rv = (await client.list(PODS, "default"))["metadata"]["resourceVersion"]
        unavailable: set[str] = set()
        worst = 0

        async def track() -> None:
            nonlocal worst
            async for ev in client.watch(PODS, "default", label_selector="app=web", resource_version=rv):
                name = ev.object["metadata"]["name"]
                conds = (ev.object.get("status") or {}).get("conditions") or []
                ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)
                if ev.type == "DELETED" or not ready or ev.object["metadata"].get("deletionTimestamp"):
                    unavailable.add(name)
                else:
                    unavailable.discard(name)
                worst = max(worst, len(unavailable))

        tracker = asyncio.create_task(track())
        try:
            await client.patch(STATEFULSETS, "web", image_patch("v2"), "default")
            await wait_object(
                client,
                STATEFULSETS,
                "web",
                "default",
                lambda o: (
                    status(o).get("currentRevision") == status(o).get("updateRevision")
                    and status(o).get("readyReplicas") == 5
                    and (o or {}).get("metadata", {}).get("generation") == status(o).get("observedGeneration")
                ),
            )
        finally:
            tracker.cancel()
        assert 1 <= worst <= 2
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 5, label_selector="app=web"
    )
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"v2"}
