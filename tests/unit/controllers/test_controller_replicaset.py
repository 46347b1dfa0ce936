"""ReplicaSet controller behaviour through the in-process client (only this controller runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, PODS, REPLICASETS
from controllers.manager import REPLICASET, register_controllers
from controllers.podutil import POD_DELETION_COST, rank_pods_for_deletion
from controllers.replicaset import ReplicaSetController
from controllers.testing import PodReadier, observed, set_pod_status, wait_object
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list

pytestmark = pytest.mark.anyio


def replicaset(name: str, replicas: int = 3, **spec: Any) -> Obj:
    body: Obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
    }
    body["spec"].update(spec)
    return body


@pytest.fixture
async def ctrl(cp: ControlPlane) -> AsyncIterator[ReplicaSetController]:
    register_controllers(cp, "replicaset")
    c = await cp.start_component(REPLICASET)
    assert isinstance(c, ReplicaSetController)
    yield c


async def pods_of(client: Any, app: str, n: int) -> list[Obj]:
    return await wait_for_list(
        client, PODS, "default", lambda items: len(items) == n, label_selector=f"app={app}"
    )


async def events(ctrl: ReplicaSetController, client: Any) -> list[tuple[str, str, str]]:
    await ctrl.recorder.flush()
    return [(e["type"], e["reason"], e["message"]) for e in (await client.list(EVENTS, "default"))["items"]]


async def test_creates_replicas_with_controller_ref_and_generate_name(
    client: Any, ctrl: ReplicaSetController
) -> None:
    rs = await client.create(REPLICASETS, replicaset("web", 3), "default")
    pods = await pods_of(client, "web", 3)
    for p in pods:
        assert p["metadata"]["generateName"] == "web-"
        ref = p["metadata"]["ownerReferences"][0]
        assert ref == {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": rs["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    await ctrl.wait_idle()
    evs = await events(ctrl, client)
    created = sorted(m for t, r, m in evs if r == "SuccessfulCreate")
    assert created == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    got = await wait_object(
        client, REPLICASETS, "web", "default", lambda o: (o or {}).get("status", {}).get("replicas") == 3
    )
    assert got is not None and got["status"]["observedGeneration"] == 1
    assert got["status"]["fullyLabeledReplicas"] == 3
    assert got["status"]["readyReplicas"] == 0 and got["status"]["availableReplicas"] == 0


async def test_status_counts_ready_and_available_replicas(client: Any, ctrl: ReplicaSetController) -> None:
    async with PodReadier(client):
        await client.create(REPLICASETS, replicaset("web", 2), "default")
        got = await wait_object(
            client,
            REPLICASETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("availableReplicas") == 2,
        )
    assert got is not None
    assert got["status"]["readyReplicas"] == 2 and got["status"]["replicas"] == 2


async def test_does_not_overshoot_while_the_cache_lags(client: Any, ctrl: ReplicaSetController) -> None:
    await client.create(REPLICASETS, replicaset("web", 5), "default")
    await pods_of(client, "web", 5)
    await ctrl.wait_idle()
    assert len((await client.list(PODS, "default"))["items"]) == 5


async def test_scale_down_deletes_the_pod_with_the_lowest_deletion_cost(
    client: Any, ctrl: ReplicaSetController
) -> None:
    async with PodReadier(client):
        await client.create(REPLICASETS, replicaset("web", 3), "default")
        await wait_object(
            client,
            REPLICASETS,
            "web",
            "default",
            lambda o: (o or {}).get("status", {}).get("readyReplicas") == 3,
        )
    pods = await pods_of(client, "web", 3)
    cheap = pods[1]["metadata"]["name"]
    for i, p in enumerate(pods):
        cost = "-5" if p["metadata"]["name"] == cheap else str(10 + i)
        await client.patch(
            PODS, p["metadata"]["name"], {"metadata": {"annotations": {POD_DELETION_COST: cost}}}, "default"
        )
    await ctrl.wait_idle()
    await client.patch(REPLICASETS, "web", {"spec": {"replicas": 2}}, "default")
    left = await wait_for_list(
        client,
        PODS,
        "default",
        lambda items: len([p for p in items if not p["metadata"].get("deletionTimestamp")]) == 2,
    )
    assert cheap not in {p["metadata"]["name"] for p in left if not p["metadata"].get("deletionTimestamp")}
    await ctrl.wait_idle()
    assert ("Normal", "SuccessfulDelete", f"Deleted pod: {cheap}") in await events(ctrl, client)


async def test_adopts_matching_orphans_and_releases_pods_that_stop_matching(
    client: Any, ctrl: ReplicaSetController
) -> None:
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stray", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    await client.create(PODS, orphan, "default")
    rs = await client.create(REPLICASETS, replicaset("web", 2), "default")
    got = await wait_object(
        client, PODS, "stray", "default", lambda o: bool(o and o["metadata"].get("ownerReferences"))
    )
    assert got is not None and got["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    await pods_of(client, "web", 2)
    await client.patch(PODS, "stray", {"metadata": {"labels": {"app": "other"}}}, "default")
    released = await wait_object(
        client, PODS, "stray", "default", lambda o: bool(o) and not o["metadata"].get("ownerReferences")
    )
    assert released is not None
    await pods_of(client, "web", 2)


async def test_failed_pods_are_replaced(client: Any, ctrl: ReplicaSetController) -> None:
    await client.create(REPLICASETS, replicaset("web", 1), "default")
    (pod,) = await pods_of(client, "web", 1)
    await set_pod_status(client, pod["metadata"]["name"], phase="Failed", ready=False)
    pods = await pods_of(client, "web", 2)
    assert {p["status"].get("phase") for p in pods} >= {"Failed"}
    await observed(ctrl.sets, "default/web", lambda o: o is not None)


async def test_replica_failure_condition_when_creation_is_forbidden(
    client: Any, ctrl: ReplicaSetController
) -> None:
    body = replicaset("web", 1)
    body["spec"]["template"]["spec"]["priorityClassName"] = "does-not-exist"
    await client.create(REPLICASETS, body, "default")
    got = await wait_object(
        client,
        REPLICASETS,
        "web",
        "default",
        lambda o: any(
            c["type"] == "ReplicaFailure" for c in (o or {}).get("status", {}).get("conditions", [])
        ),
    )
    assert got is not None
    (cond,) = got["status"]["conditions"]
    assert cond["status"] == "True" and cond["reason"] == "FailedCreate"
    assert "no PriorityClass with name does-not-exist was found" in cond["message"]
    evs = await events(ctrl, client)
    assert any(r == "FailedCreate" and m.startswith("Error creating: ") for _, r, m in evs)


def _pod(
    name: str,
    *,
    node: str = "n1",
    phase: str = "Running",
    ready: bool = True,
    cost: int | None = None,
    created: str = "2026-01-01T00:00:00Z",
    ready_at: str = "2026-01-01T00:00:10Z",
) -> Obj:
    md: Obj = {"name": name, "uid": name, "creationTimestamp": created}
    if cost is not None:
        md["annotations"] = {POD_DELETION_COST: str(cost)}
    return {
        "metadata": md,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_at}
            ],
        },
    }


def test_ranking_prefers_unassigned_pending_unready_cheap_and_doubled_up_pods() -> None:
    now = 1_800_000_000.0
    pods = [
        _pod("ready-old", node="n2"),
        _pod("doubled", node="n1"),
        _pod("cheap", node="n3", cost=-1),
        _pod("unready", ready=False, node="n4"),
        _pod("pending", phase="Pending", ready=False, node="n5"),
        _pod("unassigned", node="", phase="Pending", ready=False),
    ]
    related = [*pods, _pod("sibling", node="n1")]
    order = [p["metadata"]["name"] for p in rank_pods_for_deletion(pods, related, now)]
    assert order == ["unassigned", "pending", "unready", "cheap", "doubled", "ready-old"]


def test_ranking_puts_recently_ready_pods_first_in_log_buckets() -> None:
    now = 1_800_000_000.0
    young = _pod("young", ready_at="2027-01-15T07:59:00Z")
    old = _pod("old", ready_at="2026-01-01T00:00:00Z")
    assert [p["metadata"]["name"] for p in rank_pods_for_deletion([old, young], [], now)] == ["young", "old"]


async def test_replication_controller_keeps_replicas_with_v1_owner_references(
    cp: ControlPlane, client: Any
) -> None:
    from controllers.manager import REPLICATIONCONTROLLER
    from controllers.replicaset import REPLICATIONCONTROLLERS

    assert REPLICATIONCONTROLLER in register_controllers(cp, "replicationcontroller")
    await cp.start_component(REPLICATIONCONTROLLER)
    rc = await client.create(
        REPLICATIONCONTROLLERS,
        {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "old"},
            "spec": {
                "replicas": 2,
                "selector": {"app": "old"},
                "template": {
                    "metadata": {"labels": {"app": "old"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
        "default",
    )
    pods = await pods_of(client, "old", 2)
    ref = pods[0]["metadata"]["ownerReferences"][0]
    assert (ref["apiVersion"], ref["kind"], ref["uid"]) == (
        "v1",
        "ReplicationController",
        rc["metadata"]["uid"],
    )
    got = await wait_object(
        client,
        REPLICATIONCONTROLLERS,
        "old",
        "default",
        lambda o: (o or {}).get("status", {}).get("replicas") == 2,
    )
    assert got is not None and "terminatingReplicas" not in got["status"]
    assert got["status"]["fullyLabeledReplicas"] == 2
    await client.patch(REPLICATIONCONTROLLERS, "old", {"spec": {"replicas": 1}}, "default")
    await wait_for_list(
        client,
        PODS,
        "default",
        lambda items: len([p for p in items if not p["metadata"].get("deletionTimestamp")]) == 1,
        label_selector="app=old",
    )
