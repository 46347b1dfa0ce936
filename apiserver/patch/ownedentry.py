"""A stored create's ``managedFields`` entry for an object with owner references, from a template.

:class:`.createentry.CreatedEntryTemplates` answers a create from the tree remembered for the
object's *shape* (plain scalars of its maps blanked, lists kept verbatim). An object with
``metadata.ownerReferences`` never recurs in that shape: the references are list items, and
each names its owner's uid. Yet those are the objects controllers create by the thousand (every
StatefulSet pod, its Workload, PodGroup and ControllerRevisions; Job and ReplicaSet pods), and
each took the general path, which walks the same way to the same answer every time.

The general path (:func:`apiserver.patch.apply._created_entry`) already builds such an entry in
two parts: the tree of the object without its references (answered by that object's shape),
and the ``f:ownerReferences`` subtree ``{".": {}, 'k:{"uid":"<uid>"}': item, ...}``, joined
under ``f:metadata`` at its canonical position (:func:`apiserver.patch.apply.with_owner_references`).
Each ``item`` follows from its reference's keys and the types of its values, not from its
strings, when the uid is *plain* (written by Go's JSON as it is; every uid kube makes is); the
items go in uid order. So the key here is the object's shape with its references replaced by
their templates (every string blanked) in uid order, and the template holds the rest's tree,
each reference's item subtree and the rest's field set (for the decoder, see below). A create
then costs the shape's key, one small dict per level on the way to ``f:ownerReferences``, and
the text the decoder is told about.

A template is learnt from the general path's own answer, and kept only where rebuilding that
answer from the template gives it exactly (key for key and in order, as text); the test
``test_create_entry_template.py`` compares the two on random objects with one to three
references. A shape is learnt the *second* time it is met: a one-off (each set's Workload,
whose ``spec.podGroupTemplates`` is named after the set) then costs only its key.

Like the general path, the joined entry is told to the decoder (:func:`.fieldpath.remember_joined`,
through :func:`apiserver.patch.apply.remember_created_join`): the object's first update decodes
its stored entry from the rest's set and a parse of the references' subtree instead of a parse
of the whole tree.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.patch.apply import FIELDS_V1, UPDATE, remember_created_join, with_owner_references
from apiserver.patch.createmem import blanked, key_of_blanked
from apiserver.patch.fieldpath import EXACT_JSON, FieldPathError, FieldSet, plain_string_key

#: Bounds: learnt templates, and shapes met once (a separate table, so that one-off shapes
#: never push the learnt ones out).
_ENTRIES = 1024
_SEEN_ENTRIES = 1024

#: A uid that Go's JSON writes as it is (nothing escaped), so its ``k:`` text is
#: :func:`plain_string_key`'s. The same rule as :mod:`.ownerrefs`.
_PLAIN_UID = re.compile(r"[0-9A-Za-z._-]{1,256}")
_FIRST = operator.itemgetter(0)
_REFS_KEY = "f:ownerReferences"


class _Template:
    """What a create of one owned shape records: the rest's tree and set, and one item subtree
    per reference in uid order (all shared: stored entries are never modified)."""

    __slots__ = ("node", "rest", "rest_set", "dot", "items")

    def __init__(self, node: Any, rest: Obj, rest_set: FieldSet, dot: Obj, items: tuple[Obj, ...]) -> None:
        self.node = node
        self.rest = rest
        self.rest_set = rest_set
        self.dot = dot
        self.items = items


def created_entry(manager: str, api_version: str, now: str, tree: Obj) -> Obj:
    """The entry :func:`apiserver.patch.apply._encode_entry` writes for a create (no subresource)."""
    entry: Obj = {"manager": manager, "operation": UPDATE, "apiVersion": api_version}
    if now:
        entry["time"] = now
    entry["fieldsType"] = FIELDS_V1
    entry["fieldsV1"] = tree
    return entry


def _sorted_uids(refs: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """``refs`` as ``(uid, reference)`` in uid order, or ``None`` where the template cannot
    answer: not a non-empty list of objects with plain, distinct uids (the general path keeps
    only the first of repeated uids, and writes odd ones escaped)."""
    if type(refs) is not list or not refs:
        return None
    out: list[tuple[str, dict[str, Any]]] = []
    for ref in refs:
        if type(ref) is not dict:
            return None
        uid = ref.get("uid")
        if type(uid) is not str or _PLAIN_UID.fullmatch(uid) is None:
            return None
        out.append((uid, ref))
    if len(out) > 1:
        out.sort(key=_FIRST)
        if any(out[i][0] == out[i + 1][0] for i in range(len(out) - 1)):
            return None
    return out


def _owned_shape_key(obj: Obj, refs: list[tuple[str, dict[str, Any]]]) -> bytes | None:
    """The key of ``obj``'s template: its shape with the references replaced by their
    templates (each string blanked, the other values kept) in uid order; ``None`` where the
    shape has none (a ``null`` anywhere, a value orjson refuses, too large)."""
    shape = blanked(obj)
    if shape is None or type(shape.get("metadata")) is not dict:
        return None
    # blanked() made every map anew: its metadata is this call's own
    shape["metadata"]["ownerReferences"] = [
        {k: "" if type(v) is str else v for k, v in ref.items()} for _, ref in refs
    ]
    return key_of_blanked(shape)


def _refs_tree(dot: Obj, refs: list[tuple[str, dict[str, Any]]], items: tuple[Obj, ...]) -> Obj:
    tree: Obj = {".": dot}
    for (uid, _), item in zip(refs, items, strict=True):
        tree[plain_string_key("uid", uid)] = item
    return tree


def _learn(node: Any, refs: list[tuple[str, dict[str, Any]]], joined: Any) -> _Template | None:
    """The template of the general path's joined tree ``joined`` for ``refs``, or ``None``
    where it is not of the one form (the rest's tree with ``f:ownerReferences`` placed in
    ``f:metadata``, one ``k:{"uid":…}`` item per reference in uid order) or the rest's tree is
    not a text the decoder takes for its set."""
    if type(joined) is not dict:
        return None
    meta = joined.get("f:metadata")
    if type(meta) is not dict:
        return None
    refs_tree = meta.get(_REFS_KEY)
    keys = [plain_string_key("uid", uid) for uid, _ in refs]
    if type(refs_tree) is not dict or list(refs_tree) != [".", *keys] or refs_tree["."] != {}:
        return None
    items = tuple(refs_tree[k] for k in keys)
    rest_meta = {k: v for k, v in meta.items() if k != _REFS_KEY}
    if rest_meta:
        rest = dict(joined)
        rest["f:metadata"] = rest_meta
    else:  # the rest had no f:metadata: the join added it
        rest = {k: v for k, v in joined.items() if k != "f:metadata"}
    try:
        rest_set = FieldSet.from_fields_v1(rest)
        text = orjson.dumps(joined, option=EXACT_JSON)
        again = orjson.dumps(
            with_owner_references(rest, _refs_tree(refs_tree["."], refs, items)), option=EXACT_JSON
        )
    except (FieldPathError, TypeError):
        return None
    if again != text or not rest_set.decodes_to_itself():
        return None
    return _Template(node, rest, rest_set, refs_tree["."], items)


class OwnedEntryTemplates:
    """``(owned shape, schema node) -> template`` of stored creates with owner references,
    learnt from the general path (see the module docstring). The schema node is held by its
    template, so its ``id`` cannot be reused while the entry lives."""

    __slots__ = ("_table", "_seen")

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, int], _Template] = {}
        self._seen: dict[tuple[bytes, int], Any] = {}

    def entries(
        self,
        obj: Obj,
        node: Any,
        manager: str,
        api_version: str,
        now: str,
        general: Callable[[], list[Obj] | None],
    ) -> list[Obj] | None:
        """The ``managedFields`` a stored create of ``obj`` (whose ``metadata`` holds
        ``ownerReferences`` and no ``managedFields``) records, as ``general()`` answers them."""
        refs = _sorted_uids(obj["metadata"]["ownerReferences"])
        shape = _owned_shape_key(obj, refs) if refs is not None else None
        if refs is None or shape is None:
            return general()
        memo_key = (shape, id(node))
        hit = self._table.get(memo_key)
        if hit is not None and hit.node is node:
            refs_tree = _refs_tree(hit.dot, refs, hit.items)
            joined = with_owner_references(hit.rest, refs_tree)
            remember_created_join(joined, hit.rest_set, refs_tree, ())
            return [created_entry(manager, api_version, now, joined)]
        out = general()
        if out is None or len(out) != 1:
            return out
        seen = self._seen.get(memo_key)
        if seen is not node:
            # met once: learnt if it is met again (most owned shapes recur: a set's pods)
            if len(self._seen) >= _SEEN_ENTRIES:
                self._seen.clear()
            # an exact copy of the key: orjson's result holds its whole write buffer
            self._seen[(bytes(memoryview(shape)), id(node))] = node
            return out
        joined = out[0].get("fieldsV1")
        template = _learn(node, refs, joined)
        # remembered only when the template rebuilds the general path's entry exactly
        if template is not None and list(created_entry(manager, api_version, now, joined).items()) == list(
            out[0].items()
        ):
            del self._seen[memo_key]
            if len(self._table) >= _ENTRIES:
                self._table.clear()
            self._table[(bytes(memoryview(shape)), id(node))] = template
        return out

    def clear(self) -> None:
        self._table.clear()
        self._seen.clear()


__all__ = ["OwnedEntryTemplates", "created_entry"]
