"""Test plan: "OrderedReady creates pod-1 only after pod-0 is Ready and halts on a never-Ready pod"
and "Parallel creates all at once"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, STATEFULSETS
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import StatefulSetController
from controllers.testing import observed, set_pod_status, statefulset, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[StatefulSetController]:
    register_controllers(cp, "statefulset")
    c = await cp.start_component(STATEFULSET)
    assert isinstance(c, StatefulSetController)
    yield c


async def pod_names(client: Any) -> list[str]:
    items = (await client.list(PODS, "default", label_selector="app=web"))["items"]
    return sorted(p["metadata"]["name"] for p in items)


async def settle(ctrl: StatefulSetController, name: str, pred: Any = lambda o: o is not None) -> None:
    """The controller has seen pod ``name`` in the state ``pred`` describes and reacted to it."""
    await observed(ctrl.pods, f"default/{name}", pred)
    await ctrl.wait_idle()


def exists(o: Obj | None) -> bool:
    return o is not None


async def test_ordered_ready_creates_each_pod_after_its_predecessor_is_ready(
    client: Any, ctrl: StatefulSetController
) -> None:
    await client.create(STATEFULSETS, statefulset("web", 3), "default")
    await wait_object(client, PODS, "web-0", "default", exists)
    await settle(ctrl, "web-0")
    assert await pod_names(client) == ["web-0"]

    await set_pod_status(client, "web-0", phase="Running", ready=False)
    await settle(ctrl, "web-0", lambda o: (o or {}).get("status", {}).get("phase") == "Running")
    assert await pod_names(client) == ["web-0"], "Running is not enough: the pod must be Ready"

    await set_pod_status(client, "web-0")
    await wait_object(client, PODS, "web-1", "default", exists)
    await settle(ctrl, "web-1")
    assert await pod_names(client) == ["web-0", "web-1"]

    await set_pod_status(client, "web-1")
    await wait_object(client, PODS, "web-2", "default", exists)
    await set_pod_status(client, "web-2")
    done = await wait_object(
        client,
        STATEFULSETS,
        "web",
        "default",
        lambda o: (o or {}).get("status", {}).get("readyReplicas") == 3,
    )
    assert done is not None and done["status"]["availableReplicas"] == 3


async def test_ordered_ready_halts_on_a_pod_that_never_becomes_ready(
    client: Any, ctrl: StatefulSetController
) -> None:
    await client.create(STATEFULSETS, statefulset("web", 4), "default")
    await wait_object(client, PODS, "web-0", "default", exists)
    await set_pod_status(client, "web-0")
    await wait_object(client, PODS, "web-1", "default", exists)
    await set_pod_status(client, "web-1", phase="Running", ready=False)  # never Ready
    await settle(ctrl, "web-1", lambda o: (o or {}).get("status", {}).get("phase") == "Running")
    # an unrelated change to the healthy pod triggers another pass: still no web-2
    await client.patch(PODS, "web-0", {"metadata": {"annotations": {"poke": "1"}}}, "default")
    await settle(
        ctrl, "web-0", lambda o: (o or {}).get("metadata", {}).get("annotations", {}).get("poke") == "1"
    )
    assert await pod_names(client) == ["web-0", "web-1"]
    sts = await client.get(STATEFULSETS, "web", "default")
    assert sts["status"]["replicas"] == 2 and sts["status"]["readyReplicas"] == 1


async def test_ordered_ready_creation_order_is_by_ordinal(client: Any, ctrl: StatefulSetController) -> None:
    order: list[str] = []
    await client.create(STATEFULSETS, statefulset("web", 3), "default")
    for i in range(3):
        pod = await wait_object(client, PODS, f"web-{i}", "default", exists)
        assert pod is not None
        order.append(pod["metadata"]["name"])
        await set_pod_status(client, f"web-{i}")
    assert order == ["web-0", "web-1", "web-2"]


async def test_parallel_creates_all_pods_at_once(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(STATEFULSETS, statefulset("web", 5, policy="Parallel"), "default")
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 5, label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == [f"web-{i}" for i in range(5)]
    assert all(p["status"].get("phase") == "Pending" for p in pods), "nobody waited for readiness"


async def test_parallel_does_not_stop_at_an_unhealthy_pod(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(STATEFULSETS, statefulset("web", 2, policy="Parallel"), "default")
    await wait_for_list(client, PODS, "default", lambda items: len(items) == 2, label_selector="app=web")
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 4}}, "default")
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 4, label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == [f"web-{i}" for i in range(4)]


async def test_ordinals_start_offsets_pod_names(client: Any, ctrl: StatefulSetController) -> None:
    await client.create(
        STATEFULSETS, statefulset("web", 2, policy="Parallel", ordinals={"start": 3}), "default"
    )
    pods = await wait_for_list(
        client, PODS, "default", lambda items: len(items) == 2, label_selector="app=web"
    )
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-3", "web-4"]
    assert {p["metadata"]["labels"]["apps.kubernetes.io/pod-index"] for p in pods} == {"3", "4"}
