"""The array form of the resource scorers: LeastAllocated, MostAllocated, BalancedAllocation.

Each computes, over rows of the snapshot's :class:`~scheduler.nodetable.NodeTable`, exactly the
integers :func:`~scheduler.plugins.resource_allocation.score_node` computes node by node (the
randomized tests in ``tests/unit/test_scheduler_nodetable.py`` compare the two): the same
integer floor divisions, the same float fractions (int64 values below 2**53 convert to float64
exactly and IEEE division rounds as Python's ``int / int`` does), the same truncation by ``int()``.
Where that cannot be guaranteed the scorer answers ``None`` (or scores those rows with the
per-node code): a node with numbers beyond 2**53, a pod request that large, or a node on which
BalancedAllocation would take the standard deviation of more than two fractions (Python's
``** 2`` and numpy's may round differently).

The scores are kept per pod shape as a column over every node of the table
(:meth:`~scheduler.nodetable.NodeTable.derived`): computed in arrays once, then only the nodes
that changed since are rescored (with the per-node code), so a cycle costs the few nodes the
previous cycles touched plus one slice of the column. The rows for a list of NodeInfos are
found once per cycle and shared by the plugins through the cycle state (:func:`rows_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from scheduler.interfaces import MAX_NODE_SCORE, CycleState, ScoreColumn
from scheduler.nodeinfo import CPU, MEMORY, NodeInfo
from scheduler.nodetable import EXACT_LIMIT, NodeTable, Rows, rows_for
from scheduler.plugins.resource_allocation import (
    Scorer,
    balanced_scorer,
    is_scalar,
    least_allocated_scorer,
    most_allocated_scorer,
    score_node,
)


def scores(
    state: CycleState,
    table: NodeTable,
    nodes: Sequence[NodeInfo],
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
    as_array: bool = False,
) -> list[int] | np.ndarray | None:
    """The scores of ``nodes`` from the table's column for this pod shape (``None``: per-node path);
    ``as_array``: as an int64 array (a view of the kept column for a window: read-only)."""
    spec = column(state, table, nodes, pod_requests, resources, scorer, use_requested)
    if spec is None:
        return None
    kept = table.derived(spec.key, spec.compute, spec.rescore)
    if as_array:
        return kept[spec.rows]
    return kept[spec.rows].tolist()  # type: ignore[no-any-return]


def column(
    state: CycleState,
    table: NodeTable,
    nodes: Sequence[NodeInfo],
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> ScoreColumn | None:
    """The column :func:`scores` reads for ``nodes``, unread (``None``: per-node path): its key
    for this pod shape, how to compute it in arrays and how to rescore one row."""
    if scorer not in _ARRAY_SCORERS:
        return None
    # (the least and greatest request by C builtins: a generator's frame cost more per cycle)
    if pod_requests and not (min(pod_requests) > -EXACT_LIMIT and max(pod_requests) < EXACT_LIMIT):
        return None
    rows = rows_for(state, table, nodes)
    if rows is None:
        return None
    key = (scorer, tuple(pod_requests), tuple(resources), use_requested)
    # the two functions are pure in the key and the table: made once per pod shape and table
    # (a cycle asks NodeResourcesFit's and BalancedAllocation's column; each made two closures)
    fns = table.column_fns.get(key)
    if fns is None:
        fns = _column_fns(table, key)
        if len(table.column_fns) >= MAX_COLUMN_FNS:
            table.column_fns.clear()
        table.column_fns[key] = fns
    return ScoreColumn(table, rows, key, fns[0], fns[1])


#: the scorers with an array form
_ARRAY_SCORERS = (least_allocated_scorer, most_allocated_scorer, balanced_scorer)
#: pod shapes whose column functions a table keeps (:func:`column`)
MAX_COLUMN_FNS = 256


def _column_fns(
    table: NodeTable, key: tuple[Scorer, tuple[int, ...], tuple[tuple[str, int], ...], bool]
) -> tuple[Callable[[Rows], np.ndarray], Callable[[int], int]]:
    """``compute`` and ``rescore`` of :class:`ScoreColumn` for one pod shape (``key``) of ``table``."""
    scorer, reqs, res, use_requested = key
    infos = table.infos

    def compute(all_rows: Rows) -> np.ndarray:
        return score_rows(table, all_rows, reqs, res, scorer, use_requested)

    def rescore(row: int) -> int:
        return score_node(infos[row], reqs, res, scorer, use_requested)

    return compute, rescore


def _resource_columns(
    table: NodeTable, rows: Rows, resource: str, pod_req: int, use_requested: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """(allocatable, requested with the pod) per row, as ``allocatable_and_requested``; ``None``
    when the resource is skipped on every node."""
    if pod_req == 0 and is_scalar(resource):
        return None
    col = table.column(resource)
    if resource in (CPU, MEMORY):
        if col is None:
            return None  # no node has it: allocatable 0 everywhere, skipped
        alloc = table.allocatable[rows, col]
        if use_requested:
            base = table.requested[rows, col]
        else:
            base = table.non_zero_cpu[rows] if resource == CPU else table.non_zero_memory[rows]
        return alloc, base + pod_req
    if col is None:
        return None
    # ephemeral-storage, or a resource some node has: a node without it has allocatable 0
    return table.allocatable[rows, col], table.requested[rows, col] + pod_req


def score_rows(
    table: NodeTable,
    rows: Rows,
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    scorer: Scorer,
    use_requested: bool,
) -> np.ndarray:
    """The scores of ``rows`` in order, in arrays (rows of inexact nodes by the per-node code)."""
    columns = [
        _resource_columns(table, rows, name, pod_requests[i], use_requested)
        for i, (name, _) in enumerate(resources)
    ]
    n = len(rows) if not isinstance(rows, slice) else 0
    if isinstance(rows, slice):
        n = len(range(*rows.indices(len(table.names))))
    if scorer is least_allocated_scorer or scorer is most_allocated_scorer:
        total = np.zeros(n, dtype=np.int64)
        wsum = np.zeros(n, dtype=np.int64)
        least = scorer is least_allocated_scorer
        for (_, weight), cols in zip(resources, columns, strict=True):
            if cols is None:
                continue
            alloc, req = cols
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            if least:
                s = np.where(req <= alloc, (alloc - req) * MAX_NODE_SCORE // safe, 0)
            else:
                s = np.minimum(req, alloc) * MAX_NODE_SCORE // safe
            total += np.where(has, s * weight, 0)
            wsum += np.where(has, weight, 0)
        out = np.where(wsum != 0, total // np.where(wsum != 0, wsum, 1), 0)
    else:
        out = _balanced(table, rows, n, pod_requests, resources, columns, use_requested)
    if table.inexact:
        # nodes whose numbers do not fit the table: the per-node code on the NodeInfos
        idx = np.arange(len(table.names))[rows]
        for i in np.flatnonzero(np.isin(idx, list(table.inexact))).tolist():
            out[i] = score_node(table.infos[int(idx[i])], pod_requests, resources, scorer, use_requested)
    return out


def _balanced(
    table: NodeTable,
    rows: Rows,
    n: int,
    pod_requests: Sequence[int],
    resources: Sequence[tuple[str, int]],
    columns: list[tuple[np.ndarray, np.ndarray] | None],
    use_requested: bool,
) -> np.ndarray:
    """``(1 - std(fractions)) * 100``: in arrays for nodes with at most two fractions."""
    count = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for cols in columns:
        if cols is None:
            continue
        alloc, req = cols
        has = alloc != 0
        frac = np.minimum(req.astype(np.float64) / np.where(has, alloc, 1).astype(np.float64), 1.0)
        first = np.where(has & (count == 0), frac, first)
        second = np.where(has & (count == 1), frac, second)
        count += has
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    out = ((1.0 - std) * MAX_NODE_SCORE).astype(np.int64)
    wide = np.flatnonzero(count > 2)
    if len(wide):
        # more than two fractions: the per-node code, on the NodeInfos the rows mirror
        idx = np.arange(len(table.names))[rows]
        for i in wide.tolist():
            ni = table.infos[int(idx[i])]
            out[i] = score_node(ni, pod_requests, resources, balanced_scorer, use_requested)
    return out
