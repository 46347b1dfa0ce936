"""A node's pod indexes follow its changed pods only, and equal a rebuild from all of them.

``Snapshot._reindex`` tells the pod label index and the spreading counts only the pods that
changed on a node since it was last indexed (``scheduler/pod_delta.py``): a pod added or removed,
relabelled, now terminating. These tests drive random histories (cache assumes, confirmations,
relabels, deletions, node relabels; the snapshot's own assumes, deferred or not, and forgets)
and check after each snapshot update that the kept indexes equal indexes built afresh from
the snapshot's NodeInfos as they are.
"""

from __future__ import annotations

import random
import sys
from typing import Any

import pytest

from scheduler.cache import PodLabelIndex, Snapshot, SpreadCounts
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.pod_delta import pods_changed, same_for_indexes
from scheduler.testing import make_node, make_pod, zoned_cache
from tests.unit.scheduler.cache_history import APPS, ZONE, CacheHistory, Mix, app_counter, pod_labels

#: no gangs: single pods of every kind of event
MIX = Mix(
    gang=0.0,
    assume=0.25,
    confirm=0.45,
    relabel=0.55,
    remove=0.62,
    node_zone=0.67,
    snapshot_assume=0.85,
    forget=0.92,
)


def _pods_counter(app: str) -> Any:
    """``app_counter`` as a sum over a list of pods (what ``SpreadCounts.shift`` counts a delta with)."""
    count = app_counter(app)
    return lambda pods: count(NodeInfo(make_node("x"), pods))


#: whether the snapshot's spreading counts are given ``count_pods`` (a changed node's count then
#: moves by its delta, ``SpreadCounts.shift``) or not (recounted, ``SpreadCounts.update``)
SHIFT = [True]


def _spread(snap: Snapshot, app: str) -> SpreadCounts:
    return snap.spread_counts(
        f"app={app}",
        ZONE,
        app_counter(app),
        required=frozenset({("default", "app", app)}),
        count_pods=_pods_counter(app) if SHIFT[0] else None,
    )


def _kept(snap: Snapshot) -> dict[str, Any]:
    """The snapshot's own indexes (each built on first use, then kept current)."""
    snap.nodes_with_pod_labels("default", [("app", "a")])  # builds the label index
    labels = snap._pod_labels
    assert labels is not None
    return {
        "labels": (labels.as_sets(), {n: dict(c) for n, c in labels._of.items()}),
        "spread": {
            app: (dict(agg.by_value), dict(agg.nodes_counted()))
            for app in APPS
            for agg in [_spread(snap, app)]
        },
    }


def _fresh(snap: Snapshot) -> dict[str, Any]:
    """The same indexes built from every pod of the snapshot's NodeInfos now."""
    labels = PodLabelIndex()
    for name, ni in snap.node_info_map.items():
        labels.update(name, ni)
    spread = {}
    for app in APPS:
        agg = SpreadCounts(ZONE, app_counter(app), app, frozenset({("default", "app", app)}))
        for name, ni in snap.node_info_map.items():
            agg.update(name, ni)
        spread[app] = (dict(agg.by_value), dict(agg.nodes_counted()))
    return {
        "labels": (labels.as_sets(), {n: dict(c) for n, c in labels._of.items()}),
        "spread": spread,
    }


@pytest.mark.parametrize("shift", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_pod_indexes_told_only_changed_pods_equal_a_rebuild(
    seed: int, shift: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    deltas = 0
    shifts = 0
    real = pods_changed
    real_shift = SpreadCounts.shift

    def counting(old: Any, new: Any) -> Any:
        nonlocal deltas
        deltas += 1
        return real(old, new)

    def counting_shift(self: SpreadCounts, *args: Any) -> None:
        nonlocal shifts
        shifts += 1
        real_shift(self, *args)

    monkeypatch.setattr("scheduler.cache.pods_changed", counting)
    monkeypatch.setattr(SpreadCounts, "shift", counting_shift)
    monkeypatch.setattr(sys.modules[__name__], "SHIFT", [shift])
    cache, names = zoned_cache(10)
    snap = cache.snapshot()
    _kept(snap)
    history = CacheHistory(cache, snap, names, MIX)
    for step in range(300):
        history.step(rng, step)
        if rng.random() < 0.15:
            assert _kept(snap) == _fresh(snap), step
        if rng.random() < 0.4:
            history.update_snapshot()
            assert _kept(snap) == _fresh(snap), step
    assert deltas > 100  # the indexes were told deltas, not only rebuilt
    assert (shifts > 20) if shift else not shifts  # the counts moved by deltas (or recounted)


def _changed_by_lookup(old: list[PodInfo], new: list[PodInfo]) -> tuple[list[PodInfo], list[PodInfo]]:
    """``pods_changed`` without its in-place fast path: every pod looked up by key."""
    before = {p.key: p for p in old}
    removed: list[PodInfo] = []
    added: list[PodInfo] = []
    for p in new:
        q = before.pop(p.key, None)
        if q is None:
            added.append(p)
        elif not same_for_indexes(q, p):
            removed.append(q)
            added.append(p)
    removed.extend(before.values())
    return removed, added


@pytest.mark.parametrize("seed", range(40))
def test_pods_changed_in_place_equals_the_lookup(seed: int) -> None:
    """Random pod lists and their successors (pods kept as the same object or as a new PodInfo
    seen alike or not, dropped, moved to the end, new ones appended or inserted) give the same
    delta through the in-place path as by key lookup."""
    rng = random.Random(seed)

    def info(k: int, labels: dict[str, str], deleting: bool = False) -> PodInfo:
        p = make_pod(f"p{k}", uid=f"u{k}", labels=labels)
        if deleting:
            p["metadata"]["deletionTimestamp"] = "2026-12-05T10:00:00Z"
        return PodInfo(p)

    in_place = 0
    for trial in range(60):
        old = [info(k, pod_labels(rng, k)) for k in range(rng.randrange(0, 8))]
        new: list[PodInfo] = []
        for p in old:
            r = rng.random()
            if r < 0.5:
                new.append(p)
            elif r < 0.75:
                new.append(PodInfo(p.pod))  # confirmed: a new PodInfo seen alike
            elif r < 0.83:
                new.append(info(int(p.name[1:]), pod_labels(rng, trial)))  # relabelled
            elif r < 0.88:
                new.append(info(int(p.name[1:]), dict(p.labels), deleting=True))
            elif r < 0.94:
                continue  # removed
            else:
                new.insert(rng.randrange(len(new) + 1), p)  # moved
        for k in range(rng.randrange(0, 3)):
            extra = info(100 + trial * 10 + k, pod_labels(rng, k))
            if rng.random() < 0.8:
                new.append(extra)
            else:
                new.insert(rng.randrange(len(new) + 1), extra)
        got = pods_changed(old, new)
        want = _changed_by_lookup(old, new)
        assert got == want, (trial, [p.key for p in old], [p.key for p in new])
        if not got[0] and len(new) >= len(old) and [p.key for p in new[: len(old)]] == [p.key for p in old]:
            in_place += 1
    assert in_place > 10
