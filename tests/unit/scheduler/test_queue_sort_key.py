"""The activeQ ordered by a sort key (compared in C) pops pods exactly as ordering by ``less`` does.

A randomized differential test: the same history of adds, deletes, pops and requeues on two
queues, one given the framework's ``queue_sort_key`` and one ordering by ``queue_sort_less``
alone, must pop the same pods in the same order (priorities and arrival times with many ties,
so the insertion-sequence tiebreak is exercised too).
"""

from __future__ import annotations

import random

import pytest

from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.queue import QueuedPodInfo, SchedulingQueue
from scheduler.testing import FakeClock, make_pod


def _queues(clock: FakeClock) -> tuple[SchedulingQueue, SchedulingQueue]:
    fw = Framework(default_profile(), registry=default_registry())
    key = fw.queue_sort_key()
    assert key is not None  # the default profile's PrioritySort offers one
    profiles = {"default-scheduler": fw}
    return (
        SchedulingQueue(fw.queue_sort_less, clock, profiles, sort_key=key),
        SchedulingQueue(fw.queue_sort_less, clock, profiles),
    )


@pytest.mark.parametrize("seed", range(6))
def test_keyed_active_queue_pops_in_the_order_less_gives(seed: int) -> None:
    rng = random.Random(seed)
    clock = FakeClock()
    keyed, plain = _queues(clock)
    live: list[str] = []
    popped: tuple[list[str], list[str]] = ([], [])
    for step in range(400):
        action = rng.random()
        if action < 0.5 or not live:
            name = f"p{step}"
            pod = make_pod(name, priority=rng.choice([0, 0, 10, 100, -5]))
            keyed.add(pod)
            plain.add(pod)
            live.append(name)
        elif action < 0.6:
            name = live.pop(rng.randrange(len(live)))
            pod = make_pod(name)
            keyed.delete(pod)
            plain.delete(pod)
        else:
            for q, out in zip((keyed, plain), popped, strict=True):
                qp = q.pop_nowait()
                if qp is None:
                    out.append("")
                    continue
                out.append(qp.pod_info.name)
                q.done(qp.uid)
            if popped[0][-1]:
                live.remove(popped[0][-1])
        if rng.random() < 0.3:
            clock.step(rng.choice([0.0, 0.5, 1.0]))  # equal timestamps: the sequence breaks ties
    for q, out in zip((keyed, plain), popped, strict=True):
        while (qp := q.pop_nowait()) is not None:
            out.append(qp.pod_info.name)
            q.done(qp.uid)
    assert popped[0] == popped[1]
    assert len([n for n in popped[0] if n]) > 100


def test_priority_sort_key_agrees_with_less() -> None:
    """``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``, over pairs with equal fields."""
    plugin = PrioritySort()
    rng = random.Random(3)
    infos = []
    for i in range(40):
        pod = make_pod(f"p{i}", priority=rng.choice([-1, 0, 7, 7, 1000]))
        infos.append(QueuedPodInfo(PodInfo(pod), rng.choice([0.0, 1.0, 1.5])))
    for a in infos:
        for b in infos:
            assert plugin.less(a, b) == (plugin.sort_key(a) < plugin.sort_key(b))


def test_without_a_queue_sort_plugin_the_key_is_the_arrival_time() -> None:
    fw = Framework(default_profile(), registry=default_registry())
    fw.queue_sort_plugin = None
    key = fw.queue_sort_key()
    assert key is not None
    clock = FakeClock()
    q = SchedulingQueue(fw.queue_sort_less, clock, {"default-scheduler": fw}, sort_key=key)
    for name, prio in [("a", 0), ("b", 100), ("c", 50)]:
        q.add(make_pod(name, priority=prio))
        clock.step(0.1)
    order = []
    while (qp := q.pop_nowait()) is not None:
        order.append(qp.pod_info.name)
        q.done(qp.uid)
    assert order == ["a", "b", "c"]
