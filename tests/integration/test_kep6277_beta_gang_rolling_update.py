"""KEP-6277 Beta criterion: "Specify and implement rolling-update semantics under a gang policy
(how a replacement pod rejoins an already-placed group, and what happens when the new revision
does not fit)" — gangplane's ``StatefulSetWorkloadGangRollingUpdate`` — and the StatefulSet
condition the KEP calls "worth considering for Beta" (``StatefulSetWorkloadStatusCondition``).

A gang of 3 one-CPU members fills a 3-CPU node. The new revision asks for 2 CPUs: the rollout
replaces db-2, whose replacement cannot fit beside the two members still bound. What a user sees:
the pod Pending/Unschedulable, the StatefulSet's status stuck at 1 updated / 2 ready with the old
currentRevision, a ``ReplacementUnschedulable`` Warning on the StatefulSet, ``PodGroupSatisfied``
False on the PodGroup and ``PodGroupScheduled`` False on the StatefulSet. Reverting the template
finishes without manual clean-up: no deadlock.
"""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import EVENTS, NODES, PODGROUPS, STATEFULSETS
from controllers.statefulset.workload_beta import POD_GROUP_SCHEDULED, REPLACEMENT_UNSCHEDULABLE
from featuregates import (
    POD_GROUP_RUNTIME_SATISFACTION,
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE,
    STATEFULSET_WORKLOAD_STATUS_CONDITION,
)
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.kep6277_beta_support import bound, conditions, plane, wait_app_pods, with_cpu
from tests.integration.kep6277_support import GANG, NS, group_of, sts_manifest, wait_single
from tests.integration.scheduler_support import node

pytestmark = pytest.mark.anyio

ALL = {
    STATEFULSET_WORKLOAD_GANG_ROLLING_UPDATE: True,
    STATEFULSET_WORKLOAD_STATUS_CONDITION: True,
    POD_GROUP_RUNTIME_SATISFACTION: True,
}
SMP = "application/strategic-merge-patch+json"


def cpu_patch(cpu: str) -> Obj:
    return {
        "spec": {
            "template": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": cpu}}}]}}
        }
    }


def sts_condition(status: str, reason: str = ""):  # noqa: ANN201
    def ok(o: Obj | None) -> bool:
        c = conditions(o).get(POD_GROUP_SCHEDULED)
        return c is not None and c["status"] == status and (not reason or c["reason"] == reason)

    return ok


async def test_a_new_revision_that_does_not_fit_stalls_visibly_and_rolls_back() -> None:
    async with plane(ALL) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "3"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        pg_name = (await wait_single(client, PODGROUPS))["metadata"]["name"]
        before = await wait_for_object(
            client, STATEFULSETS, "db", NS, sts_condition("True", "MinCountSatisfied"), timeout=20
        )
        assert before is not None
        c = conditions(before)[POD_GROUP_SCHEDULED]
        assert (
            c["message"]
            == f"PodGroup {pg_name}: PodGroupSatisfied=True: minCount (3) is satisfied: 3 scheduled"
        )

        await client.patch(STATEFULSETS, "db", cpu_patch("2"), NS, patch_type=SMP)

        def stalled(o: Obj | None) -> bool:
            st = (o or {}).get("status") or {}
            return (
                st.get("updateRevision") != before["status"]["currentRevision"]
                and st.get("updatedReplicas") == 1
                and st.get("readyReplicas") == 2
                and sts_condition("False", "MinCountNotSatisfied")(o)
            )

        got = await wait_for_object(client, STATEFULSETS, "db", NS, stalled, timeout=20)
        assert got is not None and got["status"]["currentRevision"] == before["status"]["currentRevision"]
        pg = await client.get(PODGROUPS, pg_name, NS)
        assert conditions(pg)["PodGroupSatisfied"]["status"] == "False"
        assert conditions(pg)["PodGroupInitiallyScheduled"]["status"] == "True"  # terminal, unchanged

        def warned(items: list[Obj]) -> bool:
            return any(
                e.get("reason") == REPLACEMENT_UNSCHEDULABLE and e["involvedObject"].get("name") == "db"
                for e in items
            )

        events = await wait_for_list(client, EVENTS, NS, warned, 20)
        ev = next(e for e in events if e.get("reason") == REPLACEMENT_UNSCHEDULABLE)
        assert ev["type"] == "Warning"
        assert ev["message"].startswith(
            f"Pod db-2 of revision {got['status']['updateRevision']} cannot join PodGroup {pg_name}: "
        )
        assert ev["message"].endswith(
            "the rolling update of StatefulSet db waits for it (revert the template to roll back)"
        )

        # roll back: the stuck replacement is replaced by the old revision, the gang is whole again
        await client.patch(STATEFULSETS, "db", cpu_patch("1"), NS, patch_type=SMP)

        def recovered(o: Obj | None) -> bool:
            st = (o or {}).get("status") or {}
            return (
                st.get("readyReplicas") == 3
                and st.get("currentRevision") == st.get("updateRevision")
                and sts_condition("True")(o)
            )

        assert await wait_for_object(client, STATEFULSETS, "db", NS, recovered, timeout=30) is not None
        pods = await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        assert {group_of(p) for p in pods} == {pg_name}


async def test_condition_mirrors_initially_scheduled_without_the_runtime_gate() -> None:
    async with plane({STATEFULSET_WORKLOAD_STATUS_CONDITION: True}) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "3"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        got = await wait_for_object(
            client, STATEFULSETS, "db", NS, sts_condition("True", "Scheduled"), timeout=20
        )
        c = conditions(got)[POD_GROUP_SCHEDULED]
        assert c["message"].endswith(": PodGroupInitiallyScheduled=True")


async def test_gates_off_the_statefulset_has_no_condition_and_no_event() -> None:
    async with plane({}) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "3"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        got = await wait_for_object(
            client,
            STATEFULSETS,
            "db",
            NS,
            lambda o: ((o or {}).get("status") or {}).get("readyReplicas") == 3,
            timeout=20,
        )
        assert "conditions" not in got["status"]
