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
from scheduler.score_totals import bounds

LABEL_HOSTNAME = "kubernetes.io/hostname"


#: windows whose domain values a table remembers (a 5,000-node cluster has ten 500-node windows)
MAX_WINDOWS = 256
#: at most this many nodes with counted pods per hostname constraint: the Score column is
#: gathered per domain (:func:`few_counted_array`)
FEW_COUNTED = 32
#: at most this many domains in a window for its normalized column to be gathered by domain
MAX_PRESENT = 64


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
    got = normalized_array_bounded(s, table, rows, count)
    return None if got is None else got[0]


def normalized_array_bounded(
    s: Any, table: NodeTable, rows: Rows, count: int
) -> tuple[np.ndarray | int, int, int] | None:
    """:func:`normalized_array` with the least and greatest value of its column (for an empty
    column: the column and 0, 0), which the cycle's fused totals would otherwise read back from
    the array with two reductions (:func:`scheduler.score_fusion._with_arrays`). The bounds come
    from the raw scores the normalization starts from: it is monotonic, so the normalized column's
    bounds are the images of the raw column's."""
    if count:
        small = _small_normalized(table, rows, s, count)
        if small is not None:
            return small
    parts = _few_counted(table, rows, s, count) if count else None
    raw: np.ndarray | None
    if parts is not None:
        got = _few_counted_normalized(table, rows, count, parts)
        if got is not None:
            return got
        raw = _few_counted_raw(rows, count, parts)
    else:
        raw = fused_array(table, rows, s, count)
    if raw is None:
        return None
    if not count:
        return raw, 0, 0
    lo, hi = bounds(raw)
    if lo == hi:
        return MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE
    return MAX_NODE_SCORE * (hi + lo - raw) // hi, *_normalized_bounds(lo, hi)


def _normalized_bounds(lo: int, hi: int) -> tuple[int, int]:
    """The least and greatest of ``MAX_NODE_SCORE * (hi + lo - v) // hi`` over raw scores ``v``
    from ``lo`` to ``hi`` (``hi`` > 0): a floor division of a linear function of ``v`` by a fixed
    divisor is monotonic, so they are the images of ``lo`` and ``hi``."""
    top = hi + lo
    at_lo, at_hi = MAX_NODE_SCORE * (top - lo) // hi, MAX_NODE_SCORE * (top - hi) // hi
    return min(at_lo, at_hi), max(at_lo, at_hi)


def few_counted_array(table: NodeTable, rows: Rows, s: Any, count: int) -> np.ndarray | None:
    """:func:`fused_array` when the hostname constraints count pods on at most
    :data:`FEW_COUNTED` nodes and at most one constraint has another topology key (the default
    spreading of a new set's or a small gang's pods: its siblings sit on a node or two): ``None``
    in any other case.

    Every node without a counted pod then scores by its domain of that other key alone: the raw
    score is worked out once per domain id (the same float terms added in constraint order and
    rounded as :func:`fused_array` does them per node), the column is that table indexed by the
    window's ids, and the few counted nodes inside the window are scored one by one, alike. One
    gather instead of a dozen array operations over the window."""
    parts = _few_counted(table, rows, s, count)
    return None if parts is None else _few_counted_raw(rows, count, parts)


def _uncounted_terms(constraints: Any, weights: Any, other: int) -> tuple[float | None, list[float]]:
    """The terms of the hostname constraints at a node without counted pods (``0 * weight +
    skew``), in constraint order around constraint ``other``'s (-1: none): the sum of those
    before it, and those after it (added one by one, as :func:`fused_array` adds the columns)."""
    before: float | None = None
    after: list[float] = []
    for i, c in enumerate(constraints):
        if i == other:
            continue
        term = 0 * weights[i] + (c.max_skew - 1)
        if other < 0 or i < other:
            before = term if before is None else before + term
        else:
            after.append(term)
    return before, after


def _raw_of(before: float | None, after: list[float], other_term: float) -> int:
    """A node's raw score from the other constraint's term (hostname counts 0), as fused_array
    sums and rounds it."""
    total = other_term if before is None else before + other_term
    for t in after:
        total = total + t
    return int(total + 0.5)


def _few_counted_split(table: NodeTable, s: Any) -> tuple[int, list[tuple[int, Any]]] | None:
    """The few-counted shape both fast paths need: every hostname constraint's pods on at most
    :data:`FEW_COUNTED` nodes (of a fully hostname-labelled table) and at most one constraint of
    another key. Its index (``-1``: none) and each hostname constraint's index with the nodes it
    counts; ``None``: another shape (the general code answers)."""
    if s.ignored_nodes or not s.per_node:
        return None
    other = -1
    counted: list[tuple[int, Any]] = []
    for i, c in enumerate(s.constraints):
        if c.topology_key == LABEL_HOSTNAME:
            per_node = s.per_node[i]
            if per_node is None or not table.all_labelled(LABEL_HOSTNAME):
                return None
            on = per_node.nodes_counted()
            if len(on) > FEW_COUNTED:
                return None
            counted.append((i, on))
        elif other >= 0:
            return None
        else:
            other = i
    return other, counted


