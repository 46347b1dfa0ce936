"""A cycle's window of nodes that knows it is a run of its snapshot's consecutive nodes.

The Filter's fast path takes the window as a slice of the snapshot's nodes in name order (from
the cycle's rotating start, possibly wrapping around). Several consumers then need to know that
the list *is* such a run: TaintToleration's and PodTopologySpread's ``uniform_score``, the
array scorers' ``wants_table`` (:meth:`scheduler.cache.Snapshot.is_run`) and the node table's
rows (:func:`scheduler.nodetable.rows_for`). Each re-proved it by comparing the list with a
slice of the snapshot, element by element (500 identity comparisons), three times per cycle.

A :class:`NodeRun` carries the proof from its construction (:meth:`Snapshot.run
<scheduler.cache.Snapshot.run>`): its snapshot, the snapshot's node epoch then (bumped whenever
a node's NodeInfo is replaced, joins or leaves) and its first row. A consumer accepts the proof
only while the epoch is unchanged; a list modified in place drops it (every mutator below), so
a stale or edited window falls back to the element-wise check. No numpy here: the Filter path
builds windows before any array is needed.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

from scheduler.nodeinfo import NodeInfo

__all__ = ["NodeRun"]


class NodeRun(list[NodeInfo]):
    """A list of NodeInfos that are ``count`` consecutive nodes of ``owner`` from row ``start``
    in name order (wrapping around), as of ``owner``'s node epoch ``epoch``.

    Behaves as the plain list it is; slicing or copying gives a plain list (no proof). Made
    by :meth:`Snapshot.run <scheduler.cache.Snapshot.run>`, which sets the three attributes
    right after the list's own (C) constructor."""

    __slots__ = ("owner", "epoch", "start")

    owner: Any
    epoch: int
    start: int

    def _drop(self) -> None:
        self.owner = None

    # --- every in-place change drops the proof ---------------------------------------------

    def append(self, x: NodeInfo) -> None:
        self._drop()
        super().append(x)

    def extend(self, xs: Any) -> None:
        self._drop()
        super().extend(xs)

    def insert(self, i: SupportsIndex, x: NodeInfo) -> None:
        self._drop()
        super().insert(i, x)

    def pop(self, i: SupportsIndex = -1) -> NodeInfo:
        self._drop()
        return super().pop(i)

    def remove(self, x: NodeInfo) -> None:
        self._drop()
        super().remove(x)

    def clear(self) -> None:
        self._drop()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._drop()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._drop()
        super().reverse()

    def __setitem__(self, i: Any, x: Any) -> None:
        self._drop()
        super().__setitem__(i, x)

    def __delitem__(self, i: Any) -> None:
        self._drop()
        super().__delitem__(i)

    def __iadd__(self, xs: Any) -> NodeRun:  # type: ignore[override,misc]
        self._drop()
        return super().__iadd__(xs)  # type: ignore[return-value]

    def __imul__(self, n: SupportsIndex) -> NodeRun:  # type: ignore[override,misc]
        self._drop()
        return super().__imul__(n)  # type: ignore[return-value]
