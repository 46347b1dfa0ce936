"""A heap that compacts its removed entries pops exactly what lazy deletion one by one pops.

``_KeyedHeap`` drops a run of removed entries at its top by heaping the live entries again when
removed ones are many (a PodGroup cycle takes a whole gang out of activeQ at once). Randomized
differential test: the same history of pushes (re-pushes too), single removals, whole-"gang"
removals, pops and peeks on a heap that compacts every time its top is removed, one with the
default thresholds and one that never compacts, each against a brute-force model (the least live
entry by ``less``, then insertion order); keyed (``(key, seq, item)``) and unkeyed (``(item,)``)
heaps, priorities and arrival times with many ties. And a scheduler's queue popping gangs whose
members arrived interleaved (the first member, then ``pop_group_members``), with the defaults
and never compacting: the same pods in the same order.
"""

from __future__ import annotations

import functools
import heapq
import random
import types
from typing import Any

import pytest

import scheduler.queue as queue_module
from featuregates import FeatureGate
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.queue import QueuedPodInfo, SchedulingQueue, _KeyedHeap
from scheduler.testing import FakeClock, make_pod

#: (COMPACT_SHARE, COMPACT_MIN) per heap: compact whenever the top is removed, the defaults, never
_SETTINGS = ((10**9, 1), (queue_module.COMPACT_SHARE, queue_module.COMPACT_MIN), (1, 10**9))


