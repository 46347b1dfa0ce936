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
and each reference's item subtree. A create then costs the shape's key, one small dict per
level on the way to ``f:ownerReferences``, and the join's text (below).

A Workload is owned too, and its ``spec.podGroupTemplates`` is named after its set, so its
shape never recurs either: a one-item list-map directly under ``spec``, keyed by one field
whose value is plain, is templated the same way (the item with its key value blanked; its
subtree ``{".": {}, 'k:{"<key>":"<value>"}': item}`` joined under ``f:spec`` as
:func:`apiserver.patch.apply.with_spec_lists` joins it; the same scope as :mod:`.createlists`).

A template is learnt from the general path's own answer, and kept only where rebuilding that
answer from the template gives it exactly (key for key and in order, as text); the test
``test_create_entry_template.py`` compares the two on random objects with one to three
references. A shape is learnt the *second* time it is met: a one-off (each set's Workload,
whose ``spec.podGroupTemplates`` is named after the set) then costs only its key.

The general path tells the decoder how its joined entry was made (:func:`.fieldpath.remember_joined`)
for the object's first update; a template's join is not told (session 37): the updates such
objects get in numbers, status writes (the node agent's of pods, the scheduler's condition of
PodGroups), are answered by the status templates (:mod:`.statusentry`), which key the stored
entries by their text and decode them only for the first writes of a transition, so the table
held a text (1-2 KB) and its parts for every owned object created, read almost never; an
update the general path takes (a label patch, a PodGroup's ``minCount``) parses the entry whole
once. The pods of one set name the same owners: the recent joins are kept per template and
owners, and such a pod's entry shares its tree (its parts were shared already); the creates of
one second with one tree share their entry list too (:class:`EntryLists`). The join is made a
canonical tree as built (:func:`apiserver.storage.compact.canonical_as_built`): the stored
record's compaction, which would encode it and each new level of it again, knows it by
identity, and its text (which names its owners: no other tree has it) is not written.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.patch.apply import (
    FIELDS_V1,
    UPDATE,
    with_owner_references,
    with_spec_lists,
)
from apiserver.patch.bounded import keep
from apiserver.patch.fieldpath import (
    EXACT_JSON,
    FieldPathError,
    FieldSet,
    field_schema,
    list_semantics,
    map_is_atomic,
    plain_string_key,
)
from apiserver.patch.structkey import Key, kept, listed_key, owned_key, rememberable
from apiserver.storage.compact import canonical_as_built, is_canonical

#: Bounds: learnt templates, and shapes met once (a separate table, so that one-off shapes
#: never push the learnt ones out).
_ENTRIES = 1024
_SEEN_ENTRIES = 1024
#: Bounds of the recent joins and entry lists (oldest dropped first): the sets a controller
#: creates at once, with room to spare.
_JOINS = 64
_LISTS = 64

#: A uid or list-map key value that Go's JSON writes as it is (nothing escaped), so its ``k:``
#: text is :func:`plain_string_key`'s. The same rule as :mod:`.ownerrefs` and :mod:`.createlists`.
_PLAIN = re.compile(r"[0-9A-Za-z._-]{1,256}")
_FIRST = operator.itemgetter(0)
_REFS_KEY = "f:ownerReferences"


#: The owner references as ``(uid, reference)`` in uid order.
Refs = list[tuple[str, dict[str, Any]]]
#: The one-item list-maps under ``spec`` as ``(spec field, key field, key value)`` in ``spec``'s order.
Lists = list[tuple[str, str, str]]


class _Template:
    """What a create of one owned shape records: the rest's tree, one item subtree per reference
    in uid order and one per templated list (all shared: stored entries are never modified)."""

    __slots__ = ("node", "rest", "dot", "items", "list_items")

    def __init__(
        self,
        node: Any,
        rest: Obj,
        dot: Obj,
        items: tuple[Obj, ...],
        list_items: tuple[Obj, ...],
    ) -> None:
        self.node = node
        self.rest = rest
        self.dot = dot
        self.items = items
        self.list_items = list_items


class _Refused:
    """A shape whose template could not rebuild the general path's entry: its creates take the
    general path without trying again."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


def created_entry(manager: str, api_version: str, now: str, tree: Obj) -> Obj:
    """The entry :func:`apiserver.patch.apply._encode_entry` writes for a create (no subresource)."""
    entry: Obj = {"manager": manager, "operation": UPDATE, "apiVersion": api_version}
    if now:
        entry["time"] = now
    entry["fieldsType"] = FIELDS_V1
    entry["fieldsV1"] = tree
    return entry


class EntryLists:
    """The ``managedFields`` lists of stored creates answered from a template, one object per
    ``(tree, manager, API version, time)``: the creates of one second by one manager with one
    entry tree (a set's pods, the Events of one kind) get the very same list.

    Stored revisions share their equal ``managedFields`` lists anyway, made one object when a
    revision is first handed out (:meth:`apiserver.storage.sharedsubtrees.SharedSubtrees.compact_and_share`);
    that step compacts a list it does not know by identity (its strings interned, its trees made
    the canonical ones), and builds its key from every entry. A list made here is compact as it
    is made, where its tree is a canonical one (:func:`apiserver.storage.compact.is_canonical`):
    its strings are interned here, and :attr:`adopt` (the store's table of shared lists) gives
    the equal list it knows (the first create of a shape took the general path) or knows this
    one from then on, by identity: the revisions holding it skip that step. Equal key for key to
    a fresh list; never modified once stored (no stored revision is), like the trees it holds.
    Each entry holds its tree, so the tree's ``id`` in a key is not reused while the entry lives.
    """

    __slots__ = ("_table", "adopt")

    def __init__(self) -> None:
        self._table: dict[tuple[int, str, str, str], tuple[Obj, list[Obj]]] = {}
        #: given each list made here whose tree is canonical, answers the equal list to hand out
        #: (set by the registry: its store's ``SharedSubtrees.adopt``); None: nobody is
        self.adopt: Callable[[list[Obj], bool], list[Obj]] | None = None

    def get(self, manager: str, api_version: str, now: str, tree: Obj, unique: bool = False) -> list[Obj]:
        """The entry list of a create whose tree is ``tree`` (``unique``: a join naming its
        owners, which no other list can equal: see ``SharedSubtrees.adopt``)."""
        key = (id(tree), manager, api_version, now)
        got = self._table.get(key)
        if got is not None and got[0] is tree:
            return got[1]
        adopt = self.adopt
        if adopt is not None and is_canonical(tree):
            # compact as compaction would leave it: its strings interned (the literals are)
            intern = sys.intern
            entries = adopt([created_entry(intern(manager), intern(api_version), intern(now), tree)], unique)
        else:
            entries = [created_entry(manager, api_version, now, tree)]
        keep(self._table, key, (tree, entries), _LISTS)
        return entries

    def clear(self) -> None:
        self._table.clear()


def _sorted_uids(refs: Any) -> Refs | None:
    """``refs`` as ``(uid, reference)`` in uid order, or ``None`` where the template cannot
    answer: not a non-empty list of objects with plain, distinct uids (the general path keeps
    only the first of repeated uids, and writes odd ones escaped)."""
    if type(refs) is not list or not refs:
        return None
    out: Refs = []
    for ref in refs:
        if type(ref) is not dict:
            return None
        uid = ref.get("uid")
        if type(uid) is not str or _PLAIN.fullmatch(uid) is None:
            return None
        out.append((uid, ref))
    if len(out) > 1:
        out.sort(key=_FIRST)
        if any(out[i][0] == out[i + 1][0] for i in range(len(out) - 1)):
            return None
    return out


def _spec_lists(obj: Obj, node: Any) -> Lists:
    """The one-item list-maps directly under ``obj``'s ``spec`` keyed by one field whose value
    is plain (a Workload's ``podGroupTemplates``, a pod's ``containers``), where ``spec`` is
    walked field by field and holds something else."""
    spec = obj.get("spec")
    if type(spec) is not dict:
        return []
    out: Lists = []
    spec_node: Any = None
    for k, v in spec.items():
        if type(v) is not list or len(v) != 1 or type(v[0]) is not dict:
            continue
        if spec_node is None:
            spec_node = field_schema(node, "spec")[0]
            if map_is_atomic(spec_node):
                return []
        kind, keys = list_semantics(field_schema(spec_node, k)[0])
        if kind != "map" or len(keys) != 1 or _PLAIN.fullmatch(keys[0]) is None:
            continue
        value = v[0].get(keys[0])
        if type(value) is str and _PLAIN.fullmatch(value) is not None:
            out.append((k, keys[0], value))
    # the rest must hold something: an empty spec is walked otherwise (see .createlists)
    return out if len(out) < len(spec) else []


def _refs_tree(dot: Obj, refs: Refs, items: tuple[Obj, ...]) -> Obj:
    tree: Obj = {".": dot}
    for (uid, _), item in zip(refs, items, strict=True):
        tree[plain_string_key("uid", uid)] = item
    return tree


def _list_trees(dot: Obj, lists: Lists, items: tuple[Obj, ...]) -> list[tuple[str, Obj]]:
    return [
        (k, {".": dot, plain_string_key(key, value): item})
        for (k, key, value), item in zip(lists, items, strict=True)
    ]


def _join(
    rest: Obj, dot: Obj, refs: Refs, items: tuple[Obj, ...], lists: Lists, list_items: tuple[Obj, ...]
) -> tuple[Obj, Obj, list[tuple[str, Obj]]]:
    """The joined tree as the general path joins it (the lists under ``f:spec``, then the
    references under ``f:metadata``), with the references' subtree and the lists'."""
    subtrees = _list_trees(dot, lists, list_items) if lists else []
    tree = with_spec_lists(rest, subtrees) if subtrees else rest
    refs_tree = _refs_tree(dot, refs, items)
    return with_owner_references(tree, refs_tree), refs_tree, subtrees


def _split(level: Any, key: str, element: str) -> tuple[Obj, Obj] | None:
    """``level`` without its ``key`` and the item subtree of ``level[key]``, where that is
    ``{".": {}, element: item}``; else ``None``."""
    if type(level) is not dict:
        return None
    sub = level.get(key)
    if type(sub) is not dict or list(sub) != [".", element] or sub["."] != {}:
        return None
    return {k: v for k, v in level.items() if k != key}, sub[element]


def _learn(node: Any, refs: Refs, lists: Lists, joined: Any) -> _Template | None:
    """The template of the general path's joined tree ``joined``, or ``None`` where it is not
    of the one form (the rest's tree with ``f:ownerReferences`` placed in ``f:metadata``, one
    ``k:{"uid":…}`` item per reference in uid order, and each list's subtree under ``f:spec``
    with its one item), rebuilding it does not give it exactly, or the rest's tree is not a
    text the decoder takes for its set."""
    if type(joined) is not dict:
        return None
    meta = joined.get("f:metadata")
    if type(meta) is not dict:
        return None
    refs_tree = meta.get(_REFS_KEY)
    keys = [plain_string_key("uid", uid) for uid, _ in refs]
    if type(refs_tree) is not dict or list(refs_tree) != [".", *keys] or refs_tree["."] != {}:
        return None
    dot = refs_tree["."]
    items = tuple(refs_tree[k] for k in keys)
    rest = dict(joined)
    rest_meta = {k: v for k, v in meta.items() if k != _REFS_KEY}
    if rest_meta:
        rest["f:metadata"] = rest_meta
    else:  # the rest had no f:metadata: the join added it
        del rest["f:metadata"]
    list_items: list[Obj] = []
    for k, key, value in lists:
        split = _split(rest.get("f:spec"), "f:" + k, plain_string_key(key, value))
        if split is None or not split[0]:  # the rest's spec is not empty (see .createlists)
            return None
        rest["f:spec"], item = split
        list_items.append(item)
    try:
        rest_set = FieldSet.from_fields_v1(rest)
        text = orjson.dumps(joined, option=EXACT_JSON)
        again = orjson.dumps(_join(rest, dot, refs, items, lists, tuple(list_items))[0], option=EXACT_JSON)
    except (FieldPathError, TypeError):
        return None
    if again != text or not rest_set.decodes_to_itself():
        return None
    return _Template(node, rest, dot, items, tuple(list_items))


class OwnedEntryTemplates:
    """``(owned shape, schema node) -> template`` of stored creates with owner references,
    learnt from the general path (see the module docstring). The schema node is held by its
    template, so its ``id`` cannot be reused while the entry lives."""

    __slots__ = ("_joins", "_lists", "_seen", "_table")

    def __init__(self, lists: EntryLists | None = None) -> None:
        self._table: dict[tuple[Key, int], _Template | _Refused] = {}
        self._seen: dict[tuple[Key, int], Any] = {}
        #: the recent joins made from a template, per ``(id(template), owners' uids in uid
        #: order)``: ``(template, tree)``. A set's pods are of one
        #: template and name the same owners, so they are joined once; the controller creates
        #: the pods of several sets at once, so a set's next pod often comes after another
        #: set's objects (a single last join was met by one pod in three in ``gangs-1000x3``).
        #: Not for templated lists: their key values are each object's own.
        self._joins: dict[tuple[int, tuple[str, ...]], tuple[_Template, Obj]] = {}
        #: the entry lists handed out, one per tree, manager, version and second
        self._lists = lists if lists is not None else EntryLists()

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
        key = owned_key(obj, refs) if refs is not None else None
        if refs is None or key is None:
            return general()
        hit = self._table.get((key, id(node)))
        lists: Lists = []
        list_key: Key | None = None
        if hit is None or hit.node is not node:
            # not known with its lists verbatim (as a set's pods are, of one template): known
            # with its one-item list-maps templated (as each set's Workload is)?
            lists = _spec_lists(obj, node)
            if lists:
                # apart from the verbatim form's keys: a list's blanked key value ("") is
                # another object's verbatim one (which is not plain: never templated)
                list_key = listed_key(key, obj, lists)
                hit = self._table.get((list_key, id(node))) if list_key is not None else None
        if hit is not None and hit.node is node:
            if isinstance(hit, _Refused):
                return general()
            join_key = (id(hit), tuple([uid for uid, _ in refs]))
            known = None if lists else self._joins.get(join_key)
            if known is not None and known[0] is hit:
                # the set's next pod: its owners' join again (a tree of shared, never
                # modified parts)
                joined = known[1]
            else:
                # made of canonical parts and new levels in their text's order, never modified
                joined = canonical_as_built(
                    _join(hit.rest, hit.dot, refs, hit.items, lists, hit.list_items)[0]
                )
                if not lists:
                    keep(self._joins, join_key, (hit, joined), _JOINS)
            return self._lists.get(manager, api_version, now, joined, unique=True)
        out = general()
        if out is None or len(out) != 1:
            return out
        # Learnt the second time it is met, with its lists verbatim where that form recurred,
        # else with them templated; met once, both forms are noted.
        if self._seen.get((key, id(node))) is node:
            learn_key, lists = key, []
        elif list_key is not None and self._seen.get((list_key, id(node))) is node:
            learn_key = list_key
        else:
            if len(self._seen) >= _SEEN_ENTRIES - 1:
                self._seen.clear()
            self._seen[(kept(key), id(node))] = node
            if list_key is not None:
                self._seen[(kept(list_key), id(node))] = node
            return out
        learnt = out[0].get("fieldsV1")
        template: _Template | _Refused | None = _learn(node, refs, lists, learnt)
        # kept only when the template rebuilds the general path's entry exactly; else the
        # shape is remembered as refused (never learnt again, as the general path answers it)
        if (
            template is None
            or type(learnt) is not dict  # (never: a template is learnt from a tree)
            or list(created_entry(manager, api_version, now, learnt).items()) != list(out[0].items())
            or not rememberable(obj, key)
        ):
            template = _Refused(node)
        self._seen.pop((key, id(node)), None)
        if list_key is not None:
            self._seen.pop((list_key, id(node)), None)
        if len(self._table) >= _ENTRIES:
            self._table.clear()
        self._table[(kept(learn_key), id(node))] = template
        return out

    def clear(self) -> None:
        self._table.clear()
        self._seen.clear()
        self._joins.clear()
        self._lists.clear()


__all__ = ["EntryLists", "OwnedEntryTemplates", "created_entry"]
