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

import operator
import re
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.patch.fieldpath import EXACT_JSON, plain_string_key

#: Bounds: remembered lists, and the size of one list's text.
_ENTRIES = 512
_MAX_BYTES = 4 * 1024


#: A uid whose ``k:`` element text is the uid between quotes: nothing in it is escaped by the
#: Go JSON encoding of a key (``"``, ``\\``, ``<``, ``>``, ``&``, control and non-ASCII
#: characters), so a template's key can be written for it directly. Every uid kube makes is one.
_PLAIN_UID = re.compile(r"[0-9A-Za-z._-]{1,256}")
#: the uid the template of a single reference is walked with
_PLACEHOLDER = "uid"
_PLACEHOLDER_KEY = 'k:{"uid":"uid"}'
_FIRST = operator.itemgetter(0)


class OwnerRefsMemo:
    """Bounded table ``(references' text, schema node) -> [node, subtree, its JSON]``, and for
    each reference, ``(its text without the uid, schema node) -> template``.

    The subtree kept is handed out as is for a stored write (whose objects nobody modifies:
    the same rule as the shared canonical trees of :mod:`apiserver.storage.compact`), and as a
    fresh decoding of its JSON otherwise; each form is made when first asked for, so a miss
    costs no more than the key. The node is held by the entry, so its ``id`` cannot be reused
    by another object while the entry lives.

    A new owner's first object misses the first table (its text names the owner's uid), and the
    walk it then needed cost as much as the rest of the object's entry. But the subtree of one
    reference is ``{".": {}, 'k:{"uid":"<uid>"}': item}`` where ``item`` (the item's own fields:
    ``{}`` for the atomic OwnerReference) follows from the reference's keys and the types of its
    values, not from its strings (the uid's value only names the item; a string is a leaf named
    by its key). So a reference with a plain uid (:data:`_PLAIN_UID`) is answered from the
    template of its text with every string blanked: walked once, for a placeholder uid, by the
    same ``build``, and used only where that walk gave exactly this form. Several references
    with distinct plain uids are one template each, in uid order (:meth:`_from_template`).
    """

    __slots__ = ("_table", "_templates")

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, int], list[Any]] = {}
        self._templates: dict[tuple[bytes, int], list[Any]] = {}

    def tree(
        self,
        refs: list[Any],
        node: Any,
        build: Callable[[list[Any]], dict[str, Any]],
        shared: bool,
    ) -> dict[str, Any]:
        """The subtree of ``refs`` under ``node``: remembered, or ``build(refs)`` (then
        remembered where the key allows it). ``shared``: the caller stores the tree without
        modifying it."""
        try:
            text: bytes | None = orjson.dumps(refs, option=EXACT_JSON)
        except (TypeError, RecursionError):  # orjson refuses it: not rememberable
            text = None
        if text is None or len(text) > _MAX_BYTES or b"null" in text:
            return build(refs)
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
        tree = self._from_template(refs, node, build, shared)
        if tree is None:
            tree = build(refs)
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

    def _from_template(
        self, refs: list[Any], node: Any, build: Callable[[list[Any]], dict[str, Any]], shared: bool
    ) -> dict[str, Any] | None:
        """The subtree of references with plain, distinct uids from their templates; ``None``
        where there is none (another list, or a walk that did not give the one form).

        Several references (a PodGroup's: its StatefulSet and its Workload) are one template
        each: the walk names each item by its uid and walks it on its own, and fieldsV1 orders
        ``k:`` elements of one string key by that string (``value.Compare``), so the items go in
        uid order. Repeated uids are left to the walk, which keeps the first item only."""
        items: list[tuple[str, list[Any]]] = []
        for ref in refs:
            if type(ref) is not dict:
                return None
            uid = ref.get("uid")
            if type(uid) is not str or _PLAIN_UID.fullmatch(uid) is None:
                return None
            got = self._template(ref, node, build)
            if got is None:
                return None
            items.append((uid, got))
        if len(items) > 1:
            items.sort(key=_FIRST)
            if any(items[i][0] == items[i + 1][0] for i in range(len(items) - 1)):
                return None
        out: dict[str, Any] = {".": {}}
        for uid, got in items:
            # shared: the item tree is never modified by anyone (stored objects); else a fresh one
            out[plain_string_key("uid", uid)] = got[1] if shared else orjson.loads(got[2])
        return out if items else None

    def _template(
        self, ref: dict[str, Any], node: Any, build: Callable[[list[Any]], dict[str, Any]]
    ) -> list[Any] | None:
        """``[node, item subtree, its JSON]`` of ``ref``'s template, or ``None`` (its walk did not
        give the one form)."""
        # every string left out (the owner's name differs with its uid), the other values kept
        blank = {k: "" if type(v) is str else v for k, v in ref.items()}
        blank["uid"] = _PLACEHOLDER
        text = orjson.dumps(blank, option=EXACT_JSON)  # the list's text was written: so is this
        key = (text, id(node))
        got = self._templates.get(key)
        if got is None or got[0] is not node:
            walked = build([blank])
            item = walked.get(_PLACEHOLDER_KEY)
            ok = list(walked) == [".", _PLACEHOLDER_KEY] and walked["."] == {} and type(item) is dict
            if len(self._templates) >= _ENTRIES:
                self._templates.clear()
            got = self._templates[(bytes(memoryview(text)), id(node))] = [
                node,
                item if ok else None,
                bytes(memoryview(orjson.dumps(item))) if ok else None,
            ]
        return got if got[1] is not None else None

    def clear(self) -> None:
        self._table.clear()
        self._templates.clear()


__all__ = ["OwnerRefsMemo"]
