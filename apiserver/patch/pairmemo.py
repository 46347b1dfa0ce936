"""Comparisons of subtree pairs a write met before, remembered by the pair's exact value.

The structured-merge-diff comparison of an update (:func:`apiserver.patch.apply._compare`)
walks, below the top two levels, only the subtrees that differ. Status writes make the same
change to every object of a template: the node agent's write of a pod that starts running
turns one ``status.conditions`` list (``PodScheduled``) into five, the same five for every pod
started within the same second; a node's heartbeat moves the same condition times on every
node. The walk of such a pair, with its schema lookups and one path per visited field, is done
once per distinct pair instead of once per object.

What a pair's comparison yields (its added, modified and removed paths, and whether it raises)
is a function of the two values, exact types included (``true`` and ``1``, ``1`` and ``1.0``
name different list items), of the schema node, of the reset-field trie below it and of the
pair's path (every result path starts with it). ``marshal`` (format 2, no back-references)
writes equal bytes only for values equal in all of that, and refuses subclasses of builtins,
so its text of the pair, with the path, is the key; an entry holds the schema node and the
trie, whose identities are part of the key, so their ids cannot be reused while it lives.
A pair whose comparison raised is not remembered (the next write raises the same way).
"""

from __future__ import annotations

import marshal
from typing import Any

#: Bounds: remembered pairs, and the size of one pair's marshalled text.
_ENTRIES = 512
_MAX_BYTES = 16 * 1024

#: (text, path, id(node), id(skip)) -> (node, skip, added, modified, removed)
Entry = tuple[Any, Any, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]


class PairMemo:
    """Bounded table of pair comparisons (cleared when full: a miss costs one walk)."""

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, Any, int, int], Entry] = {}

    @staticmethod
    def key(lhs: Any, rhs: Any, path: Any, node: Any, skip: Any) -> tuple[bytes, Any, int, int] | None:
        """The memo key of comparing ``lhs`` with ``rhs`` at ``path``; ``None``: not
        rememberable (a value ``marshal`` refuses, or too large)."""
        try:
            text = marshal.dumps((lhs, rhs), 2)
        except ValueError:
            return None
        if len(text) > _MAX_BYTES:
            return None
        return (text, path, id(node), id(skip))

    def get(self, key: tuple[bytes, Any, int, int], node: Any, skip: Any) -> Entry | None:
        hit = self._table.get(key)
        if hit is not None and hit[0] is node and hit[1] is skip:
            return hit
        return None

    def put(
        self,
        key: tuple[bytes, Any, int, int],
        node: Any,
        skip: Any,
        added: set[Any],
        modified: set[Any],
        removed: set[Any],
    ) -> None:
        if len(self._table) >= _ENTRIES:
            self._table.clear()
        self._table[key] = (node, skip, tuple(added), tuple(modified), tuple(removed))

    def clear(self) -> None:
        self._table.clear()

    def __len__(self) -> int:
        return len(self._table)


__all__ = ["PairMemo"]
