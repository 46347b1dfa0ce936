"""PodTopologySpread's Score over the node table: the domain values PreScore counts, and the
fused score column (system default spreading: hostname and zone), in arrays.

Both give what the per-node code in :mod:`scheduler.plugins.pod_topology_spread` gives: the
same set of domain values, and the same floats (an int count times the constraint's weight plus
``maxSkew - 1``, added in constraint order, then ``int(t + 0.5)``), since numpy's float64
arithmetic is Python's float arithmetic operation by operation. The randomized tests in
``tests/unit/test_scheduler_nodetable.py`` compare the two. Imported only once a cycle scores
enough nodes to use the table (numpy stays off the start-up path).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from scheduler.interfaces import MAX_NODE_SCORE
from scheduler.nodeinfo import NodeInfo
from scheduler.nodetable import NodeTable, Rows

LABEL_HOSTNAME = "kubernetes.io/hostname"


#: windows whose domain values a table remembers (a 5,000-node cluster has ten 500-node windows)
MAX_WINDOWS = 256


def domain_values(table: NodeTable, rows: Rows, key: str) -> AbstractSet[str]:
    """``{ni.labels.get(key, "") for ni in nodes}`` for the nodes at ``rows``: for a window of
    consecutive rows, remembered until a row's value of ``key`` changes (the cycles of a whole-
    cluster placement come back to the same ten windows of 500 nodes pod after pod)."""
    if isinstance(rows, slice):
        memo_key = (key, rows.start, rows.stop)
        changes = table.label_changes(key)
        got = table.window_values.get(memo_key)
        if got is not None and got[0] == changes:
            return got[1]
        out = frozenset(_domain_values(table, rows, key))
        if len(table.window_values) >= MAX_WINDOWS:
            table.window_values.clear()
        table.window_values[memo_key] = (changes, out)
        return out
    return _domain_values(table, rows, key)


def _domain_values(table: NodeTable, rows: Rows, key: str) -> set[str]:
    ids, _, values = table.label_ids(key)
    # ids run from -1 (no label) to len(values) - 1: counted per id, shifted by one
    seen = np.flatnonzero(np.bincount(ids[rows] + 1, minlength=len(values) + 1)).tolist()
    out = {values[i - 1] for i in seen if i > 0}
    if seen and seen[0] == 0:
        out.add("")  # a node without the label counts under ""
    return out


def fused_scores(table: NodeTable, rows: Rows, s: Any, nodes: Sequence[NodeInfo]) -> list[int] | None:
    """``_fused_scores`` in arrays; ``None`` when the per-node code must answer."""
    out = fused_array(table, rows, s, len(nodes))
    return None if out is None else out.tolist()  # type: ignore[no-any-return]


def normalized_array(s: Any, table: NodeTable, rows: Rows, count: int) -> np.ndarray | int | None:
    """Score then NormalizeScore of the ``count`` nodes at ``rows`` as an int64 array (what
    ``normalize_scores(fused_scores(...))`` gives, element for element), or the one score every
    node gets; ``None`` when the per-node code must answer. Without ignored nodes every node is
    valid: the reversed normalization ``100 * (max + min - v) // max``, which is 100 for every
    node when all raw scores are equal (the maximum 0 included)."""
    raw = fused_array(table, rows, s, count)
    if raw is None:
        return None
    if not count:
        return raw
    lo, hi = int(raw.min()), int(raw.max())
    if lo == hi:
        return MAX_NODE_SCORE
    return MAX_NODE_SCORE * (hi + lo - raw) // hi  # type: ignore[no-any-return]


def fused_array(table: NodeTable, rows: Rows, s: Any, count: int) -> np.ndarray | None:
    """The raw (not normalized) score column as int64, or ``None`` (see :func:`fused_scores`)."""
    if s.ignored_nodes:
        return None
    totals: np.ndarray | None = None
    for i, c in enumerate(s.constraints):
        key, weight, skew = c.topology_key, s.weights[i], c.max_skew - 1
        ids, index, values = table.label_ids(key)
        sel = ids[rows]
        if key == LABEL_HOSTNAME:
            per_node = s.per_node[i] if s.per_node else None
            if per_node is None:
                return None
            picked = _node_counts(table, per_node)[rows]
        else:
            agg = s.domain_counts[i] if s.domain_counts else None
            if agg is not None:
                by_id = domain_column(agg, index, values)
            else:
                by_id = np.zeros(len(values) + 1, dtype=np.float64)  # the last slot serves id -1
                for v, n in s.counts[i].items():
                    vid = index.get(v)
                    if vid is not None:
                        by_id[vid] = n
            picked = by_id[sel]
        if table.all_labelled(key):
            col = picked * weight
            col += skew  # the same two float operations per element as below, without the mask
        else:
            col = np.where(sel >= 0, picked * weight + skew, 0.0)
        if totals is None:
            totals = col
        else:
            totals += col  # col is this constraint's own array; totals the previous sum's
    if totals is None:
        return np.zeros(count, dtype=np.int64)
    return (totals + 0.5).astype(np.int64)


def domain_column(agg: Any, index: dict[str, int], values: list[str]) -> np.ndarray:
    """The running per-domain counts of ``agg`` (the snapshot's :class:`SpreadCounts` of one
    selector and topology key) by the table's ids of the key's values, as float64 with one more
    slot (0) for id -1: built once, then kept current by ``SpreadCounts.update`` with every node
    change, and rebuilt only when the table (its value index) is new or has met new values."""
    got = agg.by_id
    if got is None or got[0] is not index or len(got[1]) != len(values) + 1:
        column = np.zeros(len(values) + 1, dtype=np.float64)
        for v, n in agg.by_value.items():
            vid = index.get(v)
            if vid is not None:
                column[vid] = n
        agg.by_id = got = (index, column)
    return got[1]  # type: ignore[no-any-return]


def _node_counts(table: NodeTable, per_node: Any) -> np.ndarray:
    """Per row, the node's count in ``per_node`` (the snapshot's running per-node counts), as a
    column of the table kept current row by row: building it from every counted node for every
    pod cost one step per node holding matching pods, the whole cluster once a large gang is
    half placed."""
    names = table.names

    def compute(rows: Any) -> np.ndarray:
        counts = np.zeros(len(table), dtype=np.float64)
        row_of = table.row_of
        for name, (_, n) in per_node.nodes_counted().items():
            r = row_of.get(name)
            if r is not None:
                counts[r] = n
        return counts

    if not per_node.key:
        return compute(slice(None))
    return table.derived(
        ("PodTopologySpread.on_node", per_node.key), compute, lambda row: per_node.on_node(names[row])
    )
