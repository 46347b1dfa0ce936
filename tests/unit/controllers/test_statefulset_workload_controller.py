"""KEP-6277 Test Plan, "Unit tests — pkg/controller/statefulset": one test per bullet.

Each test drives the in-process control plane with the StatefulSet controller (and its KEP-6277
hook) running — plus the garbage collector and the PodGroup protection controller where deletion
is involved. The controller talks to the API through :class:`FaultyClient`, which logs every
write in order (so "before" can be asserted) and fails chosen calls on demand. No scheduler or
node agent runs: Parallel sets need no readiness, and where a test needs Ready pods it plays the
kubelet by writing pod status. Nothing sleeps: every wait is a watch or the controller's idle
signal, bounded by a timeout.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import (
    COMPOSITEPODGROUPS,
    EVENTS,
    PODGROUPS,
    PODS,
    PRIORITYCLASSES,
    STATEFULSETS,
    WORKLOADS,
)
from apiserver.workloadbuilder import pod_group_name, workload_name
from controllers.manager import GARBAGE_COLLECTOR, PODGROUP_PROTECTION, STATEFULSET, register_controllers
from controllers.statefulset import NoopSchedulingHook, StatefulSetController
from controllers.statefulset import utils as su
from controllers.statefulset.workload import WorkloadSchedulingHook, new_scheduling_hook
from controllers.statefulset.workload_utils import MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE
from controllers.testing import PodReadier, observed
from gangplane.controlplane import ControlPlane
from tests.helpers import wait_for_list, wait_for_object
from tests.integration.kep6277_support import (
    BASIC,
    CASCADE_TIMEOUT,
    GANG,
    NS,
    PARENT_KIND,
    FaultyClient,
    delegation_annotations,
    events_of,
    gang_template,
    group_of,
    min_count,
    parent_ref,
    pod_group_manifest,
    pod_groups,
    settled,
    start_statefulset_controller,
    sts_controller_ref,
    sts_manifest,
    sts_owner,
    wait_min_count,
    wait_pods,
    wait_single,
    workload_manifest,
    workloads,
)

pytestmark = pytest.mark.anyio

FINALIZER = "scheduling.k8s.io/podgroup-protection"
CLAIM = {"name": "shared", "resourceClaimTemplateName": "shared-accelerator"}


@pytest.fixture
def fc(cp: ControlPlane) -> FaultyClient:
    """The StatefulSet controller's client: logs writes, fails calls on demand."""
    return FaultyClient(cp.client(STATEFULSET))


async def start(cp: ControlPlane, fc: FaultyClient) -> StatefulSetController:
    return await start_statefulset_controller(cp, fc)


@pytest.fixture
async def ctrl(cp: ControlPlane, fc: FaultyClient) -> AsyncIterator[StatefulSetController]:
    yield await start(cp, fc)


async def start_gc(cp: ControlPlane) -> None:
    register_controllers(cp, "garbagecollector,podgroup-protection")
    await cp.start_component(GARBAGE_COLLECTOR)
    await cp.start_component(PODGROUP_PROTECTION)


async def scale(client: Any, name: str, replicas: int) -> None:
    await client.patch(STATEFULSETS, name, {"spec": {"replicas": replicas}}, NS)


def reasons(evs: list[tuple[str, str, str]]) -> set[tuple[str, str]]:
    return {(t, r) for t, r, _ in evs}


# ---------------------------------------------------------------------------------- creation
async def test_workload_and_pod_group_are_created_before_pods(
    client: Any, fc: FaultyClient, ctrl: Any
) -> None:
    """Workload and PodGroup are created before pods when spec.scheduling is non-nil."""
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    pods = await wait_pods(client, "web", 3)
    wl_at, pg_at = fc.index("create", "workloads"), fc.index("create", "podgroups")
    first_pod = min(fc.index("create", "pods", p["metadata"]["name"]) for p in pods)
    assert 0 <= wl_at < pg_at < first_pod
    assert [w for w in fc.writes if w[0] == "create" and w[1] in ("workloads", "podgroups")] == [
        ("create", "workloads", fc.writes[wl_at][2]),
        ("create", "podgroups", fc.writes[pg_at][2]),
    ]
    evs = await events_of(ctrl, client)
    assert {("Normal", "WorkloadCreated"), ("Normal", "PodGroupCreated")} <= reasons(evs)


async def test_nothing_is_created_when_scheduling_is_nil(client: Any, fc: FaultyClient, ctrl: Any) -> None:
    """Neither Workload nor PodGroup is created when spec.scheduling is nil."""
    await client.create(STATEFULSETS, sts_manifest("web", 3), NS)
    pods = await wait_pods(client, "web", 3)
    await settled(ctrl, client, "web")
    assert await workloads(client) == [] and await pod_groups(client) == []
    assert all(group_of(p) is None for p in pods)
    assert all(len(p["metadata"]["ownerReferences"]) == 1 for p in pods)
    assert not [w for w in fc.writes if w[1] in ("workloads", "podgroups")]
    # The hook's informers list and watch once at start; no sync ever reads or writes these kinds.
    assert fc.index("create", "workloads") == -1


