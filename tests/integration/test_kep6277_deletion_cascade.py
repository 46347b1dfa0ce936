"""KEP-6277 Test Plan (integration): "StatefulSet deletion cascades to Workload, PodGroup, and Pod
deletion via OwnerReference", and its BYO case: with a user-created Workload the controller-created
PodGroup has no ownerReference to that Workload, so deleting the set collects the pods and the
PodGroup while the Workload (never adopted) stays.

The StatefulSet controller never deletes these objects itself; the garbage collector and the
PodGroup protection controller (both as ``gangplane serve`` runs them) do. Pods are owned by the
StatefulSet and the PodGroup, and the PodGroup's protection finalizer waits for those pods; the
cascade finishes because the collector counts an owner being deleted in the background as going
away (see ``kep6277_support.CASCADE_TIMEOUT``).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS, WORKLOADS
from controllers.manager import GARBAGE_COLLECTOR, PODGROUP_PROTECTION, STATEFULSET, register_controllers
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.kep6277_support import (
    CASCADE_TIMEOUT,
    GANG,
    NS,
    gang_template,
    sts_controller_ref,
    sts_manifest,
    wait_pods,
    wait_single,
    workload_manifest,
)

pytestmark = pytest.mark.anyio


async def start(cp: ControlPlane) -> None:
    register_controllers(cp, "statefulset,garbagecollector,podgroup-protection")
    for name in (GARBAGE_COLLECTOR, PODGROUP_PROTECTION, STATEFULSET):
        await cp.start_component(name)


async def test_deleting_the_statefulset_collects_the_workload_and_deletes_the_pod_group(
    cp: ControlPlane, client: Any
) -> None:
    await start(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await wait_pods(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    await client.delete(STATEFULSETS, "db", NS)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items)
    got = await wait_for_object(
        client,
        PODGROUPS,
        pg["metadata"]["name"],
        NS,
        lambda o: o is None or bool(o["metadata"].get("deletionTimestamp")),
    )
    assert got is None or got["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]


async def test_a_statefulset_scaled_to_zero_is_collected_completely(cp: ControlPlane, client: Any) -> None:
    await start(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await wait_pods(client, "db", 3)
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 0}}, NS)
    await wait_pods(client, "db", 0)
    await client.delete(STATEFULSETS, "db", NS)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items)


async def test_deleting_the_statefulset_cascades_to_workload_pod_group_and_pods(
    cp: ControlPlane, client: Any
) -> None:
    await start(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await wait_pods(client, "db", 3)
    await wait_single(client, PODGROUPS)
    await client.delete(STATEFULSETS, "db", NS)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_object(client, STATEFULSETS, "db", NS, lambda o: o is None, timeout=CASCADE_TIMEOUT)


async def test_with_a_user_workload_deleting_the_statefulset_collects_pods_and_pod_group_not_the_workload(
    cp: ControlPlane, client: Any
) -> None:
    wl = await client.create(
        WORKLOADS, workload_manifest("user-wl", sts_controller_ref("db"), [gang_template("db", 3)]), NS
    )
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    await start(cp)
    await wait_pods(client, "db", 3)
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["workloadRef"]["workloadName"] == "user-wl"
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["StatefulSet"]
    await client.delete(STATEFULSETS, "db", NS)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_object(client, STATEFULSETS, "db", NS, lambda o: o is None, timeout=CASCADE_TIMEOUT)
    kept = await client.get(WORKLOADS, "user-wl", NS)
    assert kept["metadata"]["uid"] == wl["metadata"]["uid"]
    assert kept["metadata"]["resourceVersion"] == wl["metadata"]["resourceVersion"]
