"""PodTopologySpread's per-distinct-value arithmetic (a run's score column and NormalizeScore)
gives every node exactly what the per-node formula gives it."""

from __future__ import annotations

import math
import random

import pytest

from scheduler.framework import CycleState
from scheduler.plugins import pod_topology_spread as pts
from scheduler.plugins.spread_run import _sum_of_two


def _column(rng: random.Random, n: int, uniform: bool) -> list[float]:
    weight = math.log(rng.randrange(1, 500) + 2)
    skew = rng.randrange(0, 5)
    if uniform:
        return [rng.randrange(0, 50) * weight + skew] * n
    return [rng.randrange(0, 4) * weight + skew if rng.random() < 0.9 else 0.0 for _ in range(n)]


@pytest.mark.parametrize("seed", range(200))
def test_sum_of_two_is_the_per_node_sum(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(0, 120)
    first = _column(rng, n, rng.random() < 0.3)
    second = _column(rng, n, rng.random() < 0.5)
    assert _sum_of_two(first, second) == [int(a + b + 0.5) for a, b in zip(first, second, strict=True)]


@pytest.mark.parametrize("seed", range(100))
def test_normalize_scores_is_the_per_node_formula(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(1, 120)
    scores = [rng.choice([0, rng.randrange(0, 40), rng.randrange(0, 3000)]) for _ in range(n)]
    plugin = pts.PodTopologySpread()
    state = CycleState()
    state.write(pts._PRE_SCORE_KEY, pts._ScoreState([], set(), [], []))
    lo, hi = min(scores), max(scores)
    want = [100] * n if hi == 0 else [100 * (hi + lo - v) // hi for v in scores]
    assert plugin.normalize_scores(state, None, [], scores) == want  # type: ignore[arg-type]
