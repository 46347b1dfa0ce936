"""KEP-6277 Test Plan (integration): "Rolling update (partition: 0) keeps the same PodGroup; pods
are recreated with the same podGroupName".

A fake kubelet marks pods Running and Ready so the rollout proceeds (no scheduler runs).
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET, register_controllers
from controllers.statefulset import utils as su
from controllers.testing import PodReadier
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_object
from tests.integration.kep6277_support import (
    BASIC,
    GANG,
    NS,
    group_of,
    pod_groups,
    sts_manifest,
    wait_pods,
    wait_single,
    workloads,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("scheduling", "policy"),
    [(GANG, "Parallel"), (BASIC, "OrderedReady")],
    ids=["gang-parallel", "basic-ordered"],
)
async def test_rolling_update_keeps_the_pod_group(
    cp: ControlPlane, client: Any, scheduling: Any, policy: str
) -> None:
    register_controllers(cp, "statefulset")
    await cp.start_component(STATEFULSET)
    body = sts_manifest("db", 3, scheduling, policy=policy)
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    async with PodReadier(client, NS):
        await client.create(STATEFULSETS, body, NS)
        before = await wait_for_object(
            client,
            STATEFULSETS,
            "db",
            NS,
            lambda o: bool(o and o.get("status", {}).get("readyReplicas") == 3),
        )
        assert before is not None
        old_pods = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await wait_pods(client, "db", 3)}
        wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
        await client.patch(
            STATEFULSETS,
            "db",
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/nginx-slim:0.9"}]}
                    }
                }
            },
            NS,
            patch_type="application/strategic-merge-patch+json",
        )
        done = await wait_for_object(
            client,
            STATEFULSETS,
            "db",
            NS,
            lambda o: bool(
                o
                and o["status"].get("updateRevision") != before["status"]["updateRevision"]
                and o["status"].get("currentRevision") == o["status"].get("updateRevision")
                and o["status"].get("readyReplicas") == 3
            ),
            timeout=20,
        )
        assert done is not None
    pods = await wait_pods(client, "db", 3)
    assert all(p["metadata"]["uid"] != old_pods[p["metadata"]["name"]] for p in pods)  # all recreated
    assert {p["metadata"]["labels"][su.REVISION_LABEL] for p in pods} == {done["status"]["updateRevision"]}
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert (await client.get(PODGROUPS, pg["metadata"]["name"], NS))["spec"] == pg["spec"]
