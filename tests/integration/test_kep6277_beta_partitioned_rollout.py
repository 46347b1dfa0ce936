"""KEP-6277 Beta criterion: "decide and implement rollingUpdate.partition support — without
splitting a StatefulSet across multiple PodGroups and without recreating pods to reassign
scheduling groups" — gangplane's ``StatefulSetWorkloadPartition`` gate.

A gang set of 4 with ``partition: 2`` rolls a new template: ordinals 2 and 3 are replaced by the
new revision and rejoin the group that is already placed (KEP-4671: scheduled members count), 0
and 1 keep running untouched (same UIDs, same nodes), and the set keeps its single Workload and
PodGroup, with every pod on the same ``podGroupName``. Moving the partition to 0 finishes the
rollout, still in the same PodGroup.
"""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import NODES, PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.statefulset import utils as su
from featuregates import STATEFULSET_WORKLOAD_PARTITION
from tests.helpers import wait_for_object
from tests.integration.kep6277_beta_support import bound, plane, wait_app_pods, with_cpu
from tests.integration.kep6277_support import GANG, NS, group_of, sts_manifest, wait_single
from tests.integration.scheduler_support import node, node_name

pytestmark = pytest.mark.anyio

NEW_IMAGE = {
    "spec": {
        "template": {"spec": {"containers": [{"name": "main", "image": "registry.k8s.io/nginx-slim:0.9"}]}}
    }
}
SMP = "application/strategic-merge-patch+json"


def ready(n: int):  # noqa: ANN201
    return lambda o: bool(o and (o.get("status") or {}).get("readyReplicas") == n)


async def test_partitioned_rollout_keeps_one_pod_group_and_its_placed_pods() -> None:
    async with plane({STATEFULSET_WORKLOAD_PARTITION: True}) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "8"))
        body = with_cpu(sts_manifest("db", 4, GANG), "1")
        body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
        await client.create(STATEFULSETS, body, NS)
        before = await wait_for_object(client, STATEFULSETS, "db", NS, ready(4), timeout=20)
        assert before is not None
        pods = {
            p["metadata"]["name"]: p
            for p in await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 4)
        }
        wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)

        await client.patch(STATEFULSETS, "db", NEW_IMAGE, NS, patch_type=SMP)

        def canary_done(o: Obj | None) -> bool:
            st = (o or {}).get("status") or {}
            return (
                st.get("updateRevision") != before["status"]["updateRevision"]
                and st.get("updatedReplicas") == 2
                and st.get("readyReplicas") == 4
            )

        canary = await wait_for_object(client, STATEFULSETS, "db", NS, canary_done, timeout=20)
        assert canary is not None
        after = {
            p["metadata"]["name"]: p
            for p in await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 4)
        }
        old_rev, new_rev = before["status"]["updateRevision"], canary["status"]["updateRevision"]
        for name in ("db-0", "db-1"):  # below the partition: untouched
            assert after[name]["metadata"]["uid"] == pods[name]["metadata"]["uid"]
            assert node_name(after[name]) == node_name(pods[name])
            assert after[name]["metadata"]["labels"][su.REVISION_LABEL] == old_rev
        for name in ("db-2", "db-3"):  # replaced, rejoined the placed group
            assert after[name]["metadata"]["uid"] != pods[name]["metadata"]["uid"]
            assert after[name]["metadata"]["labels"][su.REVISION_LABEL] == new_rev
        assert {group_of(p) for p in after.values()} == {pg["metadata"]["name"]}
        assert [o["metadata"]["uid"] for o in (await client.list(PODGROUPS, NS))["items"]] == [
            pg["metadata"]["uid"]
        ]
        assert [o["metadata"]["uid"] for o in (await client.list(WORKLOADS, NS))["items"]] == [
            wl["metadata"]["uid"]
        ]

        # finish the rollout by moving the partition: still the same PodGroup
        await client.patch(
            STATEFULSETS, "db", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}, NS
        )

        def rolled(o: Obj | None) -> bool:
            st = (o or {}).get("status") or {}
            return (
                st.get("currentRevision") == new_rev
                and st.get("updatedReplicas") == 4
                and st.get("readyReplicas") == 4
            )

        assert await wait_for_object(client, STATEFULSETS, "db", NS, rolled, timeout=20) is not None
        final = await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 4)
        assert {p["metadata"]["labels"][su.REVISION_LABEL] for p in final} == {new_rev}
        assert {group_of(p) for p in final} == {pg["metadata"]["name"]}
        got = await client.get(PODGROUPS, pg["metadata"]["name"], NS)
        assert got["metadata"]["uid"] == pg["metadata"]["uid"] and got["spec"] == pg["spec"]
