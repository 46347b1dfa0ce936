"""A big gang's per-member bookkeeping outside the search, against plain reference models.

* the queue's in-flight pods finishing (``SchedulingQueue.done``), which compacts its ordered
  dict as pods finish oldest first: the events kept and the in-flight order must be what the
  general rule (keep every event from the oldest in-flight pod's on) gives, whatever the order
  pods are popped and finish in;
* the cache's assume / binding finished / confirmation / forget of group members, which passes
  the pod key it already has to the PodGroup states, finds a confirmed pod from the node's
  newest end and skips the binding-finished lookup without a TTL: every node's pods, the
  accounting, the groups' states and the expiry deadlines must be what a model of kube's cache
  says;
* a pod waiting at Permit without a timeout holds no timer; with one, it is rejected on time.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

import pytest

from apiserver.api.types import Obj
from scheduler.cache import Cache, CacheError
from scheduler.defaults import default_profile, default_registry
from scheduler.events import ASSIGNED_POD_ADD, NODE_ADD
from scheduler.framework import Framework, WaitingPod
from scheduler.nodeinfo import PodInfo
from scheduler.queue import SchedulingQueue
from scheduler.status import Code
from scheduler.testing import FakeClock, make_node, make_pod


def _queue() -> SchedulingQueue:
    fw = Framework(default_profile(), registry=default_registry())
    return SchedulingQueue(fw.queue_sort_less, FakeClock(), {"default-scheduler": fw})


@pytest.mark.parametrize("seed", range(12))
def test_in_flight_pods_finishing_keep_the_events_the_general_rule_keeps(seed: int) -> None:
    rng = random.Random(seed)
    q = _queue()
    pods = [make_pod(f"p{i}", uid=f"u{i}") for i in range(rng.choice([40, 300, 1200]))]
    for p in pods:
        q.add(p)
    model: dict[str, int] = {}  # uid -> first event seq it has not seen, in pop order
    events: deque[int] = deque()
    seq = 0
    waiting = list(range(len(pods)))
    while waiting or model:
        r = rng.random()
        if waiting and (r < 0.35 or not model):
            qp = q.pop_nowait()
            assert qp is not None
            waiting.pop()
            model.pop(qp.uid, None)
            model[qp.uid] = seq
        elif r < 0.6:
            ev = ASSIGNED_POD_ADD if rng.random() < 0.5 else NODE_ADD
            q.move_all_to_active_or_backoff(ev, None, make_node("n"))
            if model:
                events.append(seq)
                seq += 1
        else:
            # mostly oldest first (a gang's bindings), sometimes any in-flight pod
            uids = list(model)
            uid = uids[0] if rng.random() < 0.8 else rng.choice(uids)
            q.done(uid)
            del model[uid]
            if not model:
                events.clear()
            else:
                oldest = min(model.values())
                while events and events[0] < oldest:
                    events.popleft()
        assert list(q._in_flight) == list(model)
        assert [e[0] for e in q._events] == list(events)


def _member(name: str, group: str, cpu: str = "100m", node_name: str = "") -> Obj:
    pod = make_pod(name, uid=f"uid-{name}", requests={"cpu": cpu}, node_name=node_name)
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


def _bound(pod: Obj, node: str) -> Obj:
    return {
        **pod,
        "metadata": {**pod["metadata"], "resourceVersion": "9"},
        "spec": {**pod["spec"], "nodeName": node},
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


@pytest.mark.parametrize("ttl", [0.0, 30.0])
@pytest.mark.parametrize("seed", range(10))
def test_members_assumed_confirmed_and_forgotten_match_a_model_of_the_cache(seed: int, ttl: float) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    cache = Cache(clock, assumed_pod_ttl=ttl)
    nodes = [f"n{i}" for i in range(4)]
    for n in nodes:
        cache.add_node(make_node(n, cpu="64"))
    names = [f"m{i}" for i in range(40)]
    group_of = {n: f"g{i % 3}" for i, n in enumerate(names)}
    cpu_of = {n: f"{100 * (1 + i % 4)}m" for i, n in enumerate(names)}
    #: model: node -> pod names in order; pod -> (state, node); finished assumed pods
    on_node: dict[str, list[str]] = {n: [] for n in nodes}
    state: dict[str, tuple[str, str]] = {}
    finished: set[str] = set()
    pods: dict[str, Obj] = {}
    for _ in range(400):
        name = rng.choice(names)
        pod = pods.get(name) or _member(name, group_of[name], cpu_of[name])
        st = state.get(name)
        r = rng.random()
        if st is None:
            node = rng.choice(nodes)
            pi = PodInfo(pod)
            assumed = cache.assume_pod(pod, node, pi if rng.random() < 0.7 else None)
            assert assumed.node_name == node
            pods[name] = pod
            on_node[node].append(name)
            state[name] = ("assumed", node)
        elif st[0] == "assumed" and r < 0.3:
            cache.finish_binding(pod)
            finished.add(name)
        elif st[0] == "assumed" and r < 0.8:
            # the bound pod comes back: mostly where it was assumed, sometimes elsewhere
            node = st[1] if rng.random() < 0.8 else rng.choice(nodes)
            cache.add_pod(_bound(pod, node))
            on_node[st[1]].remove(name)
            on_node[node].append(name)
            state[name] = ("assigned", node)
            finished.discard(name)
        elif st[0] == "assumed":
            cache.forget_pod(pod)
            on_node[st[1]].remove(name)
            state[name] = ("unscheduled", "")
            del pods[name]
            finished.discard(name)
        elif st[0] == "assigned" and r < 0.5:
            with pytest.raises(CacheError):
                cache.forget_pod(pod)
        else:
            cache.remove_pod(_bound(pod, st[1]) if st[0] == "assigned" else pod)
            if st[0] == "assigned":
                on_node[st[1]].remove(name)
            state.pop(name, None)
            pods.pop(name, None)

        for n in nodes:
            ni = cache.nodes[n]
            assert [p.name for p in ni.pods] == on_node[n]
            want_cpu = sum(int(cpu_of[p].removesuffix("m")) for p in on_node[n])
            assert ni.requested.get("cpu", 0) == want_cpu
        assert cache.assumed_pod_keys() == {f"default/{p}" for p, s in state.items() if s[0] == "assumed"}
        for g in {"g0", "g1", "g2"}:
            gs = cache.pod_group_state("default", g)
            members = {p: s for p, s in state.items() if group_of[p] == g and s[0] != "unscheduled"}
            if gs is None:
                assert not members
                continue
            assert gs.assumed == {f"default/{p}": s[1] for p, s in members.items() if s[0] == "assumed"}
            assert gs.assigned == {f"default/{p}": s[1] for p, s in members.items() if s[0] == "assigned"}
        want_deadlines = {f"default/{p}" for p in finished} if ttl > 0 else set()
        assert set(cache._deadlines) == want_deadlines


def test_a_pod_waiting_without_a_timeout_holds_no_timer() -> None:
    async def run() -> Any:
        wp = WaitingPod(PodInfo(make_pod("p", uid="u")), {"GangScheduling": 0.0})
        assert wp._timers == ()
        wp.allow("GangScheduling")
        return await wp.wait()

    assert asyncio.run(run()) is None


def test_a_pod_waiting_with_a_timeout_is_rejected_when_it_fires() -> None:
    async def run() -> Any:
        loop = asyncio.get_running_loop()
        wp = WaitingPod(PodInfo(make_pod("p", uid="u")), {"A": 0.0, "B": 30.0})
        assert len(wp._timers) == 1 and wp.pending == {"A", "B"}
        timer = wp._timers[0]
        assert timer.when() == pytest.approx(loop.time() + 30.0, abs=1.0)
        timer._run()  # the loop firing it, without waiting 30 s
        status = await wp.wait()
        assert timer.cancelled()  # finishing cancels the timers
        return status

    status = asyncio.run(run())
    assert status is not None and status.code == Code.UNSCHEDULABLE
    assert (
        status.plugin == "B" and status.message() == "rejected due to timeout after waiting 30s at plugin B"
    )
