"""KEP-6413 proposal (gangplane's ``PodGroupRuntimeSatisfaction``, scheduler only): the
``PodGroupSatisfied`` condition follows a gang for its whole life — True while at least
``minCount`` members are scheduled, False when a member is lost, True again once it is replaced —
and the replacement policy of kubernetes#136334 (``PodGroupReplacementsScheduleFreely``) decides
whether a replacement must reach ``minCount`` again with the bound members (1.37) or, once the
gang was placed, schedules on its own.

Also the KEP-6277 Beta criterion "Specify and implement rolling-update semantics under a gang
policy (how a replacement pod rejoins an already-placed group …)": the replacement rejoins the
group that is already placed, under either policy.
"""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import NODES, PODGROUPS, PODS, STATEFULSETS
from controllers.manager import STATEFULSET
from featuregates import POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY, POD_GROUP_RUNTIME_SATISFACTION
from scheduler.podgroup_satisfaction import POD_GROUP_SATISFIED, REASON_NOT_SATISFIED, REASON_SATISFIED
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.kep6277_beta_support import bound, conditions, plane, wait_app_pods, with_cpu
from tests.integration.kep6277_support import (
    GANG,
    NS,
    start_statefulset_controller,
    sts_manifest,
    wait_single,
)
from tests.integration.scheduler_support import node, node_name

pytestmark = pytest.mark.anyio


def satisfied(status: str):  # noqa: ANN201
    def ok(pg: Obj | None) -> bool:
        c = conditions(pg).get(POD_GROUP_SATISFIED)
        return c is not None and c["status"] == status

    return ok


async def delete_and_wait_gone(client, names: list[str]) -> None:  # noqa: ANN001
    for n in names:
        await client.delete(PODS, n, NS, grace_period_seconds=0)
    await wait_for_list(
        client, PODS, NS, lambda items: not {p["metadata"]["name"] for p in items} & set(names), 20
    )


async def test_pod_group_satisfied_flips_false_when_a_member_is_lost_and_true_when_replaced() -> None:
    async with plane({POD_GROUP_RUNTIME_SATISFACTION: True}) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "4"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        name = (await wait_single(client, PODGROUPS))["metadata"]["name"]
        pg = await wait_for_object(client, PODGROUPS, name, NS, satisfied("True"), timeout=20)
        c = conditions(pg)[POD_GROUP_SATISFIED]
        assert (c["reason"], c["message"]) == (REASON_SATISFIED, "minCount (3) is satisfied: 3 scheduled")
        assert conditions(pg)["PodGroupInitiallyScheduled"]["status"] == "True"

        await cp.stop_component(STATEFULSET)  # hold the replacement back, to observe the loss
        await delete_and_wait_gone(client, ["db-1"])
        pg = await wait_for_object(client, PODGROUPS, name, NS, satisfied("False"), timeout=20)
        c = conditions(pg)[POD_GROUP_SATISFIED]
        assert (c["reason"], c["message"]) == (
            REASON_NOT_SATISFIED,
            "minCount (3) is not satisfied: 2 scheduled",
        )
        # the terminal condition does not move
        assert conditions(pg)["PodGroupInitiallyScheduled"]["status"] == "True"

        await start_statefulset_controller(cp)
        await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        assert await wait_for_object(client, PODGROUPS, name, NS, satisfied("True"), timeout=20) is not None


async def test_without_the_gate_no_pod_group_satisfied_condition() -> None:
    async with plane({}) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "4"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        name = (await wait_single(client, PODGROUPS))["metadata"]["name"]

        def initially(pg: Obj | None) -> bool:
            return (conditions(pg).get("PodGroupInitiallyScheduled") or {}).get("status") == "True"

        pg = await wait_for_object(client, PODGROUPS, name, NS, initially, timeout=20)
        assert POD_GROUP_SATISFIED not in conditions(pg)


@pytest.mark.parametrize("freely", [False, True], ids=["1.37-must-reach-min-count", "schedule-freely"])
async def test_replacement_policy(freely: bool) -> None:
    """Two of three members lost, room for one replacement: 1.37 binds none (1 bound + 1 that
    fits < minCount 3), "schedule freely" binds the one that fits."""
    gates = {POD_GROUP_RUNTIME_SATISFACTION: True, POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY: freely}
    async with plane(gates) as cp:
        client = cp.client("test")
        for n in ("n1", "n2", "n3"):
            await client.create(NODES, node(n, "1"))
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 3, GANG), "1"), NS)
        pods = await wait_app_pods(client, "db", lambda ps: len(bound(ps)) == 3)
        name = (await wait_single(client, PODGROUPS))["metadata"]["name"]
        await wait_for_object(client, PODGROUPS, name, NS, satisfied("True"), timeout=20)
        await cp.stop_component(STATEFULSET)
        on = {p["metadata"]["name"]: node_name(p) for p in pods}
        await client.patch(NODES, on["db-2"], {"spec": {"unschedulable": True}})  # its node is lost
        await delete_and_wait_gone(client, ["db-1", "db-2"])
        await wait_for_object(client, PODGROUPS, name, NS, satisfied("False"), timeout=20)
        await start_statefulset_controller(cp)

        def reported(ps: list[Obj]) -> bool:
            new = [p for p in ps if p["metadata"]["name"] in ("db-1", "db-2")]
            done = [
                p
                for p in new
                if node_name(p)
                or any(
                    c.get("type") == "PodScheduled" and c.get("status") == "False"
                    for c in (p.get("status") or {}).get("conditions") or []
                )
            ]
            return len(done) == 2

        after = await wait_app_pods(client, "db", reported)
        placed = sorted(p["metadata"]["name"] for p in bound(after))
        if freely:
            assert len(placed) == 2 and "db-0" in placed  # one replacement bound on its own
        else:
            assert placed == ["db-0"]  # the gang rule holds back the replacement that fits
            waiting = [p for p in after if not node_name(p)]
            msgs = {
                c.get("message")
                for p in waiting
                for c in p["status"].get("conditions") or []
                if c.get("type") == "PodScheduled"
            }
            assert any("minCount (3)" in (m or "") or "0/3 nodes are available" in (m or "") for m in msgs), (
                msgs
            )
        pg = await client.get(PODGROUPS, name, NS)
        assert conditions(pg)[POD_GROUP_SATISFIED]["status"] == "False"
        assert conditions(pg)["PodGroupInitiallyScheduled"]["status"] == "True"
