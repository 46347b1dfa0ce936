"""A sync of the state the last sync left and vouched for returns at once (controllers/statefulset/quiet.py).

Randomized: sets (gang or not, Parallel or OrderedReady, 1-4 replicas) get their first, writing
sync; then one random change (or none) reaches the informers — the scheduler's bindings, a pod's
phase, readiness, labels or deletion, the set's spec, status or metadata, the PodGroup's spec,
status or deletion, the Workload's, a revision deleted or an orphan one added, an extra member
pod — and the shortcut's verdict is compared with what the full sync then does: whenever the
shortcut would return, the full sync makes no API call and records no Event.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.client.interface import (
    CONTROLLERREVISIONS,
    PODGROUPS,
    PODS,
    STATEFULSETS,
    WORKLOADS,
    Client,
)
from apiserver.meta import key_of
from controllers.statefulset.controller import StatefulSetController
from controllers.statefulset.quiet import QUIET_MAX_REPLICAS
from controllers.testing import observed
from gangplane.controlplane import ControlPlane
from tests.integration.kep6277_support import GANG, NS, start_statefulset_controller, sts_manifest

pytestmark = pytest.mark.anyio

MERGE = "application/merge-patch+json"
CHANGES = (
    "none",
    "bind",
    "bind-one",
    "ready",
    "failed",
    "delete-pod",
    "relabel-pod",
    "scale",
    "set-status",
    "annotate-set",
    "pod-group-status",
    "pod-group-min-count",
    "delete-pod-group",
    "workload-min-count",
    "delete-revision",
    "orphan-revision",
    "extra-pod",
)


async def _caught_up(ctrl: StatefulSetController, client: Client) -> None:
    """Every informer of the controller shows every object of the namespace as it is stored."""
    hook: Any = ctrl.scheduling_hook
    pairs = [(STATEFULSETS, ctrl.sets), (PODS, ctrl.pods), (CONTROLLERREVISIONS, ctrl.revisions)]
    pairs += [(WORKLOADS, hook.workloads), (PODGROUPS, hook.pod_groups)]
    for gvr, informer in pairs:
        items = (await client.list(gvr, NS))["items"]
        stored = {key_of(o): o["metadata"]["resourceVersion"] for o in items}
        for key, rv in stored.items():
            await observed(
                informer, key, lambda o, rv=rv: o is not None and o["metadata"]["resourceVersion"] == rv
            )
        for key in [key_of(o) for o in informer.list(NS)]:
            if key not in stored:
                await observed(informer, key, lambda o: o is None)


async def _change(client: Client, name: str, what: str, rng: random.Random) -> None:
    pods = sorted((await client.list(PODS, NS))["items"], key=lambda p: p["metadata"]["name"])
    mine = [p for p in pods if p["metadata"]["name"].startswith(f"{name}-")]
    pod = rng.choice(mine) if mine else None
    groups = [g for g in (await client.list(PODGROUPS, NS))["items"] if name in g["metadata"]["name"]]
    wls = [w for w in (await client.list(WORKLOADS, NS))["items"] if name in w["metadata"]["name"]]
    revs = [
        r
        for r in (await client.list(CONTROLLERREVISIONS, NS))["items"]
        if r["metadata"]["name"].startswith(name)
    ]
    if what in ("bind", "bind-one"):
        for n, p in enumerate(mine if what == "bind" else mine[:1]):
            md = p["metadata"]
            body = {
                "metadata": {"name": md["name"], "uid": md["uid"]},
                "target": {"kind": "Node", "name": f"n{n}"},
            }
            await client.create_subresource(PODS, md["name"], "binding", body, NS)
    elif what in ("ready", "failed") and pod is not None:
        status: dict[str, Any] = {"phase": "Failed"}
        if what == "ready":
            status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        await client.update_status(PODS, {**pod, "status": status}, NS)
    elif what == "delete-pod" and pod is not None:
        await client.delete(PODS, pod["metadata"]["name"], NS)
    elif what == "relabel-pod" and pod is not None:
        await client.patch(
            PODS, pod["metadata"]["name"], {"metadata": {"labels": {"app": "other"}}}, NS, patch_type=MERGE
        )
    elif what == "scale":
        await client.patch(
            STATEFULSETS, name, {"spec": {"replicas": rng.choice((1, 5))}}, NS, patch_type=MERGE
        )
    elif what == "set-status":
        await client.patch(
            STATEFULSETS, name, {"status": {"replicas": 7}}, NS, patch_type=MERGE, subresource="status"
        )
    elif what == "annotate-set":
        await client.patch(
            STATEFULSETS, name, {"metadata": {"annotations": {"a": "b"}}}, NS, patch_type=MERGE
        )
    elif what == "pod-group-status" and groups:
        cond = {
            "type": "PodGroupScheduled",
            "status": "True",
            "reason": "Scheduled",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        await client.patch(
            PODGROUPS,
            groups[0]["metadata"]["name"],
            {"status": {"conditions": [cond]}},
            NS,
            patch_type=MERGE,
            subresource="status",
        )
    elif what == "pod-group-min-count" and groups:
        patch = {"spec": {"schedulingPolicy": {"gang": {"minCount": 9}}}}
        await client.patch(PODGROUPS, groups[0]["metadata"]["name"], patch, NS, patch_type=MERGE)
    elif what == "delete-pod-group" and groups:
        await client.delete(PODGROUPS, groups[0]["metadata"]["name"], NS)
    elif what == "workload-min-count" and wls:
        wl = wls[0]
        wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = 9
        await client.update(WORKLOADS, wl, NS)
    elif what == "delete-revision" and revs:
        await client.delete(CONTROLLERREVISIONS, revs[0]["metadata"]["name"], NS)
    elif what == "orphan-revision" and revs:
        rev = {k: v for k, v in revs[0].items() if k in ("apiVersion", "kind", "data", "revision")}
        rev["metadata"] = {"name": f"{name}-orphan", "labels": {"app": name}}
        await client.create(CONTROLLERREVISIONS, rev, NS)
    elif what == "extra-pod" and pod is not None:
        extra = {"apiVersion": "v1", "kind": "Pod", "spec": pod["spec"]}
        extra["metadata"] = {"name": f"{name}-9", "labels": {"app": name}}
        await client.create(PODS, extra, NS)


async def _compare(cp: ControlPlane, client: Client, seed: int, broken: bool = False) -> dict[str, int]:
    """Run the random cases of ``seed``; returns how often the shortcut applied and how often not."""
    ctrl = await start_statefulset_controller(cp)
    ctrl.enqueue = lambda *a, **k: None  # type: ignore[method-assign]  # the test drives every sync
    ctrl.enqueue_after = lambda *a, **k: None  # type: ignore[method-assign]
    events = [0]
    record = ctrl.recorder.event

    def counted(*args: Any, **kwargs: Any) -> None:
        events[0] += 1
        record(*args, **kwargs)

    ctrl.recorder.event = counted  # type: ignore[method-assign]
    rng = random.Random(seed)
    seen = {"quiet": 0, "full": 0}
    for n in range(2 * len(CHANGES)):
        name = f"s{seed}x{n}"
        gang = rng.random() < 0.8  # gang sets are Parallel (admission)
        policy = "Parallel" if gang else rng.choice(("Parallel", "OrderedReady"))
        body = sts_manifest(name, rng.randint(1, 4), GANG if gang else None, policy=policy)
        await client.create(STATEFULSETS, body, NS)
        await _caught_up(ctrl, client)
        key = f"{NS}/{name}"
        await ctrl.sync(key)
        await _caught_up(ctrl, client)
        await _change(client, name, CHANGES[(n + seed) % len(CHANGES)], rng)
        await _caught_up(ctrl, client)
        sts = ctrl.control.newest(key, ctrl.sets.get_by_name(NS, name))
        quiet = ctrl._still_quiet(key, sts, ctrl._selector(key, sts))
        ctrl.quiet_shortcut = False
        calls, made = ctrl.client.calls, events[0]
        try:
            await ctrl.sync(key)
            failed = False
        except Exception:  # e.g. the released pod's name is taken: a call was made all the same
            failed = True
        ctrl.quiet_shortcut = True
        wrote = failed or ctrl.client.calls != calls or events[0] != made
        seen["quiet" if quiet else "full"] += 1
        assert not (quiet and wrote), (seed, name, CHANGES[(n + seed) % len(CHANGES)])
    return seen


@pytest.mark.parametrize("seed", range(4))
async def test_the_shortcut_applies_only_where_the_full_sync_writes_nothing(
    cp: ControlPlane, client: Client, seed: int
) -> None:
    seen = await _compare(cp, client, seed)
    assert seen["quiet"] >= 4 and seen["full"] >= 4, seen


async def test_a_gang_set_s_second_sync_after_its_bindings_takes_the_shortcut(
    cp: ControlPlane, client: Client
) -> None:
    ctrl = await start_statefulset_controller(cp)
    ctrl.enqueue = lambda *a, **k: None  # type: ignore[method-assign]
    ctrl.enqueue_after = lambda *a, **k: None  # type: ignore[method-assign]
    await client.create(STATEFULSETS, sts_manifest("g", 3, GANG), NS)
    await _caught_up(ctrl, client)
    await ctrl.sync(f"{NS}/g")
    await _caught_up(ctrl, client)
    await _change(client, "g", "bind", random.Random(0))
    await _change(client, "g", "pod-group-status", random.Random(0))
    await _caught_up(ctrl, client)
    assert f"{NS}/g" in ctrl._quiet
    sts = ctrl.sets.get_by_name(NS, "g")
    assert ctrl._still_quiet(f"{NS}/g", sts, ctrl._selector(f"{NS}/g", sts))
    calls = ctrl.client.calls
    await ctrl.sync(f"{NS}/g")
    assert ctrl.client.calls == calls


@pytest.mark.parametrize("over", [False, True])
async def test_a_set_s_state_is_vouched_only_up_to_quiet_max_replicas(
    cp: ControlPlane, client: Client, over: bool
) -> None:
    """Recording and checking the state are O(replicas) per sync: a set bigger than
    QUIET_MAX_REPLICAS is never vouched (its syncs all take the full path), one of that size is."""
    ctrl = await start_statefulset_controller(cp)
    ctrl.enqueue = lambda *a, **k: None  # type: ignore[method-assign]
    ctrl.enqueue_after = lambda *a, **k: None  # type: ignore[method-assign]
    replicas = QUIET_MAX_REPLICAS + (1 if over else 0)
    await client.create(STATEFULSETS, sts_manifest("big", replicas), NS)
    await _caught_up(ctrl, client)
    await ctrl.sync(f"{NS}/big")
    await _caught_up(ctrl, client)
    assert (f"{NS}/big" in ctrl._quiet) is not over