def _small_normalized(
    table: NodeTable, rows: Rows, s: Any, count: int
) -> tuple[np.ndarray | int, int, int] | None:
    """:func:`normalized_array_bounded` for the default spreading of a new set's or a small gang's
    sibling (hostname constraints whose pods sit on at most :data:`FEW_COUNTED` nodes, none of
    them inside the window, and one other constraint, e.g. zone, with at most
    :data:`MAX_PRESENT` domains in the window, all labelled): every node of the window scores
    by its domain of the other key alone, so the raw and normalized scores are worked out in
    Python per present domain (the same float terms and integer divisions as
    :func:`_few_counted` and :func:`_few_counted_normalized`), and the only array operations
    are the table of normalized scores by id and its gather over the window. Those two functions
    made about ten numpy calls on a table of a few ids, each costing more than its Python
    equivalent. ``None``: any other case (the general code answers)."""
    if not isinstance(rows, slice):
        return None
    split = _few_counted_split(table, s)
    if split is None or split[0] < 0:
        return None
    other, counted = split
    constraints = s.constraints
    row_of = table.row_of
    start, stop = rows.start, rows.stop
    for _, on in counted:
        for name in on:
            r = row_of.get(name)
            if r is not None and start <= r < stop:
                return None  # a counted node in the window scores by its own count
    c = constraints[other]
    key = c.topology_key
    present = domain_values(table, rows, key)
    if "" in present or len(present) > MAX_PRESENT:
        return None
    weights = s.weights
    before, after = _uncounted_terms(constraints, weights, other)
    w, skew = weights[other], c.max_skew - 1
    agg = s.domain_counts[other] if s.domain_counts else None
    per_value = agg.by_value if agg is not None else s.counts[other]
    uncounted = _raw_of(before, after, 0 * w + skew)
    # the present domains with counted pods score by their counts, every other one alike: the
    # table is filled with the uncounted domains' score and written at the counted ones only
    counted_raw: dict[str, int] = {}
    for v in present:
        n = per_value.get(v, 0)
        if n:
            counted_raw[v] = _raw_of(before, after, n * w + skew)
    if len(counted_raw) < len(present):
        lo = hi = uncounted
        for r in counted_raw.values():
            lo, hi = min(lo, r), max(hi, r)
    else:
        lo, hi = min(counted_raw.values()), max(counted_raw.values())
    if lo == hi:
        return MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE
    top = hi + lo
    ids, index, values = table.label_ids(key)
    lut = np.empty(len(values), dtype=np.int64)  # ids outside the window are never read
    lut.fill(MAX_NODE_SCORE * (top - uncounted) // hi)
    for v, r in counted_raw.items():
        lut[index[v]] = MAX_NODE_SCORE * (top - r) // hi
    return lut[ids[rows]], *_normalized_bounds(lo, hi)


class _FewCounted:
    """What :func:`few_counted_array` gathers from: per domain id the raw score of a node without
    counted pods, and the counted nodes inside the window with their own raw scores."""

    __slots__ = ("fixups", "ids", "key", "lut")

    def __init__(self, key: str, ids: np.ndarray | None, lut: np.ndarray, fixups: list[tuple[Any, int]]):
        #: the other constraint's topology key and its ids per row (None: hostname constraints only)
        self.key = key
        self.ids = ids
        #: raw score per id of ``key`` (the last entry: id -1, no label), or the one raw score
        self.lut = lut
        #: (position in the window, raw score) of each counted node inside it
        self.fixups = fixups


def _few_counted_raw(rows: Rows, count: int, parts: _FewCounted) -> np.ndarray:
    lut = parts.lut
    if parts.ids is None:
        raw = np.full(count, lut[0], dtype=np.int64)
    else:
        raw = lut[parts.ids[rows]]  # (a fresh array: the counted nodes' scores are written into it)
    for where, v in parts.fixups:
        raw[where] = v
    return raw


def _few_counted_normalized(
    table: NodeTable, rows: Rows, count: int, parts: _FewCounted
) -> tuple[np.ndarray | int, int, int] | None:
    """:func:`normalized_array_bounded` from the parts without the raw column, when no counted
    node is inside the window and it is a slice of rows whose domain values the table remembers:
    the least and greatest raw score are those of the domains present, and the normalized column
    is the normalized table gathered by id. ``None``: work from the raw column."""
    if parts.fixups:
        return None
    lut = parts.lut
    if parts.ids is None:
        return MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE  # every node the same raw score
    if not isinstance(rows, slice):
        return None
    present = domain_values(table, rows, parts.key)
    if "" in present:
        return None  # a node without the label and a node labelled "" would read alike here
    if len(present) > MAX_PRESENT:
        return None  # many domains in the window: the reductions over the raw column are cheaper
    _, index, _ = table.label_ids(parts.key)
    # the few present domains' raw scores read one by one (``item``: Python ints), rather than
    # gathered by a list of ids into an array and reduced twice (a few numpy calls per cycle)
    item = lut.item
    present_raw = [item(index[v]) for v in present]
    lo, hi = min(present_raw), max(present_raw)
    if lo == hi:
        return MAX_NODE_SCORE, MAX_NODE_SCORE, MAX_NODE_SCORE
    norm = MAX_NODE_SCORE * ((hi + lo) - lut) // hi
    # every node of the window is in a present domain: its values are the present domains'
    return norm[parts.ids[rows]], *_normalized_bounds(lo, hi)


def _few_counted(table: NodeTable, rows: Rows, s: Any, count: int) -> _FewCounted | None:
    """The parts of :func:`few_counted_array` (see there), or ``None``."""
    split = _few_counted_split(table, s)
    if split is None:
        return None
    other, counted = split
    constraints = s.constraints
    weights = s.weights
    before, after = _uncounted_terms(constraints, weights, other)

    def raw_of(other_term: float) -> int:
        return _raw_of(before, after, other_term)

    key = ""
    ids: np.ndarray | None = None
    if other >= 0:
        c = constraints[other]
        key = c.topology_key
        ids, index, values = table.label_ids(key)
        w, skew = weights[other], c.max_skew - 1
        agg = s.domain_counts[other] if s.domain_counts else None
        per_value = agg.by_value if agg is not None else s.counts[other]
        # that constraint's term per id as fused_array's (0 pods: 0 * weight + skew), the last
        # slot for id -1 (no label: 0.0); the ids of the values holding pods set one by one, so
        # the Python work is per counted domain, not per value of the key
        unlabelled = 0.0 if not table.all_labelled(key) else 0 * w + skew
        lut = np.empty(len(values) + 1, dtype=np.int64)
        lut.fill(raw_of(0 * w + skew))  # (np.full is a Python wrapper around these two)
        lut[-1] = raw_of(unlabelled)
        for v, n in per_value.items():
            if n:
                vid = index.get(v)
                if vid is not None:
                    lut[vid] = raw_of(n * w + skew)

        def other_term(vid: int) -> float:
            if vid < 0:
                return unlabelled
            return per_value.get(values[vid], 0) * w + skew  # type: ignore[no-any-return]

    else:
        # hostname constraints only: every node without counted pods has the same raw score
        lut = np.full(1, int((before if before is not None else 0.0) + 0.5), dtype=np.int64)
    fixups: list[tuple[Any, int]] = []
    row_of = table.row_of
    fixed: set[str] = set()
    for _, on in counted:
        fixed.update(on)
    for name in fixed:
        r = row_of.get(name)
        if r is None:
            continue
        if isinstance(rows, slice):
            if not rows.start <= r < rows.stop:
                continue
            where: Any = r - rows.start
        else:
            where = np.flatnonzero(rows == r)
            if not len(where):
                continue
        total: float | None = None
        h = 0
        for i, c in enumerate(constraints):
            if i == other:
                assert ids is not None
                term = other_term(ids.item(r))
            else:
                got = counted[h][1].get(name)
                term = (got[1] if got is not None else 0) * weights[i] + (c.max_skew - 1)
                h += 1
            total = term if total is None else total + term
        fixups.append((where, int(total + 0.5) if total is not None else 0))
    return _FewCounted(key, ids, lut, fixups)


def _domain_counts_by_id(s: Any, i: int, index: dict[str, int], values: list[str]) -> np.ndarray:
    """Constraint ``i``'s matching pods per domain id of its key (float64; one more slot, 0, for
    id -1): the snapshot's kept column when PreScore read running counts, else from its dict."""
    agg = s.domain_counts[i] if s.domain_counts else None
    if agg is not None:
        return domain_column(agg, index, values)
    by_id = np.zeros(len(values) + 1, dtype=np.float64)  # the last slot serves id -1
    for v, n in s.counts[i].items():
        vid = index.get(v)
        if vid is not None:
            by_id[vid] = n
    return by_id


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
            picked = _domain_counts_by_id(s, i, index, values)[sel]
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
