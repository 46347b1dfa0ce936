"""The stored revisions whose metadata this API server validated, known by identity: an update
that leaves the metadata as it was skips validating it again.

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
before. A revision this process did not validate — decoded again from its bytes (the watch
cache released the dict), read from durable storage (SQLite, etcd) after a restart, possibly
written by another version — is not known by identity here, and validates in full. Stored
objects are never modified (the store's compaction only swaps equal values in), so a metadata
dict known here still holds what was validated; each entry holds its dict and kind, so its
``id`` cannot be reused while it is there.

The memo belongs to one :class:`apiserver.registry.generic.GenericStore` and is only correct
with the metadata validators :func:`apiserver.server.instance.build_api` gives it.
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.field import new_path
from apiserver.validation.meta import validate_managed_fields

#: remembered metadata dicts (cleared when full: a miss costs one full validation)
_LIMIT = 8192
#: metadata fields an update may change without its metadata being validated again here
_EXEMPT = frozenset(("resourceVersion", "managedFields"))
_MANAGED_FIELDS = new_path("metadata").child("managedFields")
#: scalars compared by type and ``==`` (a container is compared as JSON text)
_SCALARS = (str, int, bool)


class ValidatedMetadata:
    """``id(metadata) -> (metadata, kind)`` of stored revisions validated without an error."""

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[int, tuple[Obj, Any]] = {}

    def note(self, md: Any, rd: Any) -> None:
        """``md`` passed both metadata validations for kind ``rd`` and was stored."""
        if type(md) is not dict:
            return
        table = self._table
        if len(table) >= _LIMIT:
            table.clear()
        table[id(md)] = (md, rd)

    def carried(self, md: Any, old_md: Any, rd: Any) -> None:
        """``md`` was stored as ``old_md`` with at most its exempt fields changed, without a
        validation (``pods/binding``'s new revision): known valid where ``old_md`` was."""
        if self.known(old_md, rd):
            self.note(md, rd)

    def known(self, md: Any, rd: Any) -> bool:
        hit = self._table.get(id(md))
        return hit is not None and hit[0] is md and hit[1] is rd

    def unchanged(self, md: Obj, old_md: Any, rd: Any) -> bool:
        """Whether validating ``md`` (an update's metadata over ``old_md``, the stored one, of
        kind ``rd``) can only find nothing: see the module docs. False answers nothing (the
        full validations run)."""
        if not self.known(old_md, rd):
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
        self._table.clear()

    def __len__(self) -> int:
        return len(self._table)


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
        return orjson.dumps(a) == orjson.dumps(b)
    except TypeError:  # not plain JSON: let the full validation look at it
        return False


__all__ = ["ValidatedMetadata"]