async def test_statefulset_without_scheduling_costs_no_extra_api_calls(cp: ControlPlane, client: Any) -> None:
    """Neither Workload nor PodGroup is created when spec.scheduling is nil — and the sync makes
    exactly the API calls it makes without the KEP-6277 hook (KEP-6277 SLO: "StatefulSets without
    spec.scheduling see no change")."""

    async def run(hook: Any, name: str) -> tuple[int, int, WorkloadSchedulingHook | Any]:
        lc = FaultyClient(cp.client(f"{STATEFULSET}-{name}"))  # counts every call but Events'
        c = StatefulSetController(lc, clock=cp.clock, scheduling_hook=hook)
        c.informers.start()  # informers only: the test calls sync itself, no worker races it
        await c.informers.wait_for_sync()
        await client.create(STATEFULSETS, sts_manifest(name, 3), NS)
        await observed(c.sets, f"{NS}/{name}", lambda o: o is not None)
        before = sum(lc.verbs.values())
        await c.sync(f"{NS}/{name}")
        first = sum(lc.verbs.values()) - before
        for i in range(3):
            await observed(c.pods, f"{NS}/{name}-{i}", lambda o: o is not None)
        await observed(c.sets, f"{NS}/{name}", lambda o: bool(o and o.get("status")))
        before = sum(lc.verbs.values())
        await c.sync(f"{NS}/{name}")
        steady = sum(lc.verbs.values()) - before
        await c.stop()
        return first, steady, hook

    hook = new_scheduling_hook(cp.context_for(STATEFULSET))
    with_hook = await run(hook, "with")
    without = await run(NoopSchedulingHook(), "without")
    assert with_hook[:2] == without[:2]
    assert with_hook[0] == 5  # a ControllerRevision, three pods and one status write
    assert not hook.wants(await client.get(STATEFULSETS, "with", NS))


async def test_field_mapping(client: Any, ctrl: Any) -> None:
    """Correct field mapping from StatefulSet fields to Workload/PodGroup fields."""
    await client.create(
        PRIORITYCLASSES,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
    )
    sched = {
        "schedulingPolicy": {"gang": {}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
        "disruptionMode": {"all": {}},
        "resourceClaims": [CLAIM],
    }
    body = sts_manifest("my-db", 3, sched)
    body["spec"]["template"]["spec"]["priorityClassName"] = "high"
    sts = await client.create(STATEFULSETS, body, NS)
    await wait_pods(client, "my-db", 3)
    wl = await wait_single(client, WORKLOADS)
    pg = await wait_single(client, PODGROUPS)
    assert wl["metadata"]["name"] == workload_name("my-db", sts["metadata"]["uid"])
    assert wl["spec"] == {
        "controllerRef": {"apiGroup": "apps", "kind": "StatefulSet", "name": "my-db"},
        "podGroupTemplates": [
            {
                "name": "my-db",
                "schedulingPolicy": {"gang": {"minCount": 3}},
                "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
                "disruptionMode": {"all": {}},
                "priorityClassName": "high",
                "resourceClaims": [CLAIM],
            }
        ],
    }
    assert pg["metadata"]["name"] == pod_group_name(wl["metadata"]["name"], "my-db")
    assert pg["spec"] == {
        "workloadRef": {"workloadName": wl["metadata"]["name"], "templateName": "my-db"},
        "schedulingPolicy": {"gang": {"minCount": 3}},
        "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
        "disruptionMode": {"all": {}},
        "priorityClassName": "high",
        "priority": 1000,
        "resourceClaims": [CLAIM],
    }


async def test_empty_scheduling_resolves_to_basic(client: Any, ctrl: Any) -> None:
    """scheduling: {} resolves to a Basic PodGroup with no constraints, disruption mode, or claims."""
    await client.create(STATEFULSETS, sts_manifest("web", 2, {}, policy="OrderedReady"), NS)
    wl = await wait_single(client, WORKLOADS)
    pg = await wait_single(client, PODGROUPS)
    assert wl["spec"]["podGroupTemplates"] == [{"name": "web", "schedulingPolicy": {"basic": {}}}]
    # the API defaults a PodGroup's disruptionMode to single (1.37); nothing else is set
    assert {k: v for k, v in pg["spec"].items() if k not in ("workloadRef", "priority")} == {
        "schedulingPolicy": {"basic": {}},
        "disruptionMode": {"single": {}},
    }
    pods = await wait_pods(client, "web", 1)
    assert group_of(pods[0]) == pg["metadata"]["name"]


@pytest.mark.parametrize(
    ("policy", "mode"),
    [({"basic": {}}, {"single": {}}), ({"gang": {}}, {"single": {}}), ({"gang": {}}, {"all": {}})],
    ids=["basic-single", "gang-single", "gang-all"],
)
async def test_disruption_mode_and_topology_pass_through_for_basic_and_gang(
    client: Any, ctrl: Any, policy: Obj, mode: Obj
) -> None:
    """disruptionMode and schedulingConstraints.topology are passed through to the PodGroup
    unchanged for both Basic and Gang policies."""
    topology = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
    sched = {"schedulingPolicy": policy, "schedulingConstraints": topology, "disruptionMode": mode}
    await client.create(STATEFULSETS, sts_manifest("web", 2, sched), NS)
    pg = await wait_single(client, PODGROUPS)
    wl = await wait_single(client, WORKLOADS)
    for holder in (pg["spec"], wl["spec"]["podGroupTemplates"][0]):
        assert holder["schedulingConstraints"] == topology
        assert holder["disruptionMode"] == mode
        assert set(holder["schedulingPolicy"]) == set(policy)


async def test_pods_receive_pod_group_name(client: Any, ctrl: Any) -> None:
    """Pods receive correct spec.schedulingGroup.podGroupName references."""
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    pods = await wait_pods(client, "web", 3)
    pg = await wait_single(client, PODGROUPS)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    await scale(client, "web", 4)
    pods = await wait_pods(client, "web", 4)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}


