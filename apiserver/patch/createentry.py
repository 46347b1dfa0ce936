"""A stored create's ``managedFields`` entry, made from a template per object shape.

The entry a create records (one ``Update`` entry of the request's manager owning every field
outside the reset fields) depends on the created object only through its *shape*
(:mod:`apiserver.patch.createmem`: the object with the plain scalars of its maps blanked, lists
kept verbatim): its ``fieldsV1`` tree is a function of the shape and the kind's schema, and
the rest of the entry is the manager, the request's API version and its time.

:mod:`.createmem` already remembers the *field set* per shape; the general path still walks
the way to it on every create (decoding the request's absent entries, the owner-reference
split, the set's encoding and its shared tree). Events are the objects a cluster creates most
(four or five per pod) and none has owner references or sent managed fields: for such a
create the entry is assembled here from the tree remembered for its shape, and only the first
create of a shape (or an object this cannot answer) takes the general path, whose answer is
remembered. The entries are equal, key for key and in order (``test_create_entry_template.py``
compares the two on random objects). Objects with owner references (the pods, Workloads,
PodGroups and ControllerRevisions controllers create) are answered the same way by
:mod:`.ownedentry`, whose shapes leave out the owners' uids.

Only stored creates use it: their ``fieldsV1`` is the shared canonical tree of the field set,
never modified once stored, so one tree serves every object of the shape (as the canonical
tree already does). A dry run or a view kind's create gets fresh trees on the general path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.api.types import Obj
from apiserver.patch.ownedentry import EntryLists, OwnedEntryTemplates, created_entry
from apiserver.patch.structkey import Key, kept, rememberable, structure_key
from apiserver.storage.compact import canonical_fields

#: Remembered shapes per tracker (cleared when full, as :class:`.createmem.CreateFieldsMemo`).
_ENTRIES = 1024

#: A remembered shape whose create records no entry (its manager owns nothing).
_NOTHING: Obj = {}


class CreatedEntryTemplates:
    """``(shape, schema node) -> fieldsV1 tree`` of stored creates, filled by the general path.

    A create's reset fields are always the main resource's (``status``), so the shape and the
    schema node decide the tree. The schema node is held by its entry, so its ``id`` cannot be
    reused while the entry lives.
    """

    __slots__ = ("_table", "_owned", "lists")

    def __init__(self) -> None:
        self._table: dict[tuple[Key, int], tuple[Any, Obj]] = {}
        #: one entry list per tree, manager, version and second (the Events of one kind, a set's
        #: pods): one table for both kinds of template
        self.lists = EntryLists()
        #: creates with owner references (see :mod:`.ownedentry`)
        self._owned = OwnedEntryTemplates(self.lists)

    def entries(
        self,
        obj: Obj,
        node: Any,
        manager: str,
        api_version: str,
        now: str,
        general: Callable[[], list[Obj] | None],
    ) -> list[Obj] | None:
        """The ``managedFields`` a stored create of ``obj`` records, as ``general()`` (the
        general path, called where the shape is not known yet) answers them."""
        md = obj.get("metadata")
        if type(md) is not dict or "managedFields" in md:
            # the request's own entries are decoded and merged by the general path
            return general()
        if "ownerReferences" in md:
            # owner references name their owner's uid (lists are verbatim in the shape), so
            # such a shape never recurs: its references are templated apart
            return self._owned.entries(obj, node, manager, api_version, now, general)
        shape = structure_key(obj)
        if shape is None:
            return general()
        hit = self._table.get((shape, id(node)))
        if hit is not None and hit[0] is node:
            tree = hit[1]
            return [] if tree is _NOTHING else self.lists.get(manager, api_version, now, tree)
        out = general()
        if out is None or len(out) > 1:
            return out
        tree = out[0].get("fieldsV1") if out else _NOTHING
        # remembered only when the template rebuilds the general path's entry exactly
        if (
            type(tree) is dict
            and (
                not out
                or list(created_entry(manager, api_version, now, tree).items()) == list(out[0].items())
            )
            and rememberable(obj, shape)
        ):
            if len(self._table) >= _ENTRIES:
                self._table.clear()
            # kept as the canonical tree of its text (equal to it): the lists made from it are
            # compact as made, so the store's table takes them as they are (``EntryLists``)
            self._table[(kept(shape), id(node))] = (node, canonical_fields(tree) if tree else tree)
        return out

    def clear(self) -> None:
        self._table.clear()
        self._owned.clear()
        self.lists.clear()


__all__ = ["CreatedEntryTemplates"]
