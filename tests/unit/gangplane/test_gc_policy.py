"""The plane's collector thresholds (``GC_THRESHOLD``) make young passes rarer without postponing
the generation-1 pass: a garbage cycle that outlived a young pass is still found within the
1,100,000 net allocations of the former ``(50_000, 20, 20)``. The pass pattern is checked on
CPython itself at a hundredth of the plane's young threshold (the same rule, fewer objects)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from gangplane.controlplane import GC_THRESHOLD, GEN1_INTERVAL

#: the generation-1 interval of the thresholds the plane had before session 16
FORMER_GEN1_INTERVAL = 50_000 * (20 + 2)


@pytest.fixture
def passes() -> Iterator[list[int]]:
    """The generation of every collector pass started while the fixture is active, under the
    plane's thresholds with the young one scaled down 100 times."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    was_enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.collect()
    gc.set_threshold(GC_THRESHOLD[0] // 100, *GC_THRESHOLD[1:])
    gc.enable()
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*threshold)
        if not was_enabled:
            gc.disable()


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_the_generation_1_pass_comes_no_later_than_before() -> None:
    assert GEN1_INTERVAL <= FORMER_GEN1_INTERVAL
    assert GC_THRESHOLD[2] == 20  # full passes by CPython's rule, as before


def test_gen1_interval_is_cpythons_pattern(passes: list[int]) -> None:
    young = GC_THRESHOLD[0] // 100
    gc.collect()  # every generation's count back to 0
    passes.clear()
    keep = [[] for _ in range(young * (GC_THRESHOLD[1] + 2) * 3 + young // 2)]
    assert keep
    pattern = [0] * (GC_THRESHOLD[1] + 1) + [1]
    assert passes[: 3 * len(pattern)] == pattern * 3
    assert len(pattern) * young == GEN1_INTERVAL // 100


def test_a_cycle_that_outlived_a_young_pass_is_found_within_the_interval(passes: list[int]) -> None:
    young = GC_THRESHOLD[0] // 100
    gc.collect()
    passes.clear()
    cycle = _Node()
    dead = weakref.ref(cycle)
    keep: list[list[int]] = []
    while not passes:  # the cycle is still reachable at the first young pass: it moves on
        keep.append([])
    assert passes == [0] and dead() is not None
    del cycle
    for _ in range(GEN1_INTERVAL // 100 + young):
        keep.append([])
        if dead() is None:
            break
    assert dead() is None
    assert 1 in passes
