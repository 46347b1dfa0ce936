"""The KEP-6277 hook's memo of a set's resolved Workload and PodGroup (controllers/statefulset/resolved.py).

After every change below the controller settles, then the hook is asked twice about the same
cache: through the memo (``_still_resolved``) and through the full discovery walk with an empty
memo. The memo must either decline or give the very object the walk gives; and where the walk
would write (a minCount someone changed, a scale) the write must still happen.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import PODGROUPS, STATEFULSETS, WORKLOADS
from apiserver.meta import key_of
from controllers.statefulset import StatefulSetController
from controllers.statefulset import workload_utils as wu
from controllers.statefulset.resolved import ResolvedMemo
from controllers.statefulset.workload import WorkloadSchedulingHook
from controllers.testing import observed
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import (
    GANG,
    NS,
    FaultyClient,
    events_of,
    min_count,
    settled,
    start_statefulset_controller,
    sts_controller_ref,
    sts_manifest,
    wait_min_count,
    wait_pods,
    wait_single,
    workload_manifest,
)

pytestmark = pytest.mark.anyio


async def answers(ctrl: StatefulSetController, name: str) -> tuple[Obj | None, Obj | None]:
    """(the memo's answer, the full walk's answer) for the cached set ``name``."""
    hook = ctrl.scheduling_hook
    assert isinstance(hook, WorkloadSchedulingHook)
    sts = ctrl.sets.get_by_name(NS, name)
    assert sts is not None
    fast = hook._still_resolved(sts, wu.statefulset_key(sts))
    saved, hook.resolved = hook.resolved, ResolvedMemo()
    try:
        full = await hook._managed(sts, may_create=False)
    finally:
        hook.resolved = saved
    return fast, full


async def settle_on(ctrl: StatefulSetController, informer: Any, obj: Obj) -> None:
    """The hook's informer shows ``obj`` at its resourceVersion, and the syncs it caused are done."""
    rv = obj["metadata"]["resourceVersion"]
    await observed(informer, key_of(obj), lambda o: o is not None and o["metadata"]["resourceVersion"] == rv)
    await ctrl.wait_idle()


@pytest.fixture
async def started(cp: ControlPlane, client: Any) -> tuple[StatefulSetController, FaultyClient]:
    fc = FaultyClient(cp.client("statefulset-controller"))
    ctrl = await start_statefulset_controller(cp, fc)
    await client.create(STATEFULSETS, sts_manifest("web", 3, GANG), NS)
    await wait_pods(client, "web", 3)
    await settled(ctrl, client, "web")
    return ctrl, fc


async def test_the_sync_after_the_creating_one_recognises_the_created_objects(
    started: Any, client: Any
) -> None:
    ctrl, _ = started
    hook = ctrl.scheduling_hook
    pg = await wait_single(client, PODGROUPS)
    await settle_on(ctrl, hook.pod_groups, pg)
    fast, full = await answers(ctrl, "web")
    assert fast is not None and fast is full
    assert fast["metadata"]["uid"] == pg["metadata"]["uid"]
    assert hook.resolved.hits >= 1  # the pods' syncs after the creating one took the memo


async def test_status_and_label_changes_keep_the_memo_and_give_the_current_object(
    started: Any, client: Any
) -> None:
    """The scheduler's condition and a label are not read by discovery: the memo answers, with
    the cache's current PodGroup (its new status visible to the Beta condition)."""
    ctrl, fc = started
    pg = await wait_single(client, PODGROUPS)
    pg["status"] = {
        "conditions": [
            {
                "type": "PodGroupScheduled",
                "status": "True",
                "reason": "Scheduled",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    pg = await client.update_status(PODGROUPS, pg, NS)
    await settle_on(ctrl, ctrl.scheduling_hook.pod_groups, pg)
    fast, full = await answers(ctrl, "web")
    assert (
        fast is not None and fast is full and fast["status"]["conditions"][0]["type"] == "PodGroupScheduled"
    )
    pg = await client.patch(PODGROUPS, pg["metadata"]["name"], {"metadata": {"labels": {"team": "a"}}}, NS)
    await settle_on(ctrl, ctrl.scheduling_hook.pod_groups, pg)
    writes = len(fc.writes)
    fast, full = await answers(ctrl, "web")
    assert fast is not None and fast is full and fast["metadata"]["labels"] == {"team": "a"}
    assert len(fc.writes) == writes


async def test_a_changed_min_count_and_a_scale_are_still_written(started: Any, client: Any) -> None:
    ctrl, fc = started
    pg = await wait_single(client, PODGROUPS)
    wl = await wait_single(client, WORKLOADS)
    # someone else lowers the PodGroup's minCount: the controller puts the template's back
    await client.patch(
        PODGROUPS, pg["metadata"]["name"], {"spec": {"schedulingPolicy": {"gang": {"minCount": 1}}}}, NS
    )
    pg = await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 3)
    await settle_on(ctrl, ctrl.scheduling_hook.pod_groups, pg)
    assert ("patch", "podgroups", pg["metadata"]["name"]) in fc.writes
    fast, full = await answers(ctrl, "web")
    assert fast is not None and fast is full
    # a scale (a new generation) is written to both before pods change
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 4}}, NS)
    await wait_min_count(client, WORKLOADS, wl["metadata"]["name"], 4)
    pg = await wait_min_count(client, PODGROUPS, pg["metadata"]["name"], 4)
    await wait_pods(client, "web", 4)
    await settled(ctrl, client, "web")
    await settle_on(ctrl, ctrl.scheduling_hook.pod_groups, pg)
    fast, full = await answers(ctrl, "web")
    assert fast is not None and fast is full and min_count(fast) == 4


async def test_an_annotation_change_takes_the_full_walk_once(started: Any, client: Any) -> None:
    ctrl, _ = started
    hook = ctrl.scheduling_hook
    wl = await wait_single(client, WORKLOADS)
    sts = ctrl.sets.get_by_name(NS, "web")
    memo = hook.resolved.get(sts["metadata"]["uid"], sts["metadata"]["generation"])
    assert memo is not None
    wl = await client.patch(
        WORKLOADS, wl["metadata"]["name"], {"metadata": {"annotations": {"note": "x"}}}, NS
    )
    await observed(
        hook.workloads,
        key_of(wl),
        lambda o: o is not None and o["metadata"]["resourceVersion"] == wl["metadata"]["resourceVersion"],
    )
    # the memo taken before no longer matches the Workload bucket (its annotations changed)
    wls = hook.workloads.by_index(wu.WORKLOAD_BY_CONTROLLER, wu.statefulset_key(sts))
    assert (
        ResolvedMemo.pick(memo, wls, hook.pod_groups.by_index(wu.POD_GROUP_BY_WORKLOAD, memo.pod_group_key))
        is None
    )
    await ctrl.wait_idle()
    await ctrl.sync(f"{NS}/web")  # the full walk, which stores the new inputs
    fast, full = await answers(ctrl, "web")
    assert fast is not None and fast is full


async def test_a_second_workload_is_ambiguous_whatever_was_resolved_before(started: Any, client: Any) -> None:
    ctrl, _ = started
    other = await client.create(WORKLOADS, workload_manifest("user-b", sts_controller_ref("web")), NS)
    await settle_on(ctrl, ctrl.scheduling_hook.workloads, other)
    fast, full = await answers(ctrl, "web")
    assert fast is None and full is None
    evs = await events_of(ctrl, client)
    assert any(r == "AmbiguousWorkload" for _, r, _ in evs)
