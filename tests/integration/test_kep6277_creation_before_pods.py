"""KEP-6277 Test Plan (integration): "StatefulSet controller creates Workload and PodGroup before
pods; pods reference PodGroup correctly".

Observed from the API's side: one watch per kind from the same resourceVersion, and the order of
the creations read off the resourceVersions the API server stamped (a single counter here, as
etcd's revision is in kube).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import GVR, PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import BASIC, GANG, NS, group_of, sts_manifest, wait_pods

pytestmark = pytest.mark.anyio


async def first_added(client: Any, gvr: GVR, rv: str, n: int, label: str = "") -> list[Obj]:
    """The first ``n`` objects ADDED to ``gvr`` after ``rv``."""
    out: list[Obj] = []
    async for ev in client.watch(gvr, NS, resource_version=rv, label_selector=label):
        if ev.type == "ADDED":
            out.append(ev.object)
            if len(out) == n:
                return out
    raise AssertionError("watch ended")


@pytest.mark.parametrize(
    ("scheduling", "policy"),
    [(GANG, "Parallel"), (BASIC, "OrderedReady")],
    ids=["gang-parallel", "basic-ordered"],
)
async def test_workload_then_pod_group_then_pods(
    cp: ControlPlane, client: Any, scheduling: Any, policy: str
) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    rv = (await client.list(PODS, NS))["metadata"]["resourceVersion"]
    watches = [
        asyncio.create_task(first_added(client, WORKLOADS, rv, 1)),
        asyncio.create_task(first_added(client, PODGROUPS, rv, 1)),
        asyncio.create_task(first_added(client, PODS, rv, 1, "app=db")),
    ]
    await client.create(STATEFULSETS, sts_manifest("db", 3, scheduling, policy=policy), NS)
    (wl,), (pg,), (pod,) = await asyncio.wait_for(asyncio.gather(*watches), 10)
    order = [int(o["metadata"]["resourceVersion"]) for o in (wl, pg, pod)]
    assert order == sorted(order), "Workload, then PodGroup, then the first pod"
    assert pg["spec"]["workloadRef"] == {"workloadName": wl["metadata"]["name"], "templateName": "db"}
    assert group_of(pod) == pg["metadata"]["name"]
    if policy == "OrderedReady":
        return  # one pod at a time, each waiting for Ready: the first one tells it all
    pods = await wait_pods(client, "db", 3)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    for p in pods:
        assert {
            "kind": "PodGroup",
            "name": pg["metadata"]["name"],
            "uid": pg["metadata"]["uid"],
        }.items() <= next(r for r in p["metadata"]["ownerReferences"] if r["kind"] == "PodGroup").items()
