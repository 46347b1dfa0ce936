"""KEP-6277 Test Plan (integration): "A StatefulSet owned by a controller that does not set the
downward-mapping annotation creates its own Workload and PodGroup".

A parent ownerReference alone is not delegation (KEP-6277 Notes 8): the StatefulSet compiles its
own ``spec.scheduling`` even when the parent has a Workload of its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import (
    GANG,
    NS,
    PARENT_KIND,
    gang_template,
    group_of,
    min_count,
    parent_ref,
    sts_controller_ref,
    sts_manifest,
    sts_owner,
    wait_pods,
    wait_single,
    workload_manifest,
)

pytestmark = pytest.mark.anyio


async def test_owner_without_annotation_gets_own_workload_and_pod_group(
    cp: ControlPlane, client: Any
) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    ref = {"apiGroup": "leaderworkerset.x-k8s.io", "kind": PARENT_KIND, "name": "lws"}
    await client.create(WORKLOADS, workload_manifest("lws", ref, [gang_template("workers", 2)]), NS)
    sts = await client.create(STATEFULSETS, sts_manifest("db", 4, GANG, owner=parent_ref()), NS)
    pods = await wait_pods(client, "db", 4)
    wls = await wait_for_list(client, WORKLOADS, NS, lambda items: len(items) == 2)
    own = next(w for w in wls if w["spec"]["controllerRef"] == sts_controller_ref("db"))
    assert own["metadata"]["ownerReferences"] == [sts_owner(sts)]
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["workloadRef"] == {"workloadName": own["metadata"]["name"], "templateName": "db"}
    assert min_count(pg) == 4  # from replicas, not from the parent's template
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
