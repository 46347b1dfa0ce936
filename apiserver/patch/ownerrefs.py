"""The ``f:ownerReferences`` subtree of a create's managedFields entry, remembered by the references.

``metadata.ownerReferences`` is a list-map keyed by ``uid``, so its part of a field set names
the owner (``k:{"uid":"…"}``) and differs from set to set: it is walked and encoded apart from
the rest of the created object (see :func:`apiserver.patch.apply._created_entry`). But every
object one owner creates carries the very same references (the pods of a StatefulSet, its
PodGroup and ControllerRevisions; the pods of a Job): the subtree is a function of the list's
value and of the schema node, so it is encoded once per distinct list.

The key is the list's ``orjson`` text under ``EXACT_JSON`` (type-exact: ``true``/``1``/``1.0``
differ, subclasses of builtins are refused), as for :mod:`.createmem`; a text holding a
``null`` (NaN and infinities are written as ``null`` too) is not remembered, nor is one orjson
refuses. The table is bounded and cleared when full: an owner's objects are created together,
so a small table catches them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from apiserver.patch.fieldpath import EXACT_JSON

#: Bounds: remembered lists, and the size of one list's text.
_ENTRIES = 512
_MAX_BYTES = 4 * 1024


class OwnerRefsMemo:
    """Bounded table ``(references' text, schema node) -> [node, subtree, its JSON]``.

    The subtree kept is handed out as is for a stored write (whose objects nobody modifies:
    the same rule as the shared canonical trees of :mod:`apiserver.storage.compact`), and as a
    fresh decoding of its JSON otherwise; each form is made when first asked for, so a miss
    costs no more than the key. The node is held by the entry, so its ``id`` cannot be reused
    by another object while the entry lives.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, int], list[Any]] = {}

    def tree(
        self, refs: list[Any], node: Any, build: Callable[[], dict[str, Any]], shared: bool
    ) -> dict[str, Any]:
        """The subtree of ``refs`` under ``node``: remembered, or ``build()`` (then remembered
        where the key allows it). ``shared``: the caller stores the tree without modifying it."""
        try:
            text: bytes | None = orjson.dumps(refs, option=EXACT_JSON)
        except (TypeError, RecursionError):  # orjson refuses it: not rememberable
            text = None
        if text is None or len(text) > _MAX_BYTES or b"null" in text:
            return build()
        memo_key = (text, id(node))
        hit = self._table.get(memo_key)
        if hit is not None and hit[0] is node:
            if shared:
                if hit[1] is None:
                    hit[1] = orjson.loads(hit[2])
                kept: dict[str, Any] = hit[1]
                return kept
            if hit[2] is None:
                hit[2] = bytes(memoryview(orjson.dumps(hit[1])))
            fresh: dict[str, Any] = orjson.loads(hit[2])
            return fresh
        tree = build()
        if len(self._table) >= _ENTRIES:
            self._table.clear()
        # A stored write's tree is shared from now on; a dry run's goes to its client, so only
        # its JSON is kept. Bytes are kept as exact copies: orjson's result holds its whole
        # write buffer (4 KB at least).
        memo_key = (bytes(memoryview(text)), id(node))
        self._table[memo_key] = (
            [node, tree, None] if shared else [node, None, bytes(memoryview(orjson.dumps(tree)))]
        )
        return tree

    def clear(self) -> None:
        self._table.clear()


__all__ = ["OwnerRefsMemo"]
