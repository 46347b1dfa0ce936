"""Compact decoded objects for read-only sharing: equal subtrees become one object.

A stored object handed out read-only (the informers of this process share the store's dict) is
never modified by anyone, so parts of it that are equal to parts of other objects can be the
same Python object. ``metadata.managedFields`` is where this pays: a Pod's ``fieldsV1`` trees are
about half of its decoded size (hundreds of small dicts, mostly empty leaves), and they are the
same for every pod written by the same manager with the same fields. Here each ``fieldsV1``
subtree is looked up by its exact JSON text (key order included, so serialization is unchanged)
in a bounded table of canonical trees, and the short strings of each entry are interned.

Nothing a client receives changes: the canonical trees are equal, key for key and in the same
order, to the ones they replace, and the stored bytes are untouched. The cost is paid once per
revision that is shared (a Pod's fieldsV1 text is about 1 KB to serialize); a table miss rebuilds
only the subtrees that differ (e.g. the one naming the pod's IP).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.api.types import Obj

#: canonical fieldsV1 trees by their JSON text; cleared when full (sharing is an optimisation:
#: trees handed out before a clear stay valid, new ones just start a new generation)
_TREES: dict[bytes, dict[str, Any]] = {}
TREE_TABLE_LIMIT = 4096
#: the same trees by identity, so a tree that is already canonical is known without serializing
#: it (each entry holds its tree, so its id cannot be reused while it is there), and the trees
#: known by identity alone (:func:`canonical_as_built`); the tables are bounded by this one
_BY_ID: dict[int, dict[str, Any]] = {}
#: entry fields worth interning (manager names, operations, versions, timestamps)
_ENTRY_STRINGS = ("manager", "operation", "apiVersion", "time", "fieldsType", "subresource")
#: what an empty tree encodes to
_EMPTY = b"{}"
#: entries' whole ``fieldsV1`` trees met lately that are not canonical themselves, by identity:
#: ``id -> (tree, its canonical tree)``. The create templates give a StatefulSet's pods one joined
#: tree (:mod:`apiserver.patch.ownedentry`), so the set's next pods' trees are one lookup here
#: instead of their encoding (~900 bytes) and a lookup by text. Sound for the reason the rest of
#: this module is: a tree that was part of a stored revision is never modified (each entry holds
#: its tree, so its id cannot be reused while the entry is there). Small: it keeps the trees it
#: names alive, and only the last few writes' trees recur.
_MET: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
MET_LIMIT = 256


def canonical_fields(tree: dict[str, Any]) -> dict[str, Any]:
    """The shared tree equal to ``tree`` (a ``fieldsV1`` object or one of its subtrees)."""
    if is_canonical(tree):
        return tree  # already the canonical one (a write's entries made by canonical_json)
    if not tree:
        # an empty tree (every ``"."`` of a map or list item, about three per owned create's
        # entry) encodes as ``{}``: looked up without encoding it
        hit = _TREES.get(_EMPTY)
        if hit is not None:
            return hit
    try:
        text = orjson.dumps(tree)
    except TypeError:  # not plain JSON (cannot come from stored bytes): leave it alone
        return tree
    return _canonical(tree, text)


def is_canonical(tree: dict[str, Any]) -> bool:
    """Whether ``tree`` is the canonical tree of its text (compaction leaves it as it is)."""
    return _BY_ID.get(id(tree)) is tree


def _canonical_entry_tree(tree: dict[str, Any]) -> dict[str, Any]:
    """:func:`canonical_fields` of an entry's whole ``fieldsV1``, remembered by identity for the
    next few writes (see ``_MET``)."""
    key = id(tree)
    if _BY_ID.get(key) is tree:
        return tree  # already canonical (an entry carried over from the revision before)
    met = _MET.get(key)
    if met is not None and met[0] is tree:
        return met[1]
    got = canonical_fields(tree)
    if got is not tree:
        if len(_MET) >= MET_LIMIT:
            _MET.clear()
        _MET[key] = (tree, got)
    return got


def canonical_as_built(tree: dict[str, Any]) -> dict[str, Any]:
    """``tree`` made a canonical tree by identity alone (compaction then leaves it as it is);
    returns it.

    For a writer that built ``tree`` from canonical parts and new levels in the canonical order
    of its text (as :func:`canonical_json_built` requires of its ``build``), when that text is
    the tree's own: a created object's entry naming its owners' uids (``ownedentry``) is met
    again only as this very tree (the stored entry, carried over by the object's next
    revisions), never as an equal one, so keying it by its text (1-2 KB written, copied and
    kept, for a PodGroup, Workload, ControllerRevision and each set's pods) bought nothing. An
    equal tree met by its text later becomes canonical beside it: two equal canonical trees
    share less, and are each what compaction would make.
    """
    if len(_BY_ID) >= TREE_TABLE_LIMIT:
        _TREES.clear()
        _BY_ID.clear()
        _MET.clear()
    _BY_ID[id(tree)] = tree
    return tree


def canonical_json(text: bytes) -> dict[str, Any]:
    """The shared tree whose JSON is ``text`` (a ``fieldsV1`` object's encoding).

    For a writer that holds the encoding rather than a tree (the registry's managedFields
    tracker keeps every distinct field set's ``fieldsV1`` as bytes): a known tree costs one
    lookup instead of decoding it afresh and serializing it again when the record is shared.
    The tree is shared like every canonical one: only for a write whose object nobody will
    modify (stored, then handed out read-only or as copies).
    """
    hit = _TREES.get(text)
    if hit is not None:
        return hit
    tree: dict[str, Any] = orjson.loads(text)
    return _canonical(tree, text)


def canonical_json_built(text: bytes, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """:func:`canonical_json` for a writer that can build the tree from shared parts.

    ``build()`` must return a tree whose JSON is exactly ``text`` (keys in the same order) and
    whose subtrees are canonical trees or never-modified ones; it becomes the canonical tree of
    ``text`` without decoding the text and serializing each of its subtrees again, as
    :func:`canonical_json` does for a text it has not seen.
    """
    hit = _TREES.get(text)
    if hit is not None:
        return hit
    tree = build()
    if len(_BY_ID) >= TREE_TABLE_LIMIT:
        _TREES.clear()
        _BY_ID.clear()
        _MET.clear()
    _TREES[bytes(memoryview(text))] = tree
    _BY_ID[id(tree)] = tree
    return tree


def _canonical(tree: dict[str, Any], text: bytes) -> dict[str, Any]:
    hit = _TREES.get(text)
    if hit is not None:
        return hit
    out: dict[str, Any] = {}
    for k, v in tree.items():
        out[k] = canonical_fields(v) if type(v) is dict else v
    if len(_BY_ID) >= TREE_TABLE_LIMIT:
        _TREES.clear()
        _BY_ID.clear()
        _MET.clear()
    _TREES[bytes(memoryview(text))] = out  # orjson's buffer is at least 4 KB: keep an exact copy
    _BY_ID[id(out)] = out
    return out


def compact(obj: Obj) -> Obj:
    """Share ``obj``'s managedFields trees and intern their strings, in place; returns ``obj``.

    Only for an object nobody will modify (a stored revision handed out read-only); the values
    replaced are equal to their replacements, so readers see no difference.
    """
    md = obj.get("metadata")
    if type(md) is not dict:
        return obj
    entries = md.get("managedFields")
    if type(entries) is not list:
        return obj
    intern = sys.intern
    for entry in entries:
        if type(entry) is not dict:
            continue
        for k in _ENTRY_STRINGS:
            v = entry.get(k)
            if type(v) is str:
                entry[k] = intern(v)
        fv1 = entry.get("fieldsV1")
        if type(fv1) is dict:
            entry["fieldsV1"] = _canonical_entry_tree(fv1)
    return obj


__all__ = [
    "TREE_TABLE_LIMIT",
    "canonical_as_built",
    "canonical_fields",
    "canonical_json",
    "canonical_json_built",
    "compact",
    "is_canonical",
]
