"""KEP-6277 Test Plan (integration): "A StatefulSet composed by a parent controller (parent-owned
Workload + downward-mapping annotations) gets a PodGroup attached to the parent's
CompositePodGroup, and the StatefulSet controller creates no Workload of its own".

The test plays the parent controller (a LeaderWorkerSet-like owner): it creates the Workload
with a CompositePodGroupTemplate, one CompositePodGroup instance per group, and the child
StatefulSets carrying ``scheduling.k8s.io/group-template-name`` and
``scheduling.k8s.io/parent-compositepodgroup``.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import COMPOSITEPODGROUPS, PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import (
    GANG,
    NS,
    PARENT_KIND,
    delegation_annotations,
    gang_template,
    group_of,
    parent_ref,
    sts_manifest,
    sts_owner,
    wait_pods,
    workload_manifest,
    workloads,
)

pytestmark = pytest.mark.anyio


def composite_group(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "workloadRef": {"workloadName": "lws", "templateName": "replica"},
            "schedulingPolicy": {"gang": {"minGroupCount": 1}},
        },
    }


async def test_children_attach_their_pod_groups_to_the_parent_composite_pod_groups(
    cp: ControlPlane, client: Any
) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    template = {
        "name": "replica",
        "schedulingPolicy": {"gang": {"minGroupCount": 1}},
        "podGroupTemplates": [gang_template("workers", 3)],
    }
    ref = {"apiGroup": "leaderworkerset.x-k8s.io", "kind": PARENT_KIND, "name": "lws"}
    parent_wl = await client.create(WORKLOADS, workload_manifest("lws", ref, composite=[template]), NS)
    children = {}
    for i in range(2):
        await client.create(COMPOSITEPODGROUPS, composite_group(f"lws-{i}"), NS)
        ann = delegation_annotations("workers", f"lws-{i}")
        children[i] = await client.create(
            STATEFULSETS, sts_manifest(f"lws-{i}", 3, GANG, annotations=ann, owner=parent_ref()), NS
        )
    groups = await wait_for_list(client, PODGROUPS, NS, lambda items: len(items) == 2)
    by_parent = {g["spec"]["parentCompositePodGroupName"]: g for g in groups}
    assert set(by_parent) == {"lws-0", "lws-1"}
    for i, sts in children.items():
        pg = by_parent[f"lws-{i}"]
        assert pg["spec"]["workloadRef"] == {"workloadName": "lws", "templateName": "workers"}
        assert pg["metadata"]["ownerReferences"] == [
            sts_owner(sts)
        ]  # nothing points at the parent's Workload
        pods = await wait_pods(client, f"lws-{i}", 3)
        assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    # the StatefulSet controller created no Workload of its own
    assert [w["metadata"]["uid"] for w in await workloads(client)] == [parent_wl["metadata"]["uid"]]