# ---------------------------------------------------------------------------------- scale
async def test_min_count_updated_in_place_and_a_failure_between_updates_is_retried(
    client: Any, fc: FaultyClient, ctrl: Any
) -> None:
    """The controller-owned Workload template and PodGroup minCount are both updated in-place on
    replica scaling; a failure between updates is retried on the next sync."""
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    fc.fail("patch", PODGROUPS, times=1)  # the Workload update lands, the PodGroup update fails once
    mark = len(fc.writes)
    await scale(client, "web", 5)
    await wait_pods(client, "web", 5)
    wl2 = await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], 5)
    pg2 = await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 5)
    assert (wl2["metadata"]["uid"], pg2["metadata"]["uid"]) == (wl["metadata"]["uid"], pg["metadata"]["uid"])
    log = fc.writes[mark:]
    wl_patch = log.index(("patch", "workloads", wl["metadata"]["name"]))
    pg_patches = [i for i, w in enumerate(log) if w == ("patch", "podgroups", pg["metadata"]["name"])]
    new_pods = [log.index(("create", "pods", f"web-{i}")) for i in (3, 4)]
    assert fc.failures == 1 and len(pg_patches) >= 2
    assert wl_patch < pg_patches[0] < pg_patches[1] < min(new_pods)
    assert fc.index("create", "workloads") == fc.index("create", "workloads", wl["metadata"]["name"])
    assert len(await workloads(client)) == 1 and len(await pod_groups(client)) == 1


async def test_scale_down_lowers_both_before_deleting_pods_and_a_failed_update_blocks_deletion(
    client: Any, fc: FaultyClient, ctrl: Any
) -> None:
    """Scale-down lowers both minCount values before deleting pods; a failed update prevents pod
    deletion until the controller retries successfully."""
    await client.create(STATEFULSETS, sts_manifest("web", 5, GANG), NS)
    await wait_pods(client, "web", 5)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    fc.fail("patch", PODGROUPS, times=None)
    mark = len(fc.writes)
    await scale(client, "web", 3)
    await fc.wait_failures(3)  # the first attempt and two retries
    assert len((await client.list(PODS, NS))["items"]) == 5
    assert not [w for w in fc.writes[mark:] if w[:2] == ("delete", "pods")]
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 3  # Workload first
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 5
    evs = await events_of(ctrl, client)
    assert ("Warning", "FailedMinCountSync") in reasons(evs)
    fc.clear()
    await wait_pods(client, "web", 3)
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 3
    log = fc.writes[mark:]
    last_pg_patch = max(i for i, w in enumerate(log) if w[:2] == ("patch", "podgroups"))
    first_delete = min(i for i, w in enumerate(log) if w[:2] == ("delete", "pods"))
    assert last_pg_patch < first_delete


async def test_min_count_clamped_to_one_at_zero_replicas(client: Any, fc: FaultyClient, ctrl: Any) -> None:
    """minCount is clamped to 1 when spec.replicas is 0: neither object is deleted nor patched to
    an invalid minCount: 0."""
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    await scale(client, "web", 0)
    await wait_pods(client, "web", 0)
    assert min_count(await client.get(WORKLOADS, wl["metadata"]["name"], NS)) == 1
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 1
    await settled(ctrl, client, "web")
    assert [(o["metadata"]["uid"]) for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [(o["metadata"]["uid"]) for o in await pod_groups(client)] == [pg["metadata"]["uid"]]
    sent = [str(body) for res, _, body in fc.patches if res in ("workloads", "podgroups")]
    assert sent and not any("'minCount': 0" in s or "'value': 0" in s for s in sent)
    assert not [w for w in fc.writes if w[0] == "delete" and w[1] in ("workloads", "podgroups")]
    await scale(client, "web", 2)
    pods = await wait_pods(client, "web", 2)
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 2)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}


async def test_derived_min_count_is_never_written_back(client: Any, fc: FaultyClient, ctrl: Any) -> None:
    """The derived minCount is never written back to the StatefulSet —
    spec.scheduling.schedulingPolicy.gang.minCount is still nil after a sync."""
    created = await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    await scale(client, "web", 4)
    await wait_pods(client, "web", 4)
    await settled(ctrl, client, "web")
    got = await client.get(STATEFULSETS, "web", NS)
    assert got["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {}}}
    assert got["metadata"]["generation"] == created["metadata"]["generation"] + 1  # only our scale
    assert not [w for w in fc.writes if w[1] == "statefulsets" and w[0] != "update_status"]


async def test_pod_group_identity_is_stable_across_a_rolling_update(client: Any, ctrl: Any) -> None:
    """PodGroup name and identity are stable across a rolling update (no recreation)."""
    async with PodReadier(client, NS):
        await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
        await wait_pods(client, "web", 3)
        pg = await wait_single(client, PODGROUPS)
        wl = await wait_single(client, WORKLOADS)
        old = await client.get(STATEFULSETS, "web", NS)
        await client.patch(
            STATEFULSETS, "web", {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}}, NS
        )
        fresh = await wait_for_object(
            client,
            STATEFULSETS,
            "web",
            NS,
            lambda o: bool(
                o
                and o["status"].get("updateRevision") != old["status"].get("updateRevision")
                and o["status"].get("updatedReplicas") == 3
                and o["status"].get("readyReplicas") == 3
            ),
            timeout=20,
        )
        assert fresh is not None
    pods = await wait_pods(client, "web", 3)
    assert {p["metadata"]["labels"][su.REVISION_LABEL] for p in pods} == {fresh["status"]["updateRevision"]}
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]


