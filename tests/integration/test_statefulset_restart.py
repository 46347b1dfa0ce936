"""Test plan: "a StatefulSet controller restarted mid-scale converges with no duplicate or missing
ordinals" — the controller component is stopped while it is creating (or deleting) pods, the set
is changed meanwhile, and a fresh controller (new caches, new queue) finishes the job."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, STATEFULSETS
from controllers.manager import STATEFULSET, register_controllers
from controllers.testing import PodReadier, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


class Recorder:
    """Counts pod creations and deletions of ``app=web`` from a resourceVersion on."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.created: list[str] = []
        self.deleted: list[str] = []
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        rv = (await self.client.list(PODS, "default"))["metadata"]["resourceVersion"]

        async def run() -> None:
            async for ev in self.client.watch(PODS, "default", label_selector="app=web", resource_version=rv):
                if ev.type == "ADDED":
                    self.created.append(ev.object["metadata"]["name"])
                elif ev.type == "DELETED":
                    self.deleted.append(ev.object["metadata"]["name"])

        self._task = asyncio.create_task(run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


def ordinals(pods: list[Obj]) -> list[int]:
    return sorted(int(p["metadata"]["name"].rsplit("-", 1)[1]) for p in pods)


async def test_restart_mid_parallel_scale_up(cp: ControlPlane, client: Any) -> None:
    register_controllers(cp, "statefulset")
    rec = Recorder(client)
    await rec.start()
    await cp.start_component(STATEFULSET)
    sts = await client.create(STATEFULSETS, statefulset("web", 60, policy="Parallel"), "default")
    # crash once part of the pods exist, while creation batches are in flight
    await wait_for_list(client, PODS, "default", lambda items: len(items) >= 7, label_selector="app=web")
    await cp.stop_component(STATEFULSET)
    partial = (await client.list(PODS, "default", label_selector="app=web"))["items"]
    assert 7 <= len(partial) < 60
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 90}}, "default")
    await cp.start_component(STATEFULSET)
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 90, label_selector="app=web"
    )
    assert ordinals(pods) == list(range(90))
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == sts["metadata"]["uid"] for p in pods)
    done = await wait_object(
        client, STATEFULSETS, "web", "default", lambda o: (o or {}).get("status", {}).get("replicas") == 90
    )
    assert done is not None and done["status"]["observedGeneration"] == done["metadata"]["generation"]
    rec.stop()
    assert sorted(rec.created) == sorted(f"web-{i}" for i in range(90)), "every ordinal created exactly once"
    assert rec.deleted == []


async def test_restart_mid_ordered_scale_up_and_down(cp: ControlPlane, client: Any) -> None:
    register_controllers(cp, "statefulset")
    async with PodReadier(client):
        await cp.start_component(STATEFULSET)
        await client.create(STATEFULSETS, statefulset("web", 8), "default")
        await wait_object(client, PODS, "web-3", "default")
        await cp.stop_component(STATEFULSET)
        await cp.start_component(STATEFULSET)
        await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("readyReplicas") == 8,
        )
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 2}}, "default")
        await wait_object(client, PODS, "web-6", "default", lambda o: o is None)
        await cp.stop_component(STATEFULSET)
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 3}}, "default")
        await cp.start_component(STATEFULSET)
        pods = await wait_for_list(
            client, PODS, "default", lambda items: len(items) == 3, label_selector="app=web"
        )
        assert ordinals(pods) == [0, 1, 2]
        done = await wait_object(
            client,
            STATEFULSETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("readyReplicas") == 3,
        )
        assert done is not None and done["status"]["replicas"] == 3
