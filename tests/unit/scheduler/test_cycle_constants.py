"""A pod cycle's constants made once (session 18, podcycle) give what making them per cycle gave.

- :func:`scheduler.plugins.resource_arrays.column` keeps a column's ``compute`` and ``rescore``
  per pod shape on the table: on random clusters changing between cycles, every column kept
  through :meth:`~scheduler.nodetable.NodeTable.derived` equals the per-node scores, shape after
  shape (alike and different requests, scorers, ``use_requested``), and its key is the shape.
- :meth:`~scheduler.nodetable.NodeTable.derived` returns the kept column as it is when no row
  was refilled since: equal to a column computed afresh, before and after refills.
- :func:`scheduler.score_totals.select` finds the greatest total with ``argmax``: the same host
  and random stream as the list pick (:func:`scheduler.schedule_one.select_from_totals`).
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from scheduler import schedule_one, score_totals
from scheduler.cache import Cache
from scheduler.interfaces import CycleState
from scheduler.nodetable import EXACT_LIMIT
from scheduler.plugins import resource_allocation as ra
from scheduler.plugins import resource_arrays
from scheduler.testing import make_node, make_pod

GPU = "example.com/gpu"
_SCORERS = [ra.least_allocated_scorer, ra.most_allocated_scorer, ra.balanced_scorer]
_RESOURCES = [
    [("cpu", 1), ("memory", 1)],
    [("cpu", 2), ("memory", 1)],
    [("cpu", 1), ("memory", 1), (GPU, 3)],
]


def _cluster(rng: random.Random, nodes: int) -> Cache:
    cache = Cache()
    for i in range(nodes):
        cache.add_node(
            make_node(
                f"n{i:03d}",
                cpu=rng.choice(["1", "4", "7500m"]),
                memory=rng.choice(["1Gi", "8Gi"]),
                pods="110",
                extra={GPU: "4"} if rng.random() < 0.3 else {},
            )
        )
    return cache


def _assume_some(rng: random.Random, cache: Cache, k: int, tag: str) -> None:
    for j in range(k):
        n = rng.randrange(len(cache.snapshot().node_names))
        p = make_pod(f"{tag}{j}", uid=f"{tag}{j}", requests=rng.choice([{"cpu": "300m"}, {"memory": "1Gi"}]))
        cache.assume_pod(p, f"n{n:03d}")


@pytest.mark.parametrize("seed", range(5))
def test_kept_column_functions_score_as_the_per_node_code(seed: int) -> None:
    rng = random.Random(seed)
    cache = _cluster(rng, 90)
    snap = cache.snapshot()
    shapes = [
        (rng.choice(_SCORERS), rng.choice(_RESOURCES), rng.random() < 0.5, rng.choice([0, 100, 1500, 2**31]))
        for _ in range(6)
    ]
    for step in range(10):
        _assume_some(rng, cache, rng.randrange(0, 6), f"s{step}-")
        cache.update_snapshot(snap)
        table = snap.node_table()
        nodes = snap.ordered()
        for scorer, resources, use_requested, base in rng.sample(shapes, len(shapes)):
            reqs = [base + i for i in range(len(resources))]
            spec = resource_arrays.column(CycleState(), table, nodes, reqs, resources, scorer, use_requested)
            assert spec is not None
            assert spec.key == (scorer, tuple(reqs), tuple(resources), use_requested)
            want = [ra.score_node(ni, reqs, resources, scorer, use_requested) for ni in nodes]
            assert table.derived(spec.key, spec.compute, spec.rescore)[spec.rows].tolist() == want
            assert spec.compute(slice(0, len(nodes))).tolist() == want
            for row in rng.sample(range(len(nodes)), 5):
                assert spec.rescore(row) == want[row]


def test_a_request_beyond_the_exact_range_has_no_column() -> None:
    snap = _cluster(random.Random(3), 70).snapshot()
    table, nodes = snap.node_table(), snap.ordered()
    for reqs in ([EXACT_LIMIT, 0], [0, -EXACT_LIMIT], [2**60, 2**60]):
        assert (
            resource_arrays.column(CycleState(), table, nodes, reqs, _RESOURCES[0], _SCORERS[0], False)
            is None
        )
    assert resource_arrays.column(
        CycleState(), table, nodes, [EXACT_LIMIT - 1, 0], _RESOURCES[0], _SCORERS[0], False
    )


@pytest.mark.parametrize("seed", range(4))
def test_a_kept_column_equals_one_computed_afresh(seed: int) -> None:
    rng = random.Random(50 + seed)
    cache = _cluster(rng, 80)
    snap = cache.snapshot()
    resources, reqs = _RESOURCES[0], [250, 2**28]
    for step in range(12):
        if rng.random() < 0.6:
            _assume_some(rng, cache, rng.randrange(1, 4), f"d{step}-")
            cache.update_snapshot(snap)
        table = snap.node_table()
        spec = resource_arrays.column(
            CycleState(), table, snap.ordered(), reqs, resources, _SCORERS[0], False
        )
        assert spec is not None
        for _ in range(2):  # the second read finds no row refilled since the first
            kept = table.derived(spec.key, spec.compute, spec.rescore)
            assert kept.tolist() == spec.compute(slice(0, len(table))).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_the_array_pick_equals_the_list_pick(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        n = rng.randrange(1, 40)
        top = rng.choice([1, 3, 300])
        totals = [rng.randrange(top) for _ in range(n)]
        nodes = [SimpleNamespace(name=f"n{i}") for i in range(n)]
        seed2 = rng.randrange(1 << 30)
        fw: Any = SimpleNamespace(handle=SimpleNamespace(rng=random.Random(seed2)))
        want = schedule_one.select_from_totals(fw, nodes, totals)
        r = random.Random(seed2)
        assert score_totals.select(r, nodes, np.array(totals, dtype=np.int64)) == want
        assert r.random() == fw.handle.rng.random()  # the same draws taken