# ---------------------------------------------------------------------------------- ownership
async def test_workload_is_collected_with_the_statefulset(cp: ControlPlane, client: Any, ctrl: Any) -> None:
    """Workload and PodGroup cleanup on StatefulSet deletion — the part that works today: the
    controller deletes nothing itself; the garbage collector removes the Workload (its only
    owner is the StatefulSet) and starts deleting the PodGroup; the next test follows the cascade to the end."""
    await start_gc(cp)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    pg = await wait_single(client, PODGROUPS)
    await client.delete(STATEFULSETS, "web", NS)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items)
    await wait_for_object(
        client,
        PODGROUPS,
        pg["metadata"]["name"],
        NS,
        lambda o: bool(o is None or o["metadata"].get("deletionTimestamp")),
    )


async def test_workload_and_pod_group_cleanup_after_scale_to_zero_and_deletion(
    cp: ControlPlane, client: Any, ctrl: Any
) -> None:
    """Workload and PodGroup cleanup on StatefulSet deletion — with no pod left, the garbage
    collector removes both (the protection finalizer has nothing to wait for)."""
    await start_gc(cp)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    await scale(client, "web", 0)
    await wait_pods(client, "web", 0)
    await client.delete(STATEFULSETS, "web", NS)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items)


async def test_workload_and_pod_group_cleanup_on_statefulset_deletion(
    cp: ControlPlane, client: Any, ctrl: Any
) -> None:
    """Workload and PodGroup cleanup on StatefulSet deletion."""
    await start_gc(cp)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    await wait_single(client, PODGROUPS)
    await client.delete(STATEFULSETS, "web", NS)
    await wait_for_list(client, WORKLOADS, NS, lambda items: not items)
    await wait_for_list(client, PODS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)
    await wait_for_list(client, PODGROUPS, NS, lambda items: not items, timeout=CASCADE_TIMEOUT)


async def test_owner_references_and_finalizers_on_all_three_kinds(client: Any, ctrl: Any) -> None:
    """OwnerReferences and finalizers are set correctly on all three object kinds: Workload →
    StatefulSet; PodGroup → StatefulSet and (StatefulSet-managed case only) Workload; Pod →
    StatefulSet and PodGroup."""
    sts = await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    pods = await wait_pods(client, "web", 2)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    owner = sts_owner(sts)
    assert wl["metadata"]["ownerReferences"] == [owner]
    assert wl["metadata"]["annotations"] == {MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE}
    assert not wl["metadata"].get("finalizers")
    assert pg["metadata"]["ownerReferences"] == [
        owner,
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "Workload",
            "name": wl["metadata"]["name"],
            "uid": wl["metadata"]["uid"],
            "blockOwnerDeletion": True,
        },
    ]
    assert pg["metadata"]["annotations"] == {MANAGED_BY_ANNOTATION: MANAGED_BY_VALUE}
    assert pg["metadata"]["finalizers"] == [FINALIZER]
    for p in pods:
        assert p["metadata"]["ownerReferences"] == [
            owner,
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "name": pg["metadata"]["name"],
                "uid": pg["metadata"]["uid"],
            },
        ]
        assert not p["metadata"].get("finalizers")


# ---------------------------------------------------------------------------------- discovery
async def test_discovery_by_reference_regardless_of_names(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """Discovery by reference: an existing Workload is matched by spec.controllerRef and an
    existing PodGroup by its Workload reference (spec.workloadRef in 1.37), regardless of names."""
    sts = await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    wl = await client.create(
        WORKLOADS,
        workload_manifest(
            "zz-any-name",
            sts_controller_ref("web"),
            [gang_template("web", 3)],
            owner=sts_owner(sts),
            managed=True,
        ),
        NS,
    )
    body = pod_group_manifest("aa-whatever", "zz-any-name", "web", 3, owner=sts_owner(sts), managed=True)
    pg = await client.create(PODGROUPS, body, NS)
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 3)
    assert {group_of(p) for p in pods} == {"aa-whatever"}
    assert fc.index("create", "workloads") == fc.index("create", "podgroups") == -1
    # created by this controller (annotation + controller ref with our UID): minCount is synced
    await scale(client, "web", 4)
    await wait_min_count(client, WORKLOADS, "zz-any-name", 4)
    await wait_min_count(client, PODGROUPS, "aa-whatever", 4)
    await settled(ctrl, client, "web")
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [wl["metadata"]["uid"]]
    assert [o["metadata"]["uid"] for o in await pod_groups(client)] == [pg["metadata"]["uid"]]


async def test_no_duplicate_creation_when_workload_exists_but_pod_group_does_not(
    client: Any, fc: FaultyClient, ctrl: Any
) -> None:
    """No duplicate creation when a Workload exists but its PodGroup does not (crash-recovery path)."""
    fc.fail("create", PODGROUPS, times=2)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    pods = await wait_pods(client, "web", 3)
    assert fc.failures == 2
    assert [w for w in fc.writes if w[:2] == ("create", "workloads")] == [
        fc.writes[fc.index("create", "workloads")]
    ]
    assert len([w for w in fc.writes if w[:2] == ("create", "podgroups")]) == 3
    assert len(await workloads(client)) == 1
    pg = await wait_single(client, PODGROUPS)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    # no pod was created while the PodGroup was missing
    assert fc.index("create", "pods") > max(
        i for i, w in enumerate(fc.writes) if w[:2] == ("create", "podgroups")
    )
    evs = await events_of(ctrl, client)
    assert ("Warning", "WorkloadCreationFailed") in reasons(evs)