def _count_heapify(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the heaps the queue module heapifies from now on (a compaction each), in order."""
    heapified: list[int] = []
    heapify = heapq.heapify
    monkeypatch.setattr(
        queue_module,
        "heapq",
        types.SimpleNamespace(
            heappush=heapq.heappush,
            heappop=heapq.heappop,
            heapify=lambda h: (heapified.append(len(h)), heapify(h)),
        ),
    )
    return heapified


def _heaps(keyed: bool) -> tuple[list[_KeyedHeap], Framework]:
    fw = Framework(default_profile(), registry=default_registry())
    key = fw.queue_sort_key() if keyed else None
    return [_KeyedHeap(fw.queue_sort_less, key) for _ in _SETTINGS], fw


def _settings(monkeypatch: pytest.MonkeyPatch, i: int) -> None:
    """The thresholds of heap ``i`` (the module's, read at each pop and peek)."""
    share, least = _SETTINGS[i]
    monkeypatch.setattr(queue_module, "COMPACT_SHARE", share)
    monkeypatch.setattr(queue_module, "COMPACT_MIN", least)


@pytest.mark.parametrize("keyed", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_compacting_heaps_pop_what_the_model_pops(
    monkeypatch: pytest.MonkeyPatch, seed: int, keyed: bool
) -> None:
    rng = random.Random(seed)
    heaps, fw = _heaps(keyed)
    # the model: uid -> (QueuedPodInfo, insertion number); the least by ``less``, then that number
    model: dict[str, tuple[QueuedPodInfo, int]] = {}
    order = [0]

    def cmp(a: tuple[QueuedPodInfo, int], b: tuple[QueuedPodInfo, int]) -> int:
        if fw.queue_sort_less(a[0], b[0]):
            return -1
        if fw.queue_sort_less(b[0], a[0]):
            return 1
        return (a[1] > b[1]) - (a[1] < b[1])

    def least() -> QueuedPodInfo | None:
        if not model:
            return None
        return min(model.values(), key=functools.cmp_to_key(cmp))[0]

    compactions = [0, 0, 0]
    heapified = _count_heapify(monkeypatch)
    for step in range(600):
        action = rng.random()
        if action < 0.45 or not model:
            uid = f"p{rng.randrange(step + 1)}" if rng.random() < 0.1 else f"p{step}"
            pod = make_pod(uid, priority=rng.choice([0, 0, 10, 100, -5]))
            pod["metadata"]["uid"] = uid
            q = QueuedPodInfo(PodInfo(pod), timestamp=float(rng.choice([1, 2, 3, step])))
            for i, h in enumerate(heaps):
                _settings(monkeypatch, i)
                h.push(q)
            order[0] += 1
            model[uid] = (q, order[0])
        elif action < 0.55:
            uid = rng.choice(sorted(model))
            for i, h in enumerate(heaps):
                _settings(monkeypatch, i)
                assert h.remove(uid) is model[uid][0]
            del model[uid]
        elif action < 0.62:
            # a gang taken out at once: the oldest entries, or random ones
            live = sorted(model, key=lambda u: model[u][1])
            n = rng.randrange(1, len(live) + 1)
            gang = live[:n] if rng.random() < 0.7 else rng.sample(live, n)
            for uid in gang:
                for i, h in enumerate(heaps):
                    _settings(monkeypatch, i)
                    h.remove(uid)
                del model[uid]
        else:
            want = least()
            peek = rng.random() < 0.3
            for i, h in enumerate(heaps):
                made = len(heapified)
                _settings(monkeypatch, i)
                got = h.peek() if peek else h.pop()
                assert got is want, (step, i)
                compactions[i] += len(heapified) - made
            if want is not None and not peek:
                del model[want.uid]
        for h in heaps:
            assert len(h) == len(model)
            assert h._dead == sum(1 for e in h._heap if e[-1].removed)
    assert compactions[0] > 0 and compactions[2] == 0


def _gang_queue(seed: int) -> tuple[Cache, SchedulingQueue]:
    """A scheduler's queue (the default profile, GangScheduling's PreEnqueue) and its cache."""
    cache = Cache()
    handle = Handle(
        rng=random.Random(seed),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        gates=FeatureGate(),
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    q = SchedulingQueue(
        fw.queue_sort_less, FakeClock(), {"default-scheduler": fw}, sort_key=fw.queue_sort_key()
    )
    fw.handle.nominator = q
    return cache, q


def _gang_pops(monkeypatch: pytest.MonkeyPatch, seed: int, least: int) -> list[list[str]]:
    """Gangs whose members arrive interleaved, popped as the PodGroup cycle pops them (the first
    member, then the rest at once), with loose pods and deletes between: each pop's uids."""
    monkeypatch.setattr(queue_module, "COMPACT_MIN", least)
    rng = random.Random(seed)
    cache, q = _gang_queue(seed)
    arrivals: list[Any] = []
    for g in range(rng.randrange(2, 6)):
        name, size = f"g{g}", rng.randrange(40, 160)
        cache.add_pod_group(
            {
                "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
            }
        )
        for i in range(size):
            pod = make_pod(f"{name}-{i}", uid=f"{name}-u{i}", priority=rng.choice([0, 0, 10]))
            pod["spec"]["schedulingGroup"] = {"podGroupName": name}
            arrivals.append(pod)
    arrivals += [make_pod(f"loose-{i}", uid=f"loose-u{i}") for i in range(rng.randrange(0, 30))]
    rng.shuffle(arrivals)
    for pod in arrivals:
        cache.add_unscheduled_pod(pod)
        q.add(pod)
    pops: list[list[str]] = []
    while True:
        if rng.random() < 0.2 and arrivals:
            q.delete(arrivals.pop(rng.randrange(len(arrivals))))
        first = q.pop_nowait()
        if first is None:
            return pops
        key = q.group_of(first.uid)
        members = [first, *(q.pop_group_members(key, exclude=first.uid) if key else [])]
        for m in members:
            q.done(m.uid)
        pops.append([m.uid for m in members])


@pytest.mark.parametrize("seed", range(6))
def test_a_queue_compacting_at_its_defaults_pops_gangs_as_one_that_never_does(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    heapified = _count_heapify(monkeypatch)
    never = _gang_pops(monkeypatch, seed, 10**9)
    assert not heapified
    default = _gang_pops(monkeypatch, seed, _SETTINGS[1][1])  # (the module's default, patched above)
    assert default == never
    assert heapified  # the defaults compacted (a gang's members are >= 1/8 of the heap)
