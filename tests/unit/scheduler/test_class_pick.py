"""A run's pick over classes of alike nodes (scheduler/class_pick.py) against its pick from the columns.

On test_placement_run.py's random clusters (narrow ones: racks and zones, labels missing, odd
pods, nodes filling up; wide ones: windows of 100 nodes over 200-400, as a big gang's search
over 5,000 nodes), every run in arrays picks its pods over classes. At each such pick the
columns' pick (``PlacementRun._pick_from_columns``: the spreading column gathered and scored,
NormalizeScore, totals, ``score_totals.select``) is made from the same random state, and both
must give the same host, the same number of tied nodes and the same random draw. The columns
are brought up to date only at some picks (chosen at random), so the class pick also runs over
a column left behind by several picks before the columns read it again. A window's run reading
the shared domain counts (``SharedCounts``) has them checked against PodTopologySpread's own
PreScore on the search's snapshot at each pick.

Besides, test_placement_run.py's comparisons of runs with the pod-by-pod cycle run with the
class pick on (its default); here the class pick off must give the same searches too.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import scheduler.class_pick as class_pick
import scheduler.placement_run as placement_run
from scheduler.class_pick import ClassPick

from .test_placement_run import _search


def _columns_ties(run: Any) -> int:
    """The number of nodes tied for the best total in the run's (just caught up) columns."""
    totals = run.base
    for c in run.columns:
        if c.carried is not None:
            totals = totals + (c.norm if c.weight == 1 else c.weight * c.norm)
    return int((totals == totals.max()).sum())


def _assert_shared_counts_are_pre_scores(cp: ClassPick, run: Any) -> None:
    """The shared table's count of each domain of the run's nodes equals PodTopologySpread's
    PreScore for the run's pod over the run's nodes on the search's snapshot as it is now (every
    pod assumed so far in it): what the run would count had it been told of every pod."""
    from scheduler.interfaces import CycleState
    from scheduler.plugins import pod_topology_spread as pts

    spread = cp.spread
    assert cp.shared is not None and run.pod_info is not None
    st = CycleState()
    assert spread.plugin.pre_score(st, run.pod_info, list(run.feasible)) is None
    fresh = st.get(pts._PRE_SCORE_KEY).counts
    for i, values in enumerate(cp.values):
        if cp.domain[i]:
            want = {v: fresh[i].get(v, 0) for v in values}
            assert {v: cp.shared.counts[i].get(v, 0) for v in values} == want


def _checking_pick(counts: dict[str, int], every: random.Random, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A ``ClassPick.pick`` that checks itself against its run's columns; the run whose pick it is
    is the one whose ``next`` asks (a class pick keeps no reference to its run)."""
    real_pick = ClassPick.pick
    real_next = placement_run.PlacementRun.next
    asking: list[Any] = [None]

    def next_(self: Any, state: Any, pod_info: Any) -> str | None:
        asking[0] = self
        try:
            return real_next(self, state, pod_info)
        finally:
            asking[0] = None

    monkeypatch.setattr(placement_run.PlacementRun, "next", next_)

    def pick(self: ClassPick, rng: random.Random) -> int | None:
        run = asking[0]
        assert run is not None and run.classes is self
        before = rng.getstate()
        q = real_pick(self, rng)
        if q is None:
            return None  # (the columns' range check ends the run: not reached by spreading scores)
        counts["class"] += 1
        if self.shared is not None:
            counts["shared"] += 1
            _assert_shared_counts_are_pre_scores(self, run)
        if every.random() < 0.5:
            return q  # the columns left behind
        mine = (run.feasible[q].name, self.ties, rng.getstate())
        rng.setstate(before)
        host = run._pick_from_columns()
        assert host is not None
        theirs = (host, _columns_ties(run), rng.getstate())
        assert mine == theirs
        counts["checked"] += 1
        counts["several"] += self.ties > 1
        return q

    return pick


@pytest.mark.parametrize("byte_ids", [256, 0, 3], ids=["bytes", "numpy", "bytes-then-numpy"])
@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
@pytest.mark.parametrize("block", range(3))
def test_the_class_pick_picks_as_the_columns_every_pick(
    block: int, wide: bool, byte_ids: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``byte_ids``: the class ids kept one byte each up to 256 classes (the default), in a
    numpy array from the start, or one byte each until a fourth class appears in a run."""
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1)
    monkeypatch.setattr(class_pick, "_BYTE_IDS", byte_ids)
    counts = {"class": 0, "checked": 0, "several": 0, "shared": 0}
    monkeypatch.setattr(ClassPick, "pick", _checking_pick(counts, random.Random(block), monkeypatch))
    seeds = range(block * 60, block * 60 + 60) if not wide else range(block * 20, block * 20 + 20)
    for seed in seeds:
        _search(seed, carry_runs=True, wide=wide)
    assert counts["checked"] > (30 if not wide else 100)  # the class pick was taken
    assert counts["several"] > (2 if not wide else 40)  # with ties (a draw, the r-th tied node)
    if wide:
        assert counts["shared"] > 100  # the windows' runs read the shared counts