async def test_no_creation_once_the_statefulset_has_pods(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """No creation attempted once the StatefulSet already has pods; existing objects are
    discovered and used."""
    # (1) pods exist, no objects: created while the controller's gate view was off
    cp.options.component_gates[STATEFULSET] = {"WorkloadWithStatefulSet": False}
    ctrl = await start(cp, fc)
    await client.create(STATEFULSETS, sts_manifest("old", 2, GANG), NS)
    await wait_pods(client, "old", 2)
    await cp.stop_component(STATEFULSET)
    cp.options.component_gates.pop(STATEFULSET)
    ctrl = await start(cp, fc)
    await scale(client, "old", 3)
    pods = await wait_pods(client, "old", 3)
    await settled(ctrl, client, "old")
    assert fc.index("create", "workloads") == fc.index("create", "podgroups") == -1
    assert all(group_of(p) is None for p in pods)
    # (2) objects and pods exist: the objects are used, nothing is created
    await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    await wait_pods(client, "web", 2)
    pg = await wait_single(client, PODGROUPS)
    await cp.stop_component(STATEFULSET)
    ctrl = await start(cp, fc)
    mark = len(fc.writes)
    await scale(client, "web", 3)
    pods = await wait_pods(client, "web", 3)
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert not [w for w in fc.writes[mark:] if w[0] == "create" and w[1] in ("workloads", "podgroups")]


async def test_two_matching_workloads_are_ambiguous(cp: ControlPlane, client: Any, fc: FaultyClient) -> None:
    """Two Workloads matching the same StatefulSet are treated as ambiguous: nothing is created or
    mutated and an event is emitted."""
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    a = await client.create(WORKLOADS, workload_manifest("user-a", sts_controller_ref("web")), NS)
    b = await client.create(WORKLOADS, workload_manifest("user-b", sts_controller_ref("web")), NS)
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 3)
    await settled(ctrl, client, "web")
    assert all(group_of(p) is None for p in pods)  # default scheduling
    assert [o["metadata"]["resourceVersion"] for o in await workloads(client)] == [
        a["metadata"]["resourceVersion"],
        b["metadata"]["resourceVersion"],
    ]
    assert await pod_groups(client) == []
    assert not [w for w in fc.writes if w[1] in ("workloads", "podgroups")]
    evs = await events_of(ctrl, client)
    assert (
        "Warning",
        "AmbiguousWorkload",
        "found 2 Workloads referencing StatefulSet default/web, falling back to default scheduling",
    ) in evs


async def test_objects_not_created_by_the_controller_are_used_as_is(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """A Workload or PodGroup not created by the controller is used as-is: no ownerReference
    added, no mutation, no deletion."""
    await start_gc(cp)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    wl = await client.create(WORKLOADS, workload_manifest("mine", sts_controller_ref("web")), NS)
    pg = await client.create(PODGROUPS, pod_group_manifest("my-group", "mine", "web", 3), NS)
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 3)
    assert {group_of(p) for p in pods} == {"my-group"}
    await scale(client, "web", 5)
    await wait_pods(client, "web", 5)
    await settled(ctrl, client, "web")
    assert (await client.get(WORKLOADS, "mine", NS))["metadata"]["resourceVersion"] == wl["metadata"][
        "resourceVersion"
    ]
    got_pg = await client.get(PODGROUPS, "my-group", NS)
    assert got_pg["metadata"]["resourceVersion"] == pg["metadata"]["resourceVersion"]
    assert not got_pg["metadata"].get("ownerReferences")
    assert not [w for w in fc.writes if w[1] in ("workloads", "podgroups")]
    await client.delete(STATEFULSETS, "web", NS)
    # The garbage collector has processed the pods once none refers to the StatefulSet any more
    # (the user's PodGroup, a live owner, keeps them: kube's GC rules).
    await wait_for_list(
        client,
        PODS,
        NS,
        lambda items: all(
            r["kind"] != "StatefulSet" for p in items for r in p["metadata"]["ownerReferences"]
        ),
    )
    assert [o["metadata"]["name"] for o in await workloads(client)] == ["mine"]
    assert [o["metadata"]["name"] for o in await pod_groups(client)] == ["my-group"]


async def test_user_workload_with_controller_pod_group_syncs_only_the_pod_group_from_the_template(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """With a BYO or parent-owned Workload and a controller-owned PodGroup, only the PodGroup's
    minCount is synced from the Workload template; scaling does not mutate the Workload."""
    sts = await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    wl = await client.create(
        WORKLOADS, workload_manifest("user-wl", sts_controller_ref("web"), [gang_template("web", 2)]), NS
    )
    await start(cp, fc)
    await wait_pods(client, "web", 3)
    pg = await wait_single(client, PODGROUPS)
    assert min_count(pg) == 2  # from the template, not from replicas
    # KEP-6277: PodGroup → Workload only when the controller created the Workload
    assert pg["metadata"]["ownerReferences"] == [sts_owner(sts)]
    await scale(client, "web", 5)
    await wait_pods(client, "web", 5)
    assert (await client.get(WORKLOADS, "user-wl", NS))["metadata"]["resourceVersion"] == wl["metadata"][
        "resourceVersion"
    ]
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 2
    # the Workload's owner changes its template: the controller's PodGroup follows it
    patch = [
        {"op": "replace", "path": "/spec/podGroupTemplates/0/schedulingPolicy/gang/minCount", "value": 5}
    ]
    await client.patch(WORKLOADS, "user-wl", patch, NS, patch_type="application/json-patch+json")
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 5)
    assert not [w for w in fc.writes if w[1] == "workloads"]


