"""The snapshot's node table: every node's resource numbers as numpy columns, one row per node.

Score plugins that read only a node's own numbers (NodeResourcesFit's LeastAllocated and
MostAllocated, NodeResourcesBalancedAllocation) can then score hundreds of nodes with a few array
operations instead of a Python call per node. Rows follow the snapshot's name order, so the
window of nodes a cycle visits from its rotating start index is a slice of rows (no per-node
lookup at all); any other list of NodeInfos maps to rows through :meth:`NodeTable.rows_of`.

The table mirrors the snapshot's NodeInfos exactly: the snapshot updates a node's row in place
whenever it re-indexes the node (cache update, ``assume_pod``, ``forget_pod``, ``restore``), and
drops the whole table when a node joins or leaves (rows would shift; it is rebuilt on next use).
``infos[row]`` is the NodeInfo a row was filled from, so a caller holding another NodeInfo for
the same node (a clone made for a what-if) can tell the row does not describe it.

Integers stay exact: columns are int64 and every value must stay below 2**53 (so that the
products in the scores cannot overflow and the float fractions of BalancedAllocation are the
ones Python computes from ints); a node beyond that is listed in ``inexact`` and users of the
table take their Python path while any such node exists.

This module imports numpy; the snapshot imports it only when a plugin first asks for the table,
so numpy stays off the start-up path of ``gangplane`` commands that never schedule a pod.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from operator import is_

import numpy as np

from scheduler import arraypolicy
from scheduler.cycle_memo import ROWS_KEY
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import NodeInfo
from scheduler.noderun import NodeRun

#: values at or beyond this make a node "inexact" (see the module docstring)
EXACT_LIMIT = 2**53
#: derived columns kept per table (one per plugin and pod shape in use)
MAX_DERIVED = 64

Rows = np.ndarray | slice


class NodeTable:
    """Per-node allocatable/requested amounts per resource, non-zero requests and pod counts."""

    def __init__(self, ordered: Sequence[NodeInfo]) -> None:
        n = len(ordered)
        self.names: list[str] = [ni.name for ni in ordered]
        self.row_of: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        self.infos: list[NodeInfo] = list(ordered)
        #: resource name -> column of :attr:`allocatable` / :attr:`requested`
        self.columns: dict[str, int] = {}
        self.allocatable = np.zeros((n, 0), dtype=np.int64)
        self.requested = np.zeros((n, 0), dtype=np.int64)
        #: the non-zero cpu / memory requests (kube's defaults for containers requesting nothing)
        self.non_zero_cpu = np.zeros(n, dtype=np.int64)
        self.non_zero_memory = np.zeros(n, dtype=np.int64)
        self.pod_count = np.zeros(n, dtype=np.int64)
        #: rows holding a value at or beyond EXACT_LIMIT
        self.inexact: set[int] = set()
        #: rows refilled since the table was built, in order (``changes_since`` reads it); a
        #: score column remembers how much of it it has seen and rescores only those rows
        self._log: list[int] = []
        self._log_base = 0
        #: derived per-row columns (e.g. a plugin's scores for one request shape), see :meth:`derived`
        self._derived: dict[object, tuple[np.ndarray, int]] = {}
        #: label key -> (domain id per row, -1 without the label; the values by id)
        self._labels: dict[str, tuple[np.ndarray, dict[str, int], list[str]]] = {}
        #: label key -> [rows without the label, changes to the key's ids]: a score column skips
        #: its "no label" mask when every row has the label, and the domain values of a window
        #: are remembered until the ids change (:func:`scheduler.plugins.spread_arrays.domain_values`)
        self._label_stats: dict[str, list[int]] = {}
        #: (label key, first row, end row) -> (the key's id changes when computed, the values)
        self.window_values: dict[tuple[str, int, int], tuple[int, frozenset[str]]] = {}
        #: a resource Score column's ``compute`` and ``rescore`` per pod shape (pure functions of
        #: this table's rows: :func:`scheduler.plugins.resource_arrays.column` makes them once)
        self.column_fns: dict[object, tuple[Callable[[Rows], np.ndarray], Callable[[int], int]]] = {}
        names = {r for ni in ordered for r in ni.allocatable.keys() | ni.requested.keys()}
        for r in sorted(names):
            self._add_column(r)
        for i, ni in enumerate(ordered):
            self._fill(i, ni, whole=True)

    def __len__(self) -> int:
        return len(self.names)

    def _add_column(self, resource: str) -> int:
        col = len(self.columns)
        self.columns[resource] = col
        n = len(self.names)
        self.allocatable = np.concatenate([self.allocatable, np.zeros((n, 1), dtype=np.int64)], axis=1)
        self.requested = np.concatenate([self.requested, np.zeros((n, 1), dtype=np.int64)], axis=1)
        return col

    def _fill(self, row: int, ni: NodeInfo, whole: bool = False) -> None:
        """Write ``ni``'s numbers into ``row``; ``whole``: every column (a row never filled)."""
        prev = None if whole else self.infos[row]
        self.infos[row] = ni
        alloc, req = ni.allocatable, ni.requested
        columns = self.columns
        grown = not (alloc.keys() <= columns.keys() and req.keys() <= columns.keys())
        if grown:
            for r in sorted((alloc.keys() | req.keys()) - columns.keys()):
                self._add_column(r)
        big = False
        # The row's node facts (allocatable, labels) come from its Node and are shared by every
        # NodeInfo of the same Node (``NodeInfo.clone``; ``set_node`` makes new ones, nothing
        # edits them in place): a node that only took or lost pods - every refill but a Node
        # update - rewrites its pod columns only. An exact row (not ``inexact``) had no big
        # allocatable value, so skipping them keeps ``big`` right.
        same_node = (
            prev is not None
            and prev.allocatable is alloc
            and not grown
            and row not in self.inexact
            and prev.labels is ni.labels
        )
        # the row built in Python, then written in one assignment (numpy's per-item writes cost more)
        r_vals = [0] * len(columns)
        if not same_node:
            a_vals = [0] * len(columns)
            for r, v in alloc.items():
                if not -EXACT_LIMIT < v < EXACT_LIMIT:
                    big = True
                    continue
                a_vals[columns[r]] = v
            self.allocatable[row] = a_vals
        for r, v in req.items():
            if not -EXACT_LIMIT < v < EXACT_LIMIT:
                big = True
                continue
            r_vals[columns[r]] = v
        self.requested[row] = r_vals
        nz_cpu, nz_mem = ni.non_zero_cpu, ni.non_zero_memory
        if not (0 <= nz_cpu < EXACT_LIMIT and 0 <= nz_mem < EXACT_LIMIT):
            big = True
        else:
            self.non_zero_cpu[row] = nz_cpu
            self.non_zero_memory[row] = nz_mem
        self.pod_count[row] = len(ni.pods)
        for key, (ids, index, values) in () if same_node else self._labels.items():
            vid = _label_id(ni.labels.get(key), index, values)
            was = ids.item(row)
            if vid != was:
                ids[row] = vid
                stats = self._label_stats[key]
                stats[0] += (vid < 0) - (was < 0)
                stats[1] += 1
        if big:
            self.inexact.add(row)
        else:
            self.inexact.discard(row)
        log = self._log
        log.append(row)
        if len(log) > 4 * len(self.names) + 64:
            # every derived column is older than what is kept: they are recomputed whole
            self._log_base += len(log)
            log.clear()

    def update(self, name: str, ni: NodeInfo) -> bool:
        """Refill ``name``'s row from ``ni``; False when the table has no such row (rebuild it)."""
        row = self.row_of.get(name)
        if row is None:
            return False
        self._fill(row, ni)
        return True

    def refill(self, changed: Iterable[tuple[str, NodeInfo]]) -> bool:
        """:meth:`update` of many ``(name, NodeInfo)`` pairs, each node once: what refilling them
        one by one gives. False when a node has no row (rebuild the table).

        After a big gang thousands of nodes took a pod each, and a row whose node only took or
        lost pods (the ``same_node`` rows of :meth:`_fill`) changes its requested, non-zero and
        pod-count cells only: those rows are gathered and written with one numpy assignment per
        column instead of four per row. Any other row is filled by :meth:`_fill` in its turn,
        after the rows gathered before it are written, so every row, ``infos``, ``inexact`` and
        the change log end as the one-by-one refill leaves them.
        """
        row_of, kept, columns, inexact = self.row_of, self.infos, self.columns, self.inexact
        rows: list[int] = []
        requested: list[list[int]] = []
        nz_cpu: list[int] = []
        nz_mem: list[int] = []
        pods: list[int] = []
        for name, ni in changed:
            row = row_of.get(name)
            if row is None:
                return False
            prev = kept[row]
            alloc, req = ni.allocatable, ni.requested
            c, m = ni.non_zero_cpu, ni.non_zero_memory
            if (
                prev.allocatable is alloc
                and prev.labels is ni.labels
                and row not in inexact
                and req.keys() <= columns.keys()
                and 0 <= c < EXACT_LIMIT
                and 0 <= m < EXACT_LIMIT
            ):
                r_vals = [0] * len(columns)
                for r, v in req.items():
                    if not -EXACT_LIMIT < v < EXACT_LIMIT:
                        break
                    r_vals[columns[r]] = v
                else:
                    kept[row] = ni
                    rows.append(row)
                    requested.append(r_vals)
                    nz_cpu.append(c)
                    nz_mem.append(m)
                    pods.append(len(ni.pods))
                    continue
            # a row _fill must write (a Node update, a new column, a big value): the rows
            # gathered so far first, at the widths they were gathered with
            self._write_rows(rows, requested, nz_cpu, nz_mem, pods)
            rows, requested, nz_cpu, nz_mem, pods = [], [], [], [], []
            self._fill(row, ni)
        self._write_rows(rows, requested, nz_cpu, nz_mem, pods)
        return True

    def _write_rows(
        self,
        rows: list[int],
        requested: list[list[int]],
        nz_cpu: list[int],
        nz_mem: list[int],
        pods: list[int],
    ) -> None:
        """The pod cells of ``rows`` (exact rows of unchanged Nodes, so nothing else moves), and
        each row logged as :meth:`_fill` logs it."""
        if not rows:
            return
        self.requested[rows] = requested
        self.non_zero_cpu[rows] = nz_cpu
        self.non_zero_memory[rows] = nz_mem
        self.pod_count[rows] = pods
        log = self._log
        limit = 4 * len(self.names) + 64
        for row in rows:
            log.append(row)
            if len(log) > limit:
                self._log_base += len(log)
                log.clear()

    def column(self, resource: str) -> int | None:
        return self.columns.get(resource)

    @property
    def version(self) -> int:
        """How many refills the table has seen (grows with every change)."""
        return self._log_base + len(self._log)

    def changes_since(self, version: int) -> set[int] | None:
        """The rows refilled after ``version``; ``None`` when that is no longer known."""
        start = version - self._log_base
        if start < 0:
            return None
        return set(self._log[start:])

    def derived(
        self, key: object, compute: Callable[[Rows], np.ndarray], rescore: Callable[[int], int]
    ) -> np.ndarray:
        """A per-row column that is a pure function of each row's node (e.g. a Score for one pod shape).

        ``compute(rows)`` fills it for many rows at once (in arrays); ``rescore(row)`` for one
        row. The column is built once, then only the rows refilled since are rescored, so a
        cycle pays for the nodes that changed, not for the cluster.
        """
        n = len(self.names)
        entry = self._derived.get(key)
        if entry is not None:
            col, seen = entry
            if seen == self._log_base + len(self._log):
                return col  # no row refilled since it was brought up to date
            changed = self.changes_since(seen)
            if changed is not None and len(changed) <= max(8, n // 16):
                for row in changed:
                    col[row] = rescore(row)
                self._derived[key] = (col, self.version)
                return col
        col = compute(slice(0, n))
        if len(self._derived) >= MAX_DERIVED:
            self._derived.pop(next(iter(self._derived)))
        self._derived[key] = (col, self.version)
        return col

    def label_ids(self, key: str) -> tuple[np.ndarray, dict[str, int], list[str]]:
        """Per row, the id of the node's value of label ``key`` (-1: no such label), the ids by
        value and the values by id: the topology domains of ``key`` as integers (kept current
        as nodes change)."""
        entry = self._labels.get(key)
        if entry is None:
            index: dict[str, int] = {}
            values: list[str] = []
            ids = np.fromiter(
                (_label_id(ni.labels.get(key), index, values) for ni in self.infos),
                dtype=np.int64,
                count=len(self.infos),
            )
            entry = self._labels[key] = (ids, index, values)
            self._label_stats[key] = [int(np.count_nonzero(ids < 0)), 0]
        return entry

    def all_labelled(self, key: str) -> bool:
        """Whether every row has label ``key`` (no id -1 in :meth:`label_ids`)."""
        self.label_ids(key)
        return self._label_stats[key][0] == 0

    def label_changes(self, key: str) -> int:
        """How many times a row's id of label ``key`` changed (what a memo of the ids checks)."""
        self.label_ids(key)
        return self._label_stats[key][1]

    def rows_of(self, nodes: Sequence[NodeInfo], map_min: int = 0) -> Rows | None:
        """The rows of ``nodes``, or ``None`` when one of them is not the NodeInfo its row mirrors.

        A run of consecutive nodes in name order (the window a cycle visits from its rotating
        start, possibly wrapping around) is recognised by comparing list slices, which runs in C.
        Any other list is mapped node by node, only if it has at least ``map_min`` nodes
        (``None`` otherwise).
        """
        row_of, infos = self.row_of, self.infos
        k, n = len(nodes), len(infos)
        if not k:
            return slice(0, 0)
        r0 = row_of.get(nodes[0].name)
        if r0 is not None:
            if r0 + k <= n:
                if infos[r0 : r0 + k] == nodes:  # NodeInfo has no __eq__: this compares identities
                    return slice(r0, r0 + k)
            else:
                split = n - r0
                if infos[r0:] == nodes[:split] and infos[: k - split] == nodes[split:]:
                    return self.window(r0, k)
        if k < map_min:
            return None
        try:
            rows = [row_of[ni.name] for ni in nodes]
        except KeyError:
            return None
        if not all(map(is_, map(infos.__getitem__, rows), nodes)):
            return None
        return np.array(rows, dtype=np.intp)

    def window(self, start: int, count: int) -> Rows:
        """The rows of ``count`` nodes from row ``start`` in name order, wrapping around."""
        n = len(self.names)
        if start + count <= n:
            return slice(start, start + count)
        return np.concatenate([np.arange(start, n), np.arange(0, start + count - n)])


def _label_id(value: str | None, index: dict[str, int], values: list[str]) -> int:
    if value is None:
        return -1
    got = index.get(value)
    if got is None:
        got = index[value] = len(values)
        values.append(value)
    return got


def rows_for(state: CycleState, table: NodeTable, nodes: Sequence[NodeInfo]) -> Rows | None:
    """The table rows of ``nodes`` (``None``: some node is not the snapshot's), found once per
    cycle: the plugins scoring the same list of nodes share them through ``state``."""
    cached = state.get(ROWS_KEY)
    if cached is not None and cached[0] is nodes and cached[1] is table and cached[2] == table.version:
        return cached[3]  # type: ignore[no-any-return]
    rows = None
    if type(nodes) is NodeRun and nodes.owner is not None:
        # the cycle's window, made as a run of the snapshot: its rows without a comparison
        # while its snapshot's nodes and this table's rows are as they were (else: compared)
        rows = nodes.owner.run_rows(nodes, table)
    if rows is None:
        rows = table.rows_of(nodes, arraypolicy.MAPPED_MIN_NODES)
    state.write(ROWS_KEY, (nodes, table, table.version, rows))
    return rows


def feasible_in_rotation(
    table: NodeTable,
    ordered: Sequence[NodeInfo],
    surely: Sequence[Collection[str]],
    only: Sequence[Collection[str]],
    start: int,
    to_find: int,
) -> list[NodeInfo]:
    """The first ``to_find`` nodes of ``ordered`` from index ``start`` (wrapping around) that are
    in no ``surely`` set and in every ``only`` set; ``ordered`` is the table's nodes in row order."""
    n = len(table)
    rejected = np.zeros(n, dtype=bool)
    row_of = table.row_of
    for names in surely:
        rejected[[r for x in names if (r := row_of.get(x)) is not None]] = True
    for names in only:
        keep = np.zeros(n, dtype=bool)
        keep[[r for x in names if (r := row_of.get(x)) is not None]] = True
        rejected |= ~keep
    order = np.concatenate([np.arange(start, n), np.arange(0, start)])
    picked = order[np.flatnonzero(~rejected[order])[:to_find]].tolist()
    return [ordered[i] for i in picked]
