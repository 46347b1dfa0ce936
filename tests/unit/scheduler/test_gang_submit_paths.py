"""A big gang's per-member submit and binding shortcuts, against the general paths they replace.

* ``GangScheduling.permit`` (group, policy and gates read once) answers and releases the gang
  exactly as the former reading through ``_group``/``is_gang``/``min_count`` did, for random
  groups, gates, conditions and member counts;
* a binding task leaves ``Scheduler._binding_tasks`` itself when its cycle ends (no done
  callback), and one cancelled before its first step does not keep ``wait_idle`` waiting.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from apiserver.api.types import Obj
from featuregates import GENERIC_WORKLOAD, POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY, FeatureGate
from scheduler.interfaces import Handle
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.gang_scheduling import NO_TIMEOUT, GangScheduling
from scheduler.podgroup_status import replacements_schedule_freely
from scheduler.podgroups import PodGroupState, is_gang, min_count, pod_group_key, pod_group_name
from scheduler.status import Code, Status
from scheduler.testing import make_pod

# --- GangScheduling.permit against the former reading -------------------------------------------


def _former_permit(pl: GangScheduling, pod_info: PodInfo) -> tuple[Status | None, float, list[str]]:
    """The permit as it read before (group via ``_group``, ``is_gang``, ``_enabled``,
    ``_schedules_freely``, ``min_count``, ``pod_group_key``); the keys it would release."""
    released: list[str] = []
    handle = pl.handle
    name = pod_group_name(pod_info.pod)
    getter = handle.get_pod_group
    ns = (pod_info.pod.get("metadata") or {}).get("namespace", "")
    pg = getter(ns, name) if getter is not None and name else None
    gates = handle.gates
    enabled = gates is None or gates.enabled(GENERIC_WORKLOAD)
    if not name or pg is None or not is_gang(pg) or not enabled or replacements_schedule_freely(gates, pg):
        return None, 0.0, released
    state_of = handle.pod_group_state
    st = state_of(pod_info.namespace, name) if state_of is not None else None
    if st is not None and st.scheduled_count() >= min_count(pg):
        released.append(pod_group_key(pod_info.pod))
        return None, 0.0, released
    return Status(Code.WAIT, f"waiting for the gang of pod group {name!r} to be placed"), NO_TIMEOUT, released


def _random_group(rng: random.Random) -> Obj | None:
    if rng.random() < 0.1:
        return None
    spec: Obj = {}
    r = rng.random()
    if r < 0.7:
        spec["schedulingPolicy"] = {"gang": {"minCount": rng.choice([None, 0, 1, 2, 3, 5])}}
    elif r < 0.85:
        spec["schedulingPolicy"] = {"basic": {}}
    pg: Obj = {"metadata": {"name": "g", "namespace": "ns"}, "spec": spec}
    if rng.random() < 0.4:
        status = rng.choice(["True", "False"])
        pg["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": status}]}
    return pg


@pytest.mark.parametrize("seed", range(10))
def test_permit_answers_and_releases_as_the_former_reading(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        pg = _random_group(rng)
        st = PodGroupState("ns/g")
        for i in range(rng.randrange(0, 6)):
            st.assumed[f"ns/p{i}"] = "n"
        gates: FeatureGate | None = rng.choice(
            [
                None,
                FeatureGate(),
                FeatureGate(overrides={GENERIC_WORKLOAD: False}),
                FeatureGate(overrides={POD_GROUP_REPLACEMENTS_SCHEDULE_FREELY: True}),
            ]
        )
        handle = Handle(
            gates=gates,
            get_pod_group=rng.choice(
                [None, lambda ns, name, pg=pg: pg if (ns, name) == ("ns", "g") else None]
            ),
            pod_group_state=rng.choice(
                [None, lambda ns, name, st=st: st if (ns, name) == ("ns", "g") else None]
            ),
        )
        pl = GangScheduling(None, handle)
        released: list[str] = []
        pl.allow_group = released.append  # type: ignore[method-assign]
        group = rng.choice(["g", "g", "", "other"])
        pod = make_pod(f"p{rng.randrange(9)}", namespace="ns")
        if group:
            pod["spec"]["schedulingGroup"] = {"podGroupName": group}
        pi = PodInfo(pod)
        got_status, got_timeout = pl.permit(None, pi, "n")  # type: ignore[arg-type]
        want_status, want_timeout, want_released = _former_permit(pl, pi)
        assert (got_status, got_timeout, released) == (want_status, want_timeout, want_released)


# --- binding tasks leave the set themselves -----------------------------------------------------


@pytest.mark.anyio
async def test_a_binding_task_leaves_the_set_itself_and_a_task_cancelled_before_it_ran_is_dropped() -> None:
    from apiserver.client.interface import NODES, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.framework import CycleState
    from scheduler.scheduler import Scheduler
    from scheduler.testing import make_node

    plane = ControlPlane()
    sched: Scheduler | None = None
    try:
        client = plane.client("kube-scheduler")
        sched = Scheduler(client, seed=1)
        node = await client.create(NODES, make_node("n1"))
        sched.cache.add_node(node)
        pods = [await client.create(PODS, make_pod(f"p{i}"), "default") for i in range(3)]
        for p in pods:
            sched._on_pod_add(p)
        fw = sched.frameworks["default-scheduler"]
        tasks = []
        for _ in pods:
            q = sched.queue.pop_nowait()
            assert q is not None
            assert await sched.assume_and_bind(fw, CycleState(), q, "n1")
            (task,) = [t for t in sched._binding_tasks if t not in tasks]
            assert not task._callbacks  # type: ignore[attr-defined]  # no done callback
            tasks.append(task)
        while not all(t.done() for t in tasks):
            await asyncio.sleep(0)
        # out of the set in the step that finished it, no later callback needed
        assert not sched._binding_tasks
        assert all(t.exception() is None for t in tasks)
        bound = (await client.list(PODS, "default"))["items"]
        assert sorted(p["spec"].get("nodeName") for p in bound) == ["n1"] * 3

        async def never_started() -> None:
            raise AssertionError("cancelled before its first step")

        stray = asyncio.get_running_loop().create_task(never_started())
        stray.cancel()
        sched._binding_tasks.add(stray)
        await sched.wait_idle()
        assert not sched._binding_tasks
    finally:
        if sched is not None:
            await sched.recorder.stop()
        await plane.stop()