async def test_user_pod_group_is_never_mutated_on_scale(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """With a BYO PodGroup, scaling mutates neither that PodGroup nor any BYO Workload."""
    await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    wl = await client.create(
        WORKLOADS, workload_manifest("user-wl", sts_controller_ref("web"), [gang_template("web", 2)]), NS
    )
    pg = await client.create(PODGROUPS, pod_group_manifest("user-pg", "user-wl", "web", 2), NS)
    ctrl = await start(cp, fc)
    await wait_pods(client, "web", 2)
    for n in (4, 1):
        await scale(client, "web", n)
        await wait_pods(client, "web", n)
    await settled(ctrl, client, "web")
    assert (await client.get(WORKLOADS, "user-wl", NS))["metadata"]["resourceVersion"] == wl["metadata"][
        "resourceVersion"
    ]
    assert (await client.get(PODGROUPS, "user-pg", NS))["metadata"]["resourceVersion"] == pg["metadata"][
        "resourceVersion"
    ]
    assert not [w for w in fc.writes if w[1] in ("workloads", "podgroups")]


@pytest.mark.parametrize("count", [0, 2], ids=["composite-only", "two-templates"])
async def test_workload_with_template_count_other_than_one_is_ignored(
    cp: ControlPlane, client: Any, fc: FaultyClient, count: int
) -> None:
    """A discovered Workload with a podGroupTemplates count other than 1 is ignored, with an event."""
    await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    if count:
        body = workload_manifest(
            "odd", sts_controller_ref("web"), [gang_template("a", 1), gang_template("b", 1)]
        )
    else:
        composite = [
            {"name": "top", "schedulingPolicy": {"basic": {}}, "podGroupTemplates": [gang_template("a", 1)]}
        ]
        body = workload_manifest("odd", sts_controller_ref("web"), composite=composite)
    await client.create(WORKLOADS, body, NS)
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 2)
    await settled(ctrl, client, "web")
    assert all(group_of(p) is None for p in pods)
    assert await pod_groups(client) == [] and len(await workloads(client)) == 1
    evs = await events_of(ctrl, client)
    assert (
        "Warning",
        "UnsupportedWorkloadStructure",
        f"Workload odd has {count} PodGroupTemplates (expected 1), falling back to default scheduling",
    ) in evs


# ---------------------------------------------------------------------------------- composition
def parent_workload(
    templates: list[Obj] | None = None, *, composite: list[Obj] | None = None, name: str = "lws-wl"
) -> Obj:
    ref = {"apiGroup": "leaderworkerset.x-k8s.io", "kind": PARENT_KIND, "name": "lws"}
    return workload_manifest(name, ref, templates, composite=composite)


async def test_composition_pod_group_from_the_parent_template_and_no_own_workload(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """Composition: with a parent ownerReference and scheduling.k8s.io/group-template-name set, the
    controller creates no Workload and instantiates its PodGroup from the parent's named template."""
    parent = await client.create(
        WORKLOADS, parent_workload([gang_template("leader", 1), gang_template("workers", 2)]), NS
    )
    sts = await client.create(
        STATEFULSETS,
        sts_manifest("web", 4, GANG, annotations=delegation_annotations("workers"), owner=parent_ref()),
        NS,
    )
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 4)
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["workloadRef"] == {"workloadName": "lws-wl", "templateName": "workers"}
    assert min_count(pg) == 2  # the parent's template decides, not replicas
    assert pg["metadata"]["ownerReferences"] == [sts_owner(sts)]  # no ref to the parent's Workload
    assert "parentCompositePodGroupName" not in pg["spec"]
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert [o["metadata"]["uid"] for o in await workloads(client)] == [parent["metadata"]["uid"]]
    assert fc.index("create", "workloads") == -1
    # scaling the child mutates neither the parent's Workload nor (template unchanged) the PodGroup
    await scale(client, "web", 5)
    await wait_pods(client, "web", 5)
    await settled(ctrl, client, "web")
    assert (await client.get(WORKLOADS, "lws-wl", NS))["metadata"]["resourceVersion"] == parent["metadata"][
        "resourceVersion"
    ]
    assert min_count(await client.get(PODGROUPS, pg["metadata"]["name"], NS)) == 2
    # the parent owns the gang size: when it changes its template, the child's PodGroup follows
    patch = [
        {"op": "replace", "path": "/spec/podGroupTemplates/1/schedulingPolicy/gang/minCount", "value": 5}
    ]
    await client.patch(WORKLOADS, "lws-wl", patch, NS, patch_type="application/json-patch+json")
    await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 5)
    assert not [w for w in fc.writes if w[1] == "workloads"]


