"""The stored revisions whose metadata this API server validated: an update that leaves the
metadata as it was skips validating it again.

Every update validates the object's metadata twice over (``ValidateObjectMeta`` and
``ValidateObjectMetaUpdate``): names, namespace, labels, annotations, owner references,
finalizers, managed fields, the identity fields against the old object. For a status write
(the node agent's pod status, the scheduler's PodGroup condition, a controller's set status, the
held-pod reports of KEP-5501) the metadata is the stored object's: the status strategy resets
labels, annotations, finalizers and owner references from the live object, the registry carries
uid, timestamps and generation over, and name and namespace come from the URL. That is 7-18 µs
of a 100-250 µs write spent on values this server found valid when it stored them.

Both validations are compositions of per-field checks, each a function of the field's value,
of the kind (name rule, namespaced or not, finalizer rule) and, for the update checks, of the
old object's same field. So for a revision whose metadata *this registry* validated for the
same kind without an error, and stored, a new metadata equal to it in every field (exactly:
value and type) except ``resourceVersion`` and ``managedFields`` yields no error either:

* the create/update checks of every field but ``managedFields`` are those that passed;
* the update checks compare fields that are equal (immutable ones unchanged, generation not
  decremented, no finalizer added), and need a ``resourceVersion``, checked here;
* ``managedFields`` (the request's or a patch's copy of the stored ones; the tracker replaces
  them after validation, so the stored ones were never validated as such) are validated here
  with the very check; where they have an error, the full validations run and word it.

Nothing else is skipped: the strategy's own validation, admission and the field tracker run as
before. A revision is known by its object and resourceVersion, which name one stored text for
good: the old object the update reads is that revision's dict, the very one validated (its
writer's, kept) or a decoding of its bytes, which hold the validated values as JSON (metadata
values are JSON strings, integers, booleans, lists and maps of them, the body type check saw to
that, and read back equal). Only revisions stored by this server's own validated writes are
noted; a revision it did not validate validates in full: one read from durable storage (SQLite,
etcd) after a restart, possibly written by another version or another server, one written
around the registry (subresource handlers that own their validation; ``pods/binding`` carries
the knowledge over explicitly, as it changes no metadata), any revision once the table was
cleared. The table holds one small entry per object (no object, no metadata dict).

The memo belongs to one :class:`apiserver.registry.generic.GenericStore` and is only correct
with the metadata validators :func:`apiserver.server.instance.build_api` gives it.
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.field import new_path
from apiserver.validation.meta import validate_managed_fields

#: remembered objects per kind (cleared when full: a miss costs one full validation, and the
#: object's next write is remembered again)
_LIMIT = 65536
#: metadata fields an update may change without its metadata being validated again here
_EXEMPT = frozenset(("resourceVersion", "managedFields"))
_MANAGED_FIELDS = new_path("metadata").child("managedFields")
#: scalars compared by type and ``==`` (a container is compared as JSON text)
_SCALARS = (str, int, bool)


#: a stored object as its kind's store keys it: (namespace or "", name)
ObjectKey = tuple[str, str]


class ValidatedMetadata:
    """Per kind, ``object -> resourceVersion`` of the revisions this server validated and stored.

    One entry per object (its store's own key and revision: nothing else is held), replaced by
    the object's next write; a deleted object's stays until its kind's table is cleared (it
    names no later revision: a new object gets a new resourceVersion).
    """

    __slots__ = ("_kinds",)

    def __init__(self) -> None:
        #: ``id(kind) -> (kind, {object: resourceVersion})`` (the entry holds the kind)
        self._kinds: dict[int, tuple[Any, dict[ObjectKey, int]]] = {}

    def _revisions(self, rd: Any) -> dict[ObjectKey, int]:
        hit = self._kinds.get(id(rd))
        if hit is None or hit[0] is not rd:
            hit = self._kinds[id(rd)] = (rd, {})
        return hit[1]

    def note(self, rd: Any, key: ObjectKey, rv: int) -> None:
        """Revision ``rv`` of object ``key`` of kind ``rd`` was stored with metadata that passed
        both metadata validations."""
        table = self._revisions(rd)
        if len(table) >= _LIMIT and key not in table:
            table.clear()
        table[key] = rv

    def carried(self, rd: Any, key: ObjectKey, old_rv: int, rv: int) -> None:
        """Revision ``rv`` was stored over ``old_rv`` with the same metadata but for its
        exempt fields, without a validation (``pods/binding``): as valid as ``old_rv``'s."""
        table = self._revisions(rd)
        if table.get(key) == old_rv:
            table[key] = rv

    def known(self, rd: Any, key: ObjectKey, rv: int) -> bool:
        hit = self._kinds.get(id(rd))
        return hit is not None and hit[0] is rd and hit[1].get(key) == rv

    def unchanged(self, md: Obj, old_md: Any, rd: Any, key: ObjectKey, old_rv: int) -> bool:
        """Whether validating ``md`` (an update's metadata over ``old_md``, revision ``old_rv``
        of object ``key`` of kind ``rd``) can only find nothing: see the module docs. False
        answers nothing (the full validations run)."""
        if type(old_md) is not dict or not self.known(rd, key, old_rv):
            return False
        rv = md.get("resourceVersion")
        if type(rv) is not str or not rv:
            return False
        for k, v in md.items():
            if k in _EXEMPT:
                continue
            if k not in old_md or not _same(v, old_md[k]):
                return False
        for k in old_md:
            if k not in md and k not in _EXEMPT:
                return False
        managed = md.get("managedFields")
        return not managed or not validate_managed_fields(managed, _MANAGED_FIELDS)

    def clear(self) -> None:
        self._kinds.clear()

    def __len__(self) -> int:
        return sum(len(t) for _, t in self._kinds.values())


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same JSON value, types included (``1`` is not ``True``/``1.0``)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t in _SCALARS:
        return a == b
    try:
        if a != b:
            return False
    except Exception:  # a value that refuses comparison: let the full validation look at it
        return False
    # equal: the same JSON unless a number stands where the other has a boolean or a float
    # (``1 == True == 1.0``); maps and lists of strings (labels, annotations, finalizers)
    # cannot hide one, anything else is compared as JSON text
    if t is dict:
        if all(type(x) is str for x in b.values()) and all(type(x) is str for x in a.values()):
            return True
    elif t is list and all(type(x) is str for x in b) and all(type(x) is str for x in a):
        return True
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except TypeError:  # not plain JSON: let the full validation look at it
        return False


__all__ = ["ObjectKey", "ValidatedMetadata"]
