"""KEP-6277 Test Plan (integration) and "Feature Enablement and Rollback": "Feature gate disabled:
no Workload/PodGroup objects created, standard behavior preserved"; gate enabled for both
Parallel+Gang and OrderedReady+Basic; toggled off then on: existing objects discovered and reused,
no duplicates; toggled off: minCount no longer updated on scale (the documented
desynchronization), new pods without schedulingGroup; running pods unaffected by the toggle.

The gate is switched in the StatefulSet controller's own gate view
(``ControlPlaneOptions.component_gates``) and takes effect when the component restarts, as a
kube-controller-manager restart with a new ``--feature-gates`` would.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from controllers.manager import STATEFULSET
from controllers.statefulset.workload import WorkloadSchedulingHook
from controllers.testing import PodReadier
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import (
    BASIC,
    GANG,
    NS,
    FaultyClient,
    group_of,
    min_count,
    pod_groups,
    settled,
    start_statefulset_controller,
    sts_manifest,
    wait_min_count,
    wait_pods,
    wait_single,
    workloads,
)

pytestmark = pytest.mark.anyio
OFF = {"WorkloadWithStatefulSet": False}


async def restart(cp: ControlPlane, gates: dict[str, bool] | None, client: Any = None) -> Any:
    await cp.stop_component(STATEFULSET)
    if gates is None:
        cp.options.component_gates.pop(STATEFULSET, None)
    else:
        cp.options.component_gates[STATEFULSET] = gates
    return await start_statefulset_controller(cp, client)


async def test_gate_disabled_creates_nothing_and_keeps_standard_behaviour(
    cp: ControlPlane, client: Any
) -> None:
    cp.options.component_gates[STATEFULSET] = OFF
    fc = FaultyClient(cp.client(STATEFULSET))
    ctrl = await start_statefulset_controller(cp, fc)
    hook = ctrl.scheduling_hook
    assert isinstance(hook, WorkloadSchedulingHook) and not hook.enabled
    async with PodReadier(client, NS):
        await client.create(STATEFULSETS, sts_manifest("gang", 3, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("ordered", 2, BASIC, policy="OrderedReady"), NS)
        pods = [*await wait_pods(client, "gang", 3), *await wait_pods(client, "ordered", 2)]
    await settled(ctrl, client, "gang")
    assert await workloads(client) == [] and await pod_groups(client) == []
    assert all(group_of(p) is None and len(p["metadata"]["ownerReferences"]) == 1 for p in pods)
    # not even an informer: the controller never talks to these APIs
    assert not hook.wants(await client.get(STATEFULSETS, "gang", NS))
    assert "workloads" not in {w[1] for w in fc.writes}
    assert ctrl.informers.informers() and all(
        i.gvr not in (WORKLOADS, PODGROUPS) for i in ctrl.informers.informers()
    )


async def test_gate_enabled_creates_objects_for_gang_and_basic(cp: ControlPlane, client: Any) -> None:
    await start_statefulset_controller(cp)
    async with PodReadier(client, NS):
        await client.create(STATEFULSETS, sts_manifest("gang", 3, GANG), NS)
        await client.create(STATEFULSETS, sts_manifest("ordered", 2, BASIC, policy="OrderedReady"), NS)
        gang = await wait_pods(client, "gang", 3)
        ordered = await wait_pods(client, "ordered", 2)
    pgs = {pg["spec"]["workloadRef"]["templateName"]: pg for pg in await pod_groups(client)}
    assert pgs["gang"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert pgs["ordered"]["spec"]["schedulingPolicy"] == {"basic": {}}
    assert len(await workloads(client)) == 2
    assert {group_of(p) for p in gang} == {pgs["gang"]["metadata"]["name"]}
    assert {group_of(p) for p in ordered} == {pgs["ordered"]["metadata"]["name"]}


async def test_gate_toggled_off_then_on_reuses_the_objects(cp: ControlPlane, client: Any) -> None:
    await start_statefulset_controller(cp)
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)
    running = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await wait_pods(client, "db", 3)}
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)

    # off: the objects are left alone (not deleted, not updated); new pods are outside the group
    ctrl = await restart(cp, OFF)
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 5}}, NS)
    pods = await wait_pods(client, "db", 5)
    await settled(ctrl, client, "db")
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 3
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 3
    by_name = {p["metadata"]["name"]: p for p in pods}
    assert {n: by_name[n]["metadata"]["uid"] for n in running} == running  # running pods untouched
    assert [group_of(by_name[f"db-{i}"]) for i in range(5)] == [pg["metadata"]["name"]] * 3 + [None, None]

    # on again: discovered by reference and reused, minCount re-synced, nothing duplicated
    fc = FaultyClient(cp.client(STATEFULSET))
    await restart(cp, None, fc)
    await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], 5)
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 5)
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]
    assert not [w for w in fc.writes if w[0] == "create" and w[1] in ("workloads", "podgroups")]
    await client.patch(STATEFULSETS, "db", {"spec": {"replicas": 6}}, NS)
    pods = await wait_pods(client, "db", 6)
    assert group_of(next(p for p in pods if p["metadata"]["name"] == "db-5")) == pg["metadata"]["name"]
    assert {
        p["metadata"]["name"]: p["metadata"]["uid"] for p in pods if p["metadata"]["name"] in running
    } == running
