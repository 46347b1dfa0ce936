"""A heap that compacts its removed entries pops exactly what lazy deletion one by one pops.

``_KeyedHeap`` drops a run of removed entries at its top by heaping the live entries again when
removed ones are many (a PodGroup cycle takes a whole gang out of activeQ at once). Randomized
differential test: the same history of pushes (re-pushes too), single removals, whole-"gang"
removals, pops and peeks on a heap that compacts every time its top is removed, one with the
default thresholds and one that never compacts, each against a brute-force model (the least live
entry by ``less``, then insertion order); keyed (``(key, seq, item)``) and unkeyed (``(item,)``)
heaps, priorities and arrival times with many ties.
"""

from __future__ import annotations

import functools
import heapq
import random
import types

import pytest

import scheduler.queue as queue_module
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.nodeinfo import PodInfo
from scheduler.queue import QueuedPodInfo, _KeyedHeap
from scheduler.testing import make_pod

#: (COMPACT_SHARE, COMPACT_MIN) per heap: compact whenever the top is removed, the defaults, never
_SETTINGS = ((10**9, 1), (queue_module.COMPACT_SHARE, queue_module.COMPACT_MIN), (1, 10**9))


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
