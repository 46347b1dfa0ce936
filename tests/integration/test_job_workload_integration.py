"""KEP-5547 Job integration (``WorkloadWithJob``): one Workload and one PodGroup per Job, before its pods.

Lifecycle checks as upstream-facts §6 describes the 1.37 Job integration: naming (``<job>-<hash>``,
template ``<job>-pgt-0``), discovery by reference, ownerReferences, gang minCount from
parallelism, the Job's events, delegation to a parent's Workload, and what is *not* created.
Placement itself (all-or-nothing) is the gang scheduler's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import JOBS, PODGROUPS, PODS, WORKLOADS, Client
from apiserver.workloadbuilder import pod_group_name, workload_name
from controllers.job import JobController
from controllers.nodeagent import COMPLETE_AFTER
from featuregates import WORKLOAD_WITH_JOB, FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list
from tests.integration.job_support import has_condition, job, job_pods, start_cluster, wait_events, wait_job

pytestmark = pytest.mark.anyio

GANG = {"schedulingPolicy": {"gang": {}}}


async def _plane(gates: dict[str, bool]) -> ControlPlane:
    return ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate(overrides=gates), bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )


@pytest.fixture
async def env() -> AsyncIterator[tuple[Client, JobController]]:
    cp = await _plane({WORKLOAD_WITH_JOB: True})
    try:
        ctrl = await start_cluster(cp, workload_hook=True)
        yield cp.client("test"), ctrl
    finally:
        await cp.stop()


async def only(client: Client, gvr: Any) -> Obj:
    (item,) = await wait_for_list(client, gvr, "default", lambda items: len(items) == 1)
    return item


async def test_gang_job_gets_one_workload_and_one_pod_group_before_its_pods(
    env: tuple[Client, JobController],
) -> None:
    client, _ = env
    created = await client.create(
        JOBS,
        job("train", parallelism=4, completions=4, scheduling=GANG, annotations={COMPLETE_AFTER: "1h"}),
        "default",
    )
    uid = created["metadata"]["uid"]
    wl = await only(client, WORKLOADS)
    assert wl["metadata"]["name"] == workload_name("train", uid)
    assert wl["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "train"}
    (tpl,) = wl["spec"]["podGroupTemplates"]
    assert tpl["name"] == "train-pgt-0"
    assert tpl["schedulingPolicy"] == {"gang": {"minCount": 4}}
    owner = wl["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "Job",
        uid,
        True,
        True,
    )

    pg = await only(client, PODGROUPS)
    assert pg["metadata"]["name"] == pod_group_name(wl["metadata"]["name"], "train-pgt-0")
    assert pg["spec"]["workloadRef"] == {
        "workloadName": wl["metadata"]["name"],
        "templateName": "train-pgt-0",
    }
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    job_ref, wl_ref = pg["metadata"]["ownerReferences"]
    assert (job_ref["kind"], job_ref["controller"]) == ("Job", True)
    assert wl_ref == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "name": wl["metadata"]["name"],
        "uid": wl["metadata"]["uid"],
    }
    assert "scheduling.k8s.io/podgroup-protection" in pg["metadata"]["finalizers"]

    pods = await wait_for_list(client, PODS, "default", lambda items: len(items) == 4)
    for p in pods:
        assert p["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}
        refs = p["metadata"]["ownerReferences"]
        assert refs[1] == {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "name": pg["metadata"]["name"],
            "uid": pg["metadata"]["uid"],
        }
        assert int(p["metadata"]["resourceVersion"]) > int(pg["metadata"]["resourceVersion"]), (
            "the PodGroup exists before any pod"
        )

    ev = await wait_events(client, "train", "WorkloadCreated")
    assert ev[0]["message"] == f"Created Workload {wl['metadata']['name']} for Job default/train"
    ev = await wait_events(client, "train", "PodGroupCreated")
    assert ev[0]["message"] == f"Created PodGroup {pg['metadata']['name']} for Job default/train"


async def test_gang_min_count_follows_parallelism_workload_first(env: tuple[Client, JobController]) -> None:
    client, _ = env
    await client.create(
        JOBS,
        job("elastic", parallelism=4, completions=8, scheduling=GANG, annotations={COMPLETE_AFTER: "1h"}),
        "default",
    )
    await only(client, PODGROUPS)
    await client.patch(JOBS, "elastic", {"spec": {"parallelism": 6}}, "default")
    pg = (
        await wait_for_list(
            client,
            PODGROUPS,
            "default",
            lambda items: items and items[0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 6,
        )
    )[0]
    wl = await only(client, WORKLOADS)
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] == 6
    assert int(wl["metadata"]["resourceVersion"]) < int(pg["metadata"]["resourceVersion"]), (
        "Workload updated before PodGroup"
    )


async def test_user_min_count_is_kept_below_parallelism(env: tuple[Client, JobController]) -> None:
    client, _ = env
    sched = {"schedulingPolicy": {"gang": {"minCount": 2}}}
    await client.create(
        JOBS,
        job("partial", parallelism=4, completions=4, scheduling=sched, annotations={COMPLETE_AFTER: "1h"}),
        "default",
    )
    pg = await only(client, PODGROUPS)
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2


async def test_job_without_scheduling_compiles_to_basic_policy(env: tuple[Client, JobController]) -> None:
    client, _ = env
    await client.create(JOBS, job("plain", completions=2, parallelism=2), "default")
    wl = await only(client, WORKLOADS)
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"basic": {}}
    pg = await only(client, PODGROUPS)
    assert pg["spec"]["schedulingPolicy"] == {"basic": {}}
    await wait_job(client, "plain", has_condition("Complete"))


async def test_pod_template_with_scheduling_group_gets_no_workload(env: tuple[Client, JobController]) -> None:
    client, ctrl = env
    body = job("byo", completions=1)
    body["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "mine"}
    await client.create(JOBS, body, "default")
    await wait_job(client, "byo", has_condition("Complete"))
    assert (await client.list(WORKLOADS, "default"))["items"] == []
    assert (await client.list(PODGROUPS, "default"))["items"] == []
    (pod,) = await job_pods(client, "byo")
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "mine"}


async def test_delegated_job_instantiates_only_its_pod_group_from_the_parent_workload(
    env: tuple[Client, JobController],
) -> None:
    client, _ = env
    parent = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "js",
        "uid": "11111111-2222-3333-4444-555555555555",
        "controller": True,
    }
    wl = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "js-workload"},
        "spec": {
            "controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "js"},
            "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 2}}}],
        },
    }
    await client.create(WORKLOADS, wl, "default")
    body = job("js-workers-0", parallelism=2, completions=2, annotations={COMPLETE_AFTER: "1h"})
    body["metadata"]["ownerReferences"] = [parent]
    body["metadata"]["annotations"] = {"scheduling.k8s.io/group-template-name": "workers"}
    await client.create(JOBS, body, "default")
    pg = await only(client, PODGROUPS)
    assert pg["spec"]["workloadRef"] == {"workloadName": "js-workload", "templateName": "workers"}
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["Job"], (
        "no ownerReference to the parent's Workload"
    )
    assert len((await client.list(WORKLOADS, "default"))["items"]) == 1, (
        "the Job creates no Workload of its own"
    )
    pods = await wait_for_list(client, PODS, "default", lambda items: len(items) == 2)
    assert all(p["spec"]["schedulingGroup"]["podGroupName"] == pg["metadata"]["name"] for p in pods)


async def test_gate_off_creates_no_workload_and_drops_scheduling() -> None:
    cp = await _plane({WORKLOAD_WITH_JOB: False})
    try:
        await start_cluster(cp, workload_hook=True)
        client = cp.client("test")
        created = await client.create(
            JOBS, job("off", parallelism=2, completions=2, scheduling=GANG), "default"
        )
        assert "scheduling" not in created["spec"]
        await wait_job(client, "off", has_condition("Complete"))
        assert (await client.list(WORKLOADS, "default"))["items"] == []
        assert all("schedulingGroup" not in p["spec"] for p in await job_pods(client, "off"))
    finally:
        await cp.stop()


async def test_job_that_already_ran_gets_no_objects(env: tuple[Client, JobController]) -> None:
    """Creation only for a new Job: one that has pods already is left to default scheduling."""
    client, ctrl = env
    await ctrl.stop()
    await client.create(
        JOBS, job("old", parallelism=1, completions=1, annotations={COMPLETE_AFTER: "1h"}), "default"
    )
    cur = await client.get(JOBS, "old", "default")
    cur["status"] = {"startTime": cur["metadata"]["creationTimestamp"], "active": 1}
    await client.update_status(JOBS, cur, "default")
    fresh = JobController(
        ctrl.client,
        clock=ctrl.clock,
        pod_failure_backoff=0.0,
        scheduling_hook=type(ctrl.scheduling_hook)(ctrl.scheduling_hook.gates),
    )
    await fresh.start()
    try:
        await wait_for_list(client, PODS, "default", lambda items: len(items) == 1)
        await fresh.wait_idle()
        assert (await client.list(WORKLOADS, "default"))["items"] == []
    finally:
        await fresh.stop()


async def test_deleting_the_job_removes_its_workload_pod_group_and_pods() -> None:
    """OwnerReferences: the garbage collector cleans up; the Job controller deletes nothing itself."""
    from controllers.manager import GARBAGE_COLLECTOR, PODGROUP_PROTECTION, register_controllers

    cp = await _plane({WORKLOAD_WITH_JOB: True})
    try:
        await start_cluster(cp, workload_hook=True)
        register_controllers(cp, "garbagecollector,podgroup-protection")
        await cp.start_component(GARBAGE_COLLECTOR)
        await cp.start_component(PODGROUP_PROTECTION)
        client = cp.client("test")
        await client.create(
            JOBS,
            job("bye", parallelism=2, completions=2, scheduling=GANG, annotations={COMPLETE_AFTER: "1h"}),
            "default",
        )
        await wait_for_list(client, PODS, "default", lambda items: len(items) == 2)
        await client.delete(JOBS, "bye", "default", propagation_policy="Background")
        for gvr in (PODS, PODGROUPS, WORKLOADS):
            await wait_for_list(client, gvr, "default", lambda items: not items, timeout=20)
    finally:
        await cp.stop()
