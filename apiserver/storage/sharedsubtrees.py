"""One object for the equal lists of the objects shared read-only (gangplane's; nothing a client sees).

The informers of this process share the store's decoded dict of each current revision
(:meth:`~apiserver.storage.interface.Record.shared`), and the scheduler keeps the ones of the pods
it placed until it next copies their nodes. Every dict holding a container and every list is an
object the cyclic collector traverses at each pass that reaches it, so the containers of a pod's
manifest are what a pod costs the collector (``bench.micro.gc_census``): about twelve per
revision, of which the lists are the same for every pod of one template - ``spec.containers``
(the list, each container, its ``resources``), ``spec.tolerations``, ``metadata.ownerReferences``
(one set's pods), and, for the pods written or moved in one second, ``metadata.managedFields``
(one manager's entries, whose ``fieldsV1`` trees :mod:`apiserver.storage.compact` already shares)
and ``status.conditions``. Here each of those lists is looked up by its exact content in a
bounded table, and a revision equal to a known one takes the known list in place of its own: a
pod's revision then holds four containers of its own (itself, ``metadata``, ``spec``,
``status``) instead of about twelve.

A revision built from the one before it (``pods/binding`` copies only ``metadata``, ``spec`` and
``status`` of the stored pod and keeps every list of it) brings lists that already are the
canonical ones: the table also knows its lists by identity, so such a list costs one lookup
instead of its serialization, and a ``managedFields`` list known so skips its compaction too
(:meth:`SharedSubtrees.compact_and_share`).

Nothing a client receives changes: the shared list is equal, item for item, key for key and in
the same order, to the one it replaces, and the stored bytes are untouched. It is sound for the
reason sharing the decoded dict is: no reader modifies a read-only object (the mutation
detector, ``GANGPLANE_CACHE_MUTATION_DETECTOR``, checks that in tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.storage.compact import compact

#: the lists shared, as (parent, field): parent ``metadata`` for every kind, ``spec`` and
#: ``status`` for Pods
_METADATA_FIELDS = ("ownerReferences",)
_POD_SPEC_FIELDS = ("containers", "tolerations")
_POD_STATUS_FIELDS = ("conditions",)
TABLE_LIMIT = 4096


class SharedSubtrees:
    """The canonical lists by content, for one store's shared revisions (cleared when full:
    lists handed out before a clear stay valid, later ones start a new generation)."""

    def __init__(self, limit: int = TABLE_LIMIT) -> None:
        self.limit = limit
        self._lists: dict[Any, list[Any]] = {}
        #: the same lists by identity: a list that is one of them needs no lookup by content
        #: (each entry holds its list, so its id cannot be reused while it is there)
        self._known: dict[int, list[Any]] = {}
        #: per field, the last key :meth:`built` was asked for and its list
        self._built: dict[str, tuple[Any, list[Any]]] = {}

    def __len__(self) -> int:
        return len(self._lists)

    def compact_and_share(self, obj: Obj) -> Obj:
        """:func:`~apiserver.storage.compact.compact`, then :meth:`share`, in place; returns ``obj``.

        A ``managedFields`` list that is one of the table's was compacted before it was kept (its
        strings interned, its trees canonical) and nobody modifies it since: it is not walked again.
        """
        md = obj.get("metadata")
        entries = md.get("managedFields") if type(md) is dict else None
        if entries is None or self._known.get(id(entries)) is not entries:
            compact(obj)
        return self.share(obj)

    def share(self, obj: Obj) -> Obj:
        """Replace ``obj``'s shareable lists with the canonical equal ones, in place; returns ``obj``.

        Only for an object nobody will modify (a stored revision handed out read-only), after
        :func:`~apiserver.storage.compact.compact` made its ``fieldsV1`` trees canonical.
        """
        md = obj.get("metadata")
        if type(md) is dict:
            self._managed_fields(md)
            for f in _METADATA_FIELDS:
                self._by_json(md, f)
        if obj.get("kind") == "Pod":
            spec = obj.get("spec")
            if type(spec) is dict:
                for f in _POD_SPEC_FIELDS:
                    self._by_json(spec, f)
            status = obj.get("status")
            if type(status) is dict:
                for f in _POD_STATUS_FIELDS:
                    self._by_json(status, f)
        return obj

    def adopt(self, entries: list[Any], unique: bool = False) -> list[Any]:
        """The canonical list equal to ``entries``, a ``managedFields`` list its writer made
        compact (each entry's tree a canonical one, its strings interned): a known equal list, or
        ``entries`` itself, now known. For a writer that hands the list to every write that can
        share it (the create templates': :class:`apiserver.patch.ownedentry.EntryLists`): a
        revision holding it is then neither compacted nor keyed again when it is first handed
        out. Must never be modified, like every list of a stored revision.

        ``unique``: no other list can equal it (its tree is a created object's own join, naming
        its owners: ``compact.canonical_as_built``), so it is known by identity alone, without
        the content key that no other list would ever match (a tuple kept per object)."""
        if unique:
            self._know(entries)
            return entries
        key = _entries_key(entries)
        return entries if key is None else self._canonical(key, entries)

    def built(self, field: str, key: Any, build: Callable[[Any], list[Any]]) -> list[Any]:
        """The canonical list equal to ``build(key)``, for a writer whose list depends on ``key`` alone.

        ``pods/binding`` gives every pod it binds in one second the same ``status.conditions``
        (its PodScheduled condition only): the list is built and looked up once per ``key`` (the
        most recent one is remembered per ``field``) and the writer's revision holds the table's
        own list, which its first reader then knows by identity (:meth:`share` skips it) instead
        of serializing a private copy to find it. The list must be one nobody modifies, like every
        list of a stored revision.
        """
        last = self._built.get(field)
        if last is not None and last[0] == key:
            value = last[1]
            if self._known.get(id(value)) is value:
                return value
        value = build(key)
        text = orjson.dumps(value)
        got = self._lists.get(("json", field, text))
        if got is None:
            self._keep(("json", field, bytes(memoryview(text))), value)
            got = value
        self._built[field] = (key, got)
        return got

    def _canonical(self, key: Any, value: list[Any]) -> list[Any]:
        """The known list under ``key``, else ``value``, now known."""
        got = self._lists.get(key)
        if got is not None:
            return got
        self._keep(key, value)
        return value

    def _keep(self, key: Any, value: list[Any]) -> None:
        self._know(value)
        self._lists[key] = value

    def _know(self, value: list[Any]) -> None:
        """``value`` known by identity (the tables bounded by this one: it holds every list)."""
        if len(self._known) >= self.limit:
            self._lists.clear()
            self._known.clear()
        self._known[id(value)] = value

    def _by_json(self, parent: dict[str, Any], field: str) -> None:
        """Share ``parent[field]``, a non-empty list, by its exact JSON text (key order included)."""
        value = parent.get(field)
        if type(value) is not list or not value or self._known.get(id(value)) is value:
            return  # not shareable, or already a canonical list (taken from a shared revision)
        try:
            text = orjson.dumps(value)
        except TypeError:  # not plain JSON (cannot come from stored bytes): leave it alone
            return
        got = self._lists.get(("json", field, text))
        if got is None:
            # orjson's bytes are its whole write buffer (at least 4 KB): a key kept is an exact copy
            self._keep(("json", field, bytes(memoryview(text))), value)
        elif got is not value:
            parent[field] = got

    def _managed_fields(self, md: dict[str, Any]) -> None:
        """Share ``managedFields`` by its entries' items, a tree value (``fieldsV1``) by identity.

        Cheaper than its JSON (about 1 KB): the ``fieldsV1`` trees are already the canonical
        ones, so equal trees are one object. Sound because a table entry holds its list, whose
        entries hold those very trees: no id in a key can be reused while the key is there.

        The key is one flat tuple: per entry its number of items, then each item's key and value,
        a tree as its ``id`` (an ``int``, which no string value equals), so that equal keys read
        back as the same entries. Most lists are one object's own (its owners' uids are in its
        tree): the table keeps their keys until it is full, and a tuple per item and per entry
        made some sixteen more objects per gang set for the cyclic collector to traverse.
        """
        entries = md.get("managedFields")
        if type(entries) is not list or not entries or self._known.get(id(entries)) is entries:
            return
        key = _entries_key(entries)
        if key is None:
            return
        got = self._canonical(key, entries)
        if got is not entries:
            md["managedFields"] = got


def _entries_key(entries: list[Any]) -> tuple[Any, ...] | None:
    """The table's key of a non-empty ``managedFields`` list (see :meth:`SharedSubtrees._managed_fields`),
    or None where it is not shared (an entry not a map, a value neither a string nor a tree)."""
    key: list[Any] = ["managedFields"]
    for entry in entries:
        if type(entry) is not dict:
            return None
        key.append(len(entry))
        for k, v in entry.items():
            t = type(v)
            if t is str:
                key += (k, v)
            elif t is dict:
                key += (k, id(v))
            else:
                return None  # anything else is not shared
    return tuple(key)


__all__ = ["TABLE_LIMIT", "SharedSubtrees"]