@pytest.mark.parametrize("off", ["CLASS_PICK", "SHARED_COUNTS"], ids=["class-pick-off", "shared-counts-off"])
@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_searches_with_and_without_the_class_pick_are_the_same(
    wide: bool, off: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The class pick, or only the windows' shared counts, switched off: the same searches."""
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1)
    shared = _count_shared_picks(monkeypatch)
    for seed in range(30 if not wide else 20):
        monkeypatch.setattr(placement_run, off, True)
        on = _search(seed, carry_runs=True, wide=wide)
        monkeypatch.setattr(placement_run, off, False)
        without = _search(seed, carry_runs=True, wide=wide)
        assert on[3] == without[3], f"seed {seed}"
        assert on[1:3] == without[1:3], f"seed {seed}: random draws or rotation differ"
    if wide:
        assert shared[0] > 300  # the windows' runs read the shared counts


def _count_shared_picks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts (in the returned one-item list) the class picks made over shared counts."""
    got = [0]
    real_pick = ClassPick.pick

    def pick(self: ClassPick, rng: random.Random) -> int | None:
        got[0] += self.shared is not None
        return real_pick(self, rng)

    monkeypatch.setattr(ClassPick, "pick", pick)
    return got


@pytest.mark.parametrize("constraints", [1, 2, 3])
def test_class_raws_round_as_the_spread_column_on_sums_near_a_half(constraints: int) -> None:
    """The class raw scores against the carried column's own scoring (``_score_all`` in arrays)
    on terms whose sum lies within a few ulps of ``k + 0.5``, where adding 0.5 to the last term
    first (or any other order) would round differently."""
    import math

    import numpy as np

    from scheduler.class_pick import class_raws
    from scheduler.plugins.spread_run import SpreadScoreRun

    r = random.Random(constraints)
    cols: list[list[float]] = [[] for _ in range(constraints)]
    for _ in range(5000):
        terms = [r.randrange(0, 60) + r.random() for _ in range(constraints - 1)]
        head = sum(terms) if terms else 0.0
        last = r.randrange(1, 60) + (0.5 - (head - math.floor(head)))
        last += r.randrange(-3, 4) * math.ulp(last)
        for i, t in enumerate([*terms, last]):
            cols[i].append(t)
    column = SpreadScoreRun.__new__(SpreadScoreRun)
    column.terms = [np.array(c, dtype=np.float64) for c in cols]
    column.arrays = True
    column.raw = np.zeros(len(cols[0]), dtype=np.int64)
    assert class_raws(cols) == column._score_all().tolist()
    if constraints == 2:
        # the hostname-then-zone pick's one pass: the second column read through row indexes
        from scheduler.class_pick import host_zone_raws

        rows = list(range(len(cols[1])))
        r.shuffle(rows)
        row_terms = [0.0] * len(rows)
        for q, j in enumerate(rows):
            row_terms[j] = cols[1][q]
        assert host_zone_raws(cols[0], rows, row_terms) == class_raws(cols)


@pytest.mark.parametrize("seed", range(6))
def test_the_tied_position_is_the_r_th_of_the_tied_classes_in_feasible_order(seed: int) -> None:
    """``ClassPick._position`` against the brute force (the positions whose class is tied, in
    order, the ``r``-th of them), with the class ids one byte each and in a numpy array, on
    random class assignments (1 to 300 classes, so ids past a byte too) and random tied sets."""
    import numpy as np

    r = random.Random(seed)
    for _ in range(300):
        classes = r.choice([1, 2, 5, 20, 255, 256, 300])
        n = r.randrange(1, 600)
        class_of = [r.randrange(classes) for _ in range(n)]
        present = sorted(set(class_of))
        tied = r.sample(present, r.randint(1, min(len(present), 8)))
        tied.sort(key=lambda _: r.random())  # (the caller's order is the live classes')
        positions = [q for q, c in enumerate(class_of) if c in tied]
        k = r.randrange(len(positions))
        cp = ClassPick.__new__(ClassPick)
        cp.sizes = [class_of.count(c) for c in range(classes)]
        representations = [np.array(class_of, dtype=np.intp)]
        if classes <= 256:
            representations.append(bytearray(class_of))
        for rep in representations:
            cp.class_of = rep
            assert cp._position(tied, k) == positions[k]
