"""KEP-6277 Beta criterion: "Support user-configurable gang.minCount to allow partial-gang
semantics (minCount < replicas), enabling use cases like quorum-based systems that can start with
a subset of replicas; relax the field-level immutability accordingly" — gangplane's
``StatefulSetWorkloadUserMinCount`` gate.

The KEP's example (Scale Lifecycle, "Note on Alpha behavior"): replicas 5 with minCount 3 starts
as soon as 3 members fit; scaling to 7 keeps minCount 3; a changed minCount flows to the Workload
template and the PodGroup in place; removing it returns to the replica-derived value.
"""

from __future__ import annotations

import pytest

from apiserver.client.interface import NODES, PODGROUPS, STATEFULSETS, WORKLOADS
from featuregates import STATEFULSET_WORKLOAD_USER_MIN_COUNT
from tests.integration.kep6277_beta_support import (
    bound,
    pending_reported,
    plane,
    wait_app_pods,
    with_cpu,
)
from tests.integration.kep6277_support import (
    NS,
    min_count,
    sts_manifest,
    wait_min_count,
    wait_single,
)
from tests.integration.scheduler_support import node

pytestmark = pytest.mark.anyio

GATES = {STATEFULSET_WORKLOAD_USER_MIN_COUNT: True}


def gang(count: int | None) -> dict:
    return {"schedulingPolicy": {"gang": {} if count is None else {"minCount": count}}}


async def test_partial_gang_starts_with_min_count_members_and_scale_keeps_it() -> None:
    async with plane(GATES) as cp:
        client = cp.client("test")
        await client.create(NODES, node("n1", "3"))  # room for 3 one-CPU members only
        await client.create(STATEFULSETS, with_cpu(sts_manifest("db", 5, gang(3)), "1"), NS)
        pods = await wait_app_pods(
            client, "db", lambda ps: len(bound(ps)) == 3 and len(pending_reported(ps)) == 2
        )
        assert len(pods) == 5
        wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
        assert min_count(wl) == 3 and min_count(pg) == 3

        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 7}}, NS)
        await wait_app_pods(client, "db", lambda ps: len(ps) == 7)
        # the controller syncs minCount before it creates pods: 7 pods means the sync is done
        assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 3
        assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 3
        sts = await client.get(STATEFULSETS, "db", NS)
        assert sts["spec"]["scheduling"] == gang(3)


async def test_min_count_changes_in_place_and_removal_returns_to_derived() -> None:
    async with plane(GATES, scheduler=False) as cp:
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("db", 5, gang(3)), NS)
        wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
        await client.patch(
            STATEFULSETS, "db", {"spec": {"scheduling": {"schedulingPolicy": {"gang": {"minCount": 4}}}}}, NS
        )
        await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], 4)
        await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 4)
        await client.patch(
            STATEFULSETS,
            "db",
            {"spec": {"scheduling": {"schedulingPolicy": {"gang": {"minCount": None}}}}},
            NS,
        )
        await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], 5)
        got = await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 5)
        # in place: the same objects, never recreated
        assert got["metadata"]["uid"] == pg["metadata"]["uid"]
        assert [w["metadata"]["uid"] for w in (await client.list(WORKLOADS, NS))["items"]] == [
            wl["metadata"]["uid"]
        ]
        # derived again: scaling follows replicas
        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 2}}, NS)
        await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 2)


async def test_scale_below_a_user_min_count_is_rejected_naming_the_field() -> None:
    async with plane(GATES, scheduler=False) as cp:
        client = cp.client("test")
        await client.create(STATEFULSETS, sts_manifest("db", 5, gang(3)), NS)
        with pytest.raises(Exception) as e:
            await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 2}}, NS)
        assert getattr(e.value, "code", None) == 422
        assert (
            "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must be less than or equal to spec.replicas (2)"
            in str(e.value)
        )
        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 0}}, NS)  # scale to zero stays allowed
