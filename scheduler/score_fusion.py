"""The Score totals of a plain cycle as one kept column per pod shape (gangplane).

A plain pod's cycle over a large cluster scores its window of feasible nodes with plugins whose
columns are pure functions of each node's row in the snapshot's node table (NodeResourcesFit's
LeastAllocated/MostAllocated and BalancedAllocation: :class:`~scheduler.interfaces.ColumnScorePlugin`)
and plugins that score every node alike (TaintToleration on an untainted cluster:
:class:`~scheduler.interfaces.UniformScorePlugin`). Each column is already kept per pod shape and
brought up to date row by row (:meth:`~scheduler.nodetable.NodeTable.derived`), but the cycle
still sliced every column, checked its bounds and added the slices, once per plugin per pod.

Here the weighted sum of those columns is itself the kept column (its key is the plugins'
keys and weights), so a cycle rescores the rows that changed and slices the totals once. The
pick is the same: a plugin's window column that is uniform only adds the same number to every
node, which moves neither the best total nor the ties (:func:`~scheduler.schedule_one._totals`
leaves such columns out for that reason), and the integers added are the same. kube's check
that a score lies in ``[MIN_NODE_SCORE, MAX_NODE_SCORE]`` is made on every value the column is
built from; should any fail, the cycle takes the general path, which reports the plugin's
invalid score over the window exactly as before.

A plugin whose column is neither kept nor uniform but given per cycle as an array
(:class:`~scheduler.interfaces.ArrayScorePlugin`: PodTopologySpread once pods match its
constraints, as for a StatefulSet's second pod) is range-checked over the window as the general
path checks it and added to the window's slice of the kept sum; before, such a cycle built the
column plugins' parts, gave up, and had the general path slice, range-check and add each kept
column again.

Anything else (a plugin with none of these forms, records keeping this pod's scores, nodes
that are not a run of the table, an array plugin's error or invalid score) takes the general
path, unchanged, which reports errors and invalid scores as kube does.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from scheduler.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, ScoreColumn
from scheduler.nodeinfo import NodeInfo, PodInfo

if TYPE_CHECKING:
    from scheduler.framework import Framework

__all__ = ["NOT_FUSED", "fused_totals"]

#: what :func:`fused_totals` answers when the cycle must take the general path
NOT_FUSED: Any = object()


class _OutOfRange(Exception):
    """A score outside ``[MIN_NODE_SCORE, MAX_NODE_SCORE]``: the general path reports it."""


def fused_totals(fw: Framework, state: CycleState, pod_info: PodInfo, nodes: list[NodeInfo]) -> Any:
    """The cycle's Score totals over ``nodes`` as an int64 array (read-only), ``None`` when every
    node has the same total, or :data:`NOT_FUSED` (use :meth:`Framework.score_columns`).

    The column plugins' weighted sum is the kept column; a plugin that gives only a per-cycle
    array (:class:`~scheduler.interfaces.ArrayScorePlugin`, e.g. PodTopologySpread with pods to
    count) is range-checked and added to the window's slice of it, as the general path would
    add it (the same integers).

    Call after PreScore (the plugins' pre-score state is read) and only when no scheduling
    records keep this pod's scores (they need each plugin's column)."""
    if not nodes:
        return NOT_FUSED
    plan = _plan(fw, state.skip_score_plugins)
    if plan is None:
        return NOT_FUSED
    weights = fw.score_weights
    parts: list[tuple[ScoreColumn, int]] = []
    extra: list[tuple[Any, int, tuple[int, int] | None]] = []
    try:
        # the column plugins first: where there is no column (a PodGroup placement's nodes, not
        # a run of the table) the general path follows, and the uniform answers are not asked twice
        for pl in plan.columns:
            spec = pl.score_column(state, pod_info, nodes)
            if spec is None:
                return NOT_FUSED
            parts.append((spec, weights.get(pl.name, 1)))
        for pl, is_uniform, is_column, is_array in plan.rest:
            name = pl.name
            if is_uniform:
                u = pl.uniform_score(state, pod_info, nodes)
                if u is not None:
                    if u < MIN_NODE_SCORE or u > MAX_NODE_SCORE:
                        return NOT_FUSED
                    continue  # the same number on every node: no part of the pick
                if is_column:
                    spec = pl.score_column(state, pod_info, nodes)
                    if spec is None:
                        return NOT_FUSED
                    parts.append((spec, weights.get(name, 1)))
                    continue
                if not is_array:
                    return NOT_FUSED
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
        return NOT_FUSED  # the general path runs the plugin again and reports its error as kube does
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


class _Plan:
    """What :func:`fused_totals` asks of the active Score plugins, in their order, for one
    framework and one set of plugins skipped by PreScore (see :func:`_plan`)."""

    __slots__ = ("columns", "rest")

    def __init__(self, columns: list[Any], rest: list[tuple[Any, bool, bool, bool]]) -> None:
        #: the column plugins without a uniform answer, asked for their columns first
        self.columns = columns
        #: every other active plugin with whether it is a uniform, a column and an array scorer
        self.rest = rest


def _plan(fw: Framework, skip: AbstractSet[str]) -> _Plan | None:
    """The plugins :func:`fused_totals` calls and how, or ``None`` when some active plugin has
    none of the fused forms (the general path answers).

    Worked out from the framework's plugin list and its sets of column, uniform and array
    scorers once per set of skipped plugins (PreScore's ``Skip`` answers: a handful per
    profile), not in every cycle: a cycle then makes the same plugin calls in the same order
    with no membership test per plugin. Kept per framework while those four objects are the
    ones it was made from (a test that assigns another set gets a new plan; the sets are never
    changed in place). The weights are read in every cycle (tests change them in place)."""
    plugins, columns, uniform, arrays = (
        fw.score_plugins,
        fw.column_scorers,
        fw.uniform_scorers,
        fw.array_scorers,
    )
    made = fw.fusion_plans_from
    if made is None or not _made_from(made, plugins, columns, uniform, arrays):
        fw.fusion_plans.clear()
        fw.fusion_plans_from = (plugins, columns, uniform, arrays)
    plans = fw.fusion_plans
    key = frozenset(skip)
    if key in plans:
        return plans[key]  # type: ignore[no-any-return]
    plan: _Plan | None = None
    active = [pl for pl in fw.score_plugins if pl.name not in skip]
    if all(pl.name in columns or pl.name in uniform or pl.name in arrays for pl in active):
        first = [pl for pl in active if pl.name in columns and pl.name not in uniform]
        rest = [
            (pl, pl.name in uniform, pl.name in columns, pl.name in arrays)
            for pl in active
            if pl.name in uniform or pl.name not in columns
        ]
        if first:
            plan = _Plan(first, rest)
    plans[key] = plan
    return plan


def _made_from(made: tuple[Any, ...], plugins: Any, columns: Any, uniform: Any, arrays: Any) -> bool:
    """Whether plans made from ``made`` are the plans of these objects (compared by identity)."""
    return made[0] is plugins and made[1] is columns and made[2] is uniform and made[3] is arrays


def _with_arrays(window: Any, extra: list[tuple[Any, int, tuple[int, int] | None]]) -> Any:
    """The window's kept totals plus each per-cycle array plugin's weighted column, or
    :data:`NOT_FUSED` when one of them leaves ``[MIN_NODE_SCORE, MAX_NODE_SCORE]`` (the general
    path then reports the plugin's invalid score as kube does). A column comes with its least
    and greatest value when its plugin knows them (:class:`~scheduler.interfaces.BoundedArrayScorePlugin`),
    else they are read from it."""
    total = None
    for col, weight, known in extra:
        if isinstance(col, int):
            if col < MIN_NODE_SCORE or col > MAX_NODE_SCORE:
                return NOT_FUSED
            continue  # the same number on every node: no part of the pick
        if len(col) != len(window):
            return NOT_FUSED
        if known is not None:
            lo, hi = known
        else:
            # numpy: the columns are arrays (imported here only: an import statement run in a
            # function costs ~0.6 µs, and a bounded plugin's column needs no reading back)
            from scheduler.score_totals import bounds

            lo, hi = bounds(col)
        if lo < MIN_NODE_SCORE or hi > MAX_NODE_SCORE:
            return NOT_FUSED
        if lo == hi:
            continue
        if total is None:
            # a new array: the weighted column, the window's totals added in place (one array
            # made instead of two; the same int64 sums)
            if weight != 1:
                total = col * weight
                total += window
            else:
                total = col + window
        else:
            total += col * weight if weight != 1 else col
    return window if total is None else total


def _summed_compute(parts: list[tuple[ScoreColumn, int]]) -> Any:
    def compute(all_rows: Any) -> Any:
        from scheduler.score_totals import bounds  # numpy: the columns are arrays

        total = None
        for spec, weight in parts:
            col = spec.compute(all_rows)
            lo, hi = bounds(col)
            if lo < MIN_NODE_SCORE or hi > MAX_NODE_SCORE:
                raise _OutOfRange
            total = col * weight if total is None else total + col * weight
        return total

    return compute


def _summed_rescore(parts: list[tuple[ScoreColumn, int]]) -> Any:
    def rescore(row: int) -> int:
        total = 0
        for spec, weight in parts:
            v = spec.rescore(row)
            if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                raise _OutOfRange
            total += v * weight
        return total

    return rescore
