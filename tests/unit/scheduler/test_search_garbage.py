"""A PodGroup search's runs are freed by reference counting, not by the cyclic collector.

A big gang's search keeps a run per window (:class:`~scheduler.placement_run.PlacementRun`) with
its columns, its spreading run, its pick over classes (:class:`~scheduler.class_pick.ClassPick`)
and its feasible NodeInfos (the search's copies: 5,000 per gang of 5,000 on 5,000 nodes). Were
any of them in a reference cycle, all of that would outlive the search until a collector pass
found it: a young pass of the plane traversed it (~20,000 objects per gang), a generation-1 pass
freed it. Here, on test_placement_run.py's wide random clusters (windows of 100 nodes, the class
pick and the shared counts on), a search with the collector off leaves nothing of its runs for
``gc.collect()`` to find (``DEBUG_SAVEALL`` keeps what a pass would free).
"""

from __future__ import annotations

import gc
from collections import Counter
from typing import Any

import pytest

import scheduler.placement_run as placement_run
from scheduler.class_pick import ClassPick

from .test_placement_run import _search

#: the types of a search's runs and what only they hold
_RUN_TYPES = frozenset(
    {"PlacementRun", "WindowedRuns", "ClassPick", "SharedCounts", "_Column", "SpreadScoreRun"}
)


def _run_garbage(seed: int) -> Counter[str]:
    """The objects of :data:`_RUN_TYPES` that a collector pass finds after ``_search(seed)``."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        _search(seed, carry_runs=True, wide=True)
        gc.collect()
        return Counter(n for o in gc.garbage if (n := type(o).__name__) in _RUN_TYPES)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_search_leaves_no_cyclic_garbage_of_its_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1)
    picks = [0]
    real_of = ClassPick.of.__func__  # type: ignore[attr-defined]

    def of(cls: Any, run: Any) -> ClassPick | None:
        got = real_of(cls, run)
        picks[0] += got is not None
        return got

    monkeypatch.setattr(ClassPick, "of", classmethod(of))
    for seed in range(4):
        assert _run_garbage(seed) == Counter(), f"seed {seed}"
    assert picks[0] > 10  # the runs had class picks (the cycle a run and its pick could make)