async def test_composition_pod_group_links_to_the_parent_composite_pod_group(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """Composition: with scheduling.k8s.io/parent-compositepodgroup also set, the created PodGroup
    links to that parent CompositePodGroup instance."""
    composite = [
        {
            "name": "group",
            "schedulingPolicy": {"gang": {"minGroupCount": 1}},
            "podGroupTemplates": [gang_template("workers", 3)],
        }
    ]
    await client.create(WORKLOADS, parent_workload(composite=composite), NS)
    cpg = {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": "lws-group-0", "namespace": NS},
        "spec": {
            "workloadRef": {"workloadName": "lws-wl", "templateName": "group"},
            "schedulingPolicy": {"gang": {"minGroupCount": 1}},
        },
    }
    await client.create(COMPOSITEPODGROUPS, cpg, NS)
    await client.create(
        STATEFULSETS,
        sts_manifest(
            "web", 3, GANG, annotations=delegation_annotations("workers", "lws-group-0"), owner=parent_ref()
        ),
        NS,
    )
    await start(cp, fc)
    pods = await wait_pods(client, "web", 3)
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["parentCompositePodGroupName"] == "lws-group-0"
    assert pg["spec"]["workloadRef"] == {"workloadName": "lws-wl", "templateName": "workers"}
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    assert len(await workloads(client)) == 1


async def test_composition_parent_without_annotation_gets_its_own_objects(client: Any, ctrl: Any) -> None:
    """Composition: with a parent ownerReference but no group-template-name annotation, the
    controller creates its own Workload and PodGroup and stamps their podGroupName onto pods."""
    await client.create(WORKLOADS, parent_workload([gang_template("workers", 2)]), NS)
    sts = await client.create(STATEFULSETS, sts_manifest("web", 3, GANG, owner=parent_ref()), NS)
    pods = await wait_pods(client, "web", 3)
    own = [w for w in await workloads(client) if w["spec"]["controllerRef"]["kind"] == "StatefulSet"]
    assert len(own) == 1 and own[0]["metadata"]["ownerReferences"] == [sts_owner(sts)]
    pg = await wait_single(client, PODGROUPS)
    assert pg["spec"]["workloadRef"]["workloadName"] == own[0]["metadata"]["name"]
    assert min_count(pg) == 3
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}


async def test_composition_annotation_without_parent_owner_keeps_the_managed_path(
    client: Any, ctrl: Any
) -> None:
    """Composition: group-template-name without a parent controller ownerReference does not
    suppress StatefulSet-managed Workload and PodGroup creation and surfaces an event."""
    await client.create(
        STATEFULSETS, sts_manifest("web", 2, GANG, annotations=delegation_annotations("workers")), NS
    )
    pods = await wait_pods(client, "web", 2)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert wl["spec"]["controllerRef"] == sts_controller_ref("web")
    assert {group_of(p) for p in pods} == {pg["metadata"]["name"]}
    evs = await events_of(ctrl, client)
    assert ("Warning", "InvalidWorkloadDelegation") in reasons(evs)


@pytest.mark.parametrize("case", ["no-parent-workload", "two-parent-workloads", "no-such-template"])
async def test_composition_unresolved_or_ambiguous_parent_falls_back_with_an_event(
    cp: ControlPlane, client: Any, fc: FaultyClient, case: str
) -> None:
    """Composition: an unresolved or ambiguous parent Workload/template with the annotation
    present falls back with an event instead of creating a separate Workload."""
    if case != "no-parent-workload":
        await client.create(WORKLOADS, parent_workload([gang_template("workers", 2)]), NS)
    if case == "two-parent-workloads":
        await client.create(WORKLOADS, parent_workload([gang_template("workers", 2)], name="lws-wl-2"), NS)
    template = "missing" if case == "no-such-template" else "workers"
    await client.create(
        STATEFULSETS,
        sts_manifest("web", 2, GANG, annotations=delegation_annotations(template), owner=parent_ref()),
        NS,
    )
    ctrl = await start(cp, fc)
    pods = await wait_pods(client, "web", 2)
    await settled(ctrl, client, "web")
    assert all(group_of(p) is None for p in pods)
    assert not [w for w in fc.writes if w[1] in ("workloads", "podgroups")]
    assert not [w for w in await workloads(client) if w["spec"]["controllerRef"]["kind"] == "StatefulSet"]
    assert await pod_groups(client) == []
    evs = await events_of(ctrl, client)
    assert ("Warning", "ParentWorkloadUnresolved") in reasons(evs)


# ---------------------------------------------------------------------------------- claims
async def test_resource_claims_passed_through_to_template_and_pod_group(client: Any, ctrl: Any) -> None:
    """ResourceClaims from spec.scheduling.resourceClaims are passed through to PodGroupTemplate
    and PodGroup spec.resourceClaims."""
    claims = [CLAIM, {"name": "named", "resourceClaimName": "pre-made"}]
    await client.create(STATEFULSETS, sts_manifest("web", 2, {**GANG, "resourceClaims": claims}), NS)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert wl["spec"]["podGroupTemplates"][0]["resourceClaims"] == claims
    assert pg["spec"]["resourceClaims"] == claims


async def test_pods_receive_matching_resource_claims_when_the_template_has_them(
    client: Any, ctrl: Any
) -> None:
    """Pods receive matching spec.resourceClaims entries when the pod template includes them."""
    body = sts_manifest("web", 2, {**GANG, "resourceClaims": [CLAIM]})
    tmpl = body["spec"]["template"]["spec"]
    tmpl["resourceClaims"] = [dict(CLAIM)]
    tmpl["containers"][0]["resources"] = {"claims": [{"name": "shared"}]}
    before = copy.deepcopy(body["spec"]["template"])
    await client.create(STATEFULSETS, body, NS)
    pods = await wait_pods(client, "web", 2)
    pg = await wait_single(client, PODGROUPS)
    for p in pods:
        assert p["spec"]["resourceClaims"] == pg["spec"]["resourceClaims"] == [CLAIM]
        assert p["spec"]["containers"][0]["resources"]["claims"] == [{"name": "shared"}]
    # the controller does not inject claims: the StatefulSet's template is what the user wrote
    got = await client.get(STATEFULSETS, "web", NS)
    assert got["spec"]["template"]["spec"]["resourceClaims"] == before["spec"]["resourceClaims"]


