""":func:`scheduler.score_fusion.fused_totals` with its per-framework plan (:func:`_plan`) against
the code it replaced, which classified every active Score plugin in every cycle: on random
plugin lists, random sets of column, uniform and array scorers (reassigned between cycles, as
tests do), random PreScore skips, weights changed in place, and plugins that answer ``None``,
out-of-range scores or raise, both must make the same plugin calls in the same order and give
the same totals (or both refuse the fusion)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from scheduler import score_fusion
from scheduler.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, ScoreColumn
from scheduler.score_fusion import NOT_FUSED, _summed_compute, _summed_rescore, _with_arrays

ROWS = 12


class _Table:
    """A node table's :meth:`derived` for the fake columns: computed whole every time."""

    def derived(self, key: object, compute: Any, rescore: Any) -> Any:
        return compute(slice(0, ROWS))


class _Plugin:
    """A Score plugin whose fused forms answer as ``how`` says, logging every call."""

    def __init__(self, name: str, rng: random.Random, log: list[str], table: _Table, bounded: bool) -> None:
        self.name = name
        self.rng = rng
        self.log = log
        self.table = table
        self.how: dict[str, Any] = {}
        if bounded:
            self.score_array_bounded = self._bounded

    def _answer(self, what: str) -> Any:
        self.log.append(f"{self.name}.{what}")
        got = self.how.get(what)
        if got == "raise":
            raise RuntimeError(what)
        return got

    def score_column(self, state: CycleState, pod: Any, nodes: Any) -> ScoreColumn | None:
        got = self._answer("score_column")
        if got is None:
            return None
        col = np.array(got, dtype=np.int64)
        return ScoreColumn(self.table, slice(0, ROWS), (self.name, tuple(got)), lambda rows: col[rows], int)  # type: ignore[arg-type]

    def uniform_score(self, state: CycleState, pod: Any, nodes: Any) -> int | None:
        return self._answer("uniform_score")  # type: ignore[no-any-return]

    def score_array(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        got = self._answer("score_array")
        return None if got is None else np.array(got, dtype=np.int64)

    def _bounded(self, state: CycleState, pod: Any, nodes: Any) -> Any:
        got = self._answer("score_array_bounded")
        if got is None:
            return None
        col = np.array(got, dtype=np.int64)
        return col, int(col.min()), int(col.max())

    def shuffle(self) -> None:
        """New answers for the next cycle."""
        rng = self.rng

        def column() -> Any:
            if rng.random() < 0.1:
                return None
            lo, hi = (
                (MIN_NODE_SCORE, MAX_NODE_SCORE)
                if rng.random() < 0.9
                else (MIN_NODE_SCORE, MAX_NODE_SCORE + 5)
            )
            return [rng.randint(lo, hi) for _ in range(ROWS)]

        self.how = {
            "score_column": "raise" if rng.random() < 0.03 else column(),
            "uniform_score": rng.choice([None, None, 0, 50, MAX_NODE_SCORE, MAX_NODE_SCORE + 1, "raise"]),
            "score_array": "raise" if rng.random() < 0.03 else column(),
            "score_array_bounded": column(),
        }


class _Framework:
    """What :func:`fused_totals` reads of a framework."""

    def __init__(self, plugins: list[_Plugin]) -> None:
        self.score_plugins = plugins
        self.column_scorers: set[str] = set()
        self.uniform_scorers: set[str] = set()
        self.array_scorers: set[str] = set()
        self.score_weights: dict[str, int] = {}
        self.fusion_plans: dict[frozenset[str], Any] = {}
        self.fusion_plans_from: tuple[Any, ...] | None = None


def _reference(fw: Any, state: CycleState, pod_info: Any, nodes: Any) -> Any:
    """``fused_totals`` as it was before the plan (session 16), unchanged."""
    if not nodes:
        return NOT_FUSED
    uniform, columns, arrays = fw.uniform_scorers, fw.column_scorers, fw.array_scorers
    skip = state.skip_score_plugins
    active = [pl for pl in fw.score_plugins if pl.name not in skip]
    for pl in active:
        if pl.name not in columns and pl.name not in uniform and pl.name not in arrays:
            return NOT_FUSED
    weights = fw.score_weights
    parts: list[tuple[ScoreColumn, int]] = []
    extra: list[tuple[Any, int, tuple[int, int] | None]] = []
    try:
        for pl in active:
            if pl.name in columns and pl.name not in uniform:
                spec = pl.score_column(state, pod_info, nodes)
                if spec is None:
                    return NOT_FUSED
                parts.append((spec, weights.get(pl.name, 1)))
        if not parts:
            return NOT_FUSED
        for pl in active:
            name = pl.name
            if name in uniform:
                u = pl.uniform_score(state, pod_info, nodes)
                if u is not None:
                    if u < MIN_NODE_SCORE or u > MAX_NODE_SCORE:
                        return NOT_FUSED
                    continue
                if name in columns:
                    spec = pl.score_column(state, pod_info, nodes)
                    if spec is None:
                        return NOT_FUSED
                    parts.append((spec, weights.get(name, 1)))
                    continue
                if name not in arrays:
                    return NOT_FUSED
            elif name in columns:
                continue
            bounded = getattr(pl, "score_array_bounded", None)
            if bounded is not None:
                got = bounded(state, pod_info, nodes)
                if got is None:
                    return NOT_FUSED
                extra.append((got[0], weights.get(name, 1), (got[1], got[2])))
                continue
            col = pl.score_array(state, pod_info, nodes)
            if col is None:
                return NOT_FUSED
            extra.append((col, weights.get(name, 1), None))
    except Exception:
        return NOT_FUSED
    table, rows = parts[0][0].table, parts[0][0].rows
    for spec, _ in parts[1:]:
        if spec.table is not table or spec.rows is not rows:
            return NOT_FUSED
    key = ("fused", tuple((spec.key, weight) for spec, weight in parts))
    try:
        kept = table.derived(key, _summed_compute(parts), _summed_rescore(parts))
    except Exception:
        return NOT_FUSED
    if not extra:
        return kept[rows]
    return _with_arrays(kept[rows], extra)


def _same(a: Any, b: Any) -> bool:
    if a is NOT_FUSED or b is NOT_FUSED or a is None or b is None:
        return a is b
    return list(np.asarray(a)) == list(np.asarray(b))


def _reassign(fw: _Framework, names: list[str], rng: random.Random) -> None:
    """New sets of column, uniform and array scorers (new objects: the plans are remade)."""
    fw.column_scorers = {n for n in names if rng.random() < 0.5}
    fw.uniform_scorers = {n for n in names if rng.random() < 0.4}
    fw.array_scorers = {n for n in names if rng.random() < 0.6}


def test_planned_fusion_makes_the_same_calls_and_totals_as_the_per_cycle_classification() -> None:
    fused = refused = replanned = 0
    for seed in range(40):
        rng = random.Random(seed)
        log: list[str] = []
        table = _Table()
        names = [f"P{i}" for i in range(rng.randrange(1, 7))]
        plugins = [_Plugin(n, rng, log, table, bounded=rng.random() < 0.5) for n in names]
        fw = _Framework(plugins)

        _reassign(fw, names, rng)
        for step in range(40):
            if rng.random() < 0.15:
                _reassign(fw, names, rng)
                replanned += 1
            if rng.random() < 0.2:
                fw.score_weights[rng.choice(names)] = rng.randrange(1, 4)  # in place, as tests do
            for pl in plugins:
                pl.shuffle()
            state = CycleState()
            state.skip_score_plugins = {n for n in names if rng.random() < 0.25}
            nodes = [object()] * (0 if rng.random() < 0.03 else ROWS)
            log.clear()
            want = _reference(fw, state, None, nodes)
            want_calls = list(log)
            log.clear()
            got = score_fusion.fused_totals(fw, state, None, nodes)  # type: ignore[arg-type]
            assert log == want_calls, (seed, step)
            assert _same(got, want), (seed, step, got, want)
            fused += want is not NOT_FUSED
            refused += want is NOT_FUSED
    assert fused > 150 and refused > 150 and replanned > 100, (fused, refused, replanned)
