"""``score_totals.bounds`` gives what ``int(col.min()), int(col.max())`` give (the Score
columns' range check in ``Framework.score_columns``)."""

from __future__ import annotations

import random

import numpy as np

from scheduler.score_totals import bounds


def test_bounds_equal_min_and_max_of_every_column() -> None:
    rng = random.Random(7)
    for _ in range(500):
        n = rng.randrange(1, 300)
        base = np.array([rng.randrange(-(2**40), 2**40) for _ in range(n + 20)], dtype=np.int64)
        start = rng.randrange(0, 20)
        col = base[start : start + n]  # a window (a view), as the node table's columns give
        if rng.random() < 0.3:
            col = base[np.array(sorted(rng.sample(range(n + 20), n)))]  # rows picked out
        if rng.random() < 0.2:
            col.flags.writeable = False
        got = bounds(col)
        assert got == (int(col.min()), int(col.max()))
        assert all(type(v) is int for v in got)