async def test_resource_claims_omitted_when_the_gate_is_disabled(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """ResourceClaims field is omitted from PodGroupTemplate when DRAWorkloadResourceClaims gate is
    disabled (in the controller's gate view; the API server still stores the field)."""
    cp.options.component_gates[STATEFULSET] = {"DRAWorkloadResourceClaims": False}
    await start(cp, fc)
    await client.create(STATEFULSETS, sts_manifest("web", 2, {**GANG, "resourceClaims": [CLAIM]}), NS)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["scheduling"]["resourceClaims"] == [CLAIM]
    assert "resourceClaims" not in wl["spec"]["podGroupTemplates"][0]
    assert "resourceClaims" not in pg["spec"]


async def test_resource_claims_omitted_when_empty(client: Any, ctrl: Any) -> None:
    """ResourceClaims field is omitted when spec.scheduling.resourceClaims is empty."""
    await client.create(STATEFULSETS, sts_manifest("web", 2, {**BASIC, "resourceClaims": []}), NS)
    wl, pg = await wait_single(client, WORKLOADS), await wait_single(client, PODGROUPS)
    assert "resourceClaims" not in wl["spec"]["podGroupTemplates"][0]
    assert "resourceClaims" not in pg["spec"]


# ---------------------------------------------------------------------------------- extras
async def test_manager_wires_the_hook_into_every_statefulset_controller(
    cp: ControlPlane, client: Any
) -> None:
    """The controller manager builds the StatefulSet controller with the KEP-6277 hook."""
    register_controllers(cp, "statefulset")
    ctrl = await cp.start_component(STATEFULSET)
    assert isinstance(ctrl, StatefulSetController)
    assert isinstance(ctrl.scheduling_hook, WorkloadSchedulingHook)
    await client.create(STATEFULSETS, sts_manifest("web", 1, GANG), NS)
    pods = await wait_pods(client, "web", 1)
    assert group_of(pods[0]) == (await wait_single(client, PODGROUPS))["metadata"]["name"]


async def test_gang_pods_wait_for_the_pod_group_and_errors_are_counted(
    cp: ControlPlane, client: Any, fc: FaultyClient
) -> None:
    """KEP-6277 Troubleshooting: no pod of a gang set is created while its PodGroup cannot be;
    statefulset_workload_creation_errors_total counts the failures and survives a restart."""
    fc.fail("create", PODGROUPS, times=None)
    ctrl = await start(cp, fc)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await fc.wait_failures(2)
    await cp.stop_component(STATEFULSET)  # a crash while the API keeps failing
    metric = "statefulset_workload_creation_errors_total"
    counted = cp.metrics_registry.get_sample_value(metric)
    assert counted is not None and counted >= 2
    assert (await client.list(PODS, NS))["items"] == []
    evs = await events_of(ctrl, client)
    assert ("Warning", "WorkloadCreationFailed") in reasons(evs)
    fc.clear()
    await start(cp, fc)  # the restarted component reuses the registered collector
    pods = await wait_pods(client, "web", 3)
    assert all(group_of(p) for p in pods)
    assert (cp.metrics_registry.get_sample_value(metric) or 0) >= counted
    assert len(await workloads(client)) == 1


async def test_api_without_the_scheduling_group_blocks_pod_creation(client: Any) -> None:
    """KEP-6277 Version Skew 1: the API server does not serve scheduling.k8s.io/v1beta1 — the sync
    retries with backoff and creates no pod for the gang set."""
    from featuregates import FeatureGate
    from gangplane.controlplane import ControlPlane as Plane
    from gangplane.controlplane import ControlPlaneOptions

    plane = Plane(
        ControlPlaneOptions(
            gates=FeatureGate(),
            component_gates={"apiserver": {"GenericWorkload": False}},
            client_bookmark_interval=0.2,
        )
    )
    try:
        c = plane.client("test")
        lc = FaultyClient(plane.client(STATEFULSET))
        ctrl = await start_statefulset_controller(plane, lc)
        hook = ctrl.scheduling_hook
        assert isinstance(hook, WorkloadSchedulingHook) and not hook.api_available
        await c.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
        await wait_for_list(
            c, EVENTS, NS, lambda items: any(e["reason"] == "WorkloadCreationFailed" for e in items)
        )
        assert (
            plane.metrics_registry.get_sample_value("statefulset_workload_creation_errors_total") or 0
        ) >= 1
        evs = await events_of(ctrl, c)
        assert ("Warning", "WorkloadCreationFailed") in reasons(evs)
        assert (await c.list(PODS, NS))["items"] == []
    finally:
        await plane.stop()


async def test_compile_error_is_reported_counted_and_blocks_pods(
    cp: ControlPlane, client: Any, ctrl: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """decisions.md: a compile error surfaces as a FailedWorkloadCompilation Warning on the
    StatefulSet, counts in statefulset_workload_creation_errors_total and creates nothing."""
    import controllers.statefulset.compiled as compiled_module  # where the hook compiles

    real = compiled_module.statefulset_workload_item

    def without_callbacks(sts: Obj, gates: Any) -> Any:
        item = real(sts, gates)
        item.callbacks = []  # the gang's minCount is then never resolved
        return item

    monkeypatch.setattr(compiled_module, "statefulset_workload_item", without_callbacks)
    await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    evs = await wait_for_list(
        client, EVENTS, NS, lambda items: any(e["reason"] == "FailedWorkloadCompilation" for e in items)
    )
    message = next(e["message"] for e in evs if e["reason"] == "FailedWorkloadCompilation")
    assert message == (
        "Failed to compile Workload for StatefulSet default/web: "
        "gang scheduling requires minCount to be set after resolution"
    )
    assert (cp.metrics_registry.get_sample_value("statefulset_workload_creation_errors_total") or 0) >= 1
    assert await workloads(client) == [] and (await client.list(PODS, NS))["items"] == []
