"""The registry's hook for ``metadata.managedFields`` on non-apply writes.

Create, update and JSON/merge/strategic patches record what they changed as owned by the
request's field manager (``operation: Update``); server-side apply records its own ownership
in :func:`apiserver.patch.apply.server_side_apply`, so its writes pass through untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import FieldsEncoder, record_update, updated_managed_fields
from apiserver.patch.createentry import CreatedEntryTemplates
from apiserver.patch.sharedtrees import shared_fields_v1
from apiserver.patch.statusentry import StatusWriteTemplates
from apiserver.patch.updateentry import UpdatedEntryTemplates
from apiserver.rest.resources import ResourceDef


class FieldTracker:
    """Sets ``metadata.managedFields`` on the object a write is about to store.

    It asks :func:`updated_managed_fields` for the entries only, instead of having
    :func:`record_update` deep-copy the whole object to then keep just its managed fields;
    objects without a ``metadata`` object take the general path.

    A write that is stored gets each entry's ``fieldsV1`` as the shared, canonical tree of its
    field set (:func:`shared_fields_v1`, from the set's memoized encoding) instead of a fresh
    decoding: the stored object is never modified (clients get copies, informers share it
    read-only and would swap in that very tree anyway, see :func:`compact`). A dry run's
    object is the response itself, which its client may modify, so it gets fresh trees.
    """

    def __init__(self) -> None:
        #: stored creates' entries by the created object's shape (Events, above all)
        self._created = CreatedEntryTemplates()
        #: updates' new encodings by the shape of their set (the node agent's pod status entry)
        self._updated = UpdatedEntryTemplates()
        #: stored status writes' entries by their transition (the node agent's pod status write)
        self._status = StatusWriteTemplates()

    def share_created_lists(self, adopt: Callable[[list[Obj], bool], list[Obj]] | None) -> None:
        """Have ``adopt`` (the store's ``SharedSubtrees.adopt``) share each ``managedFields`` list
        a create template makes compact (:class:`apiserver.patch.ownedentry.EntryLists`)."""
        self._created.lists.adopt = adopt

    def _node(self, rd: ResourceDef) -> Any:
        return schema.for_gvk(rd.group, rd.version, rd.kind)

    def on_create(self, rd: ResourceDef, obj: Obj, opts: Any, now: str) -> None:
        if not opts.field_manager:
            return
        node = self._node(rd)
        encoder = _encoder(rd, opts)

        def general() -> list[Obj] | None:
            return updated_managed_fields(
                None, obj, opts.field_manager, node, now, rd.api_version, fields_v1=encoder
            )

        if encoder is None:
            entries = general()
        else:  # a stored create: its entry's tree is shared, so one per shape serves them all
            entries = self._created.entries(obj, node, opts.field_manager, rd.api_version, now, general)
        if entries is None:
            out = record_update(
                None, obj, opts.field_manager, schema_node=node, now=now, api_version=rd.api_version
            )
            _take_managed_fields(obj, out)
            return
        _set_entries(obj["metadata"], entries)

    def on_update(
        self, rd: ResourceDef, old: Obj, obj: Obj, opts: Any, manager_op: str, subresource: str, now: str
    ) -> None:
        if manager_op == "Apply" or not opts.field_manager:
            return
        node = self._node(rd)
        fields_v1 = None if _encoder(rd, opts) is None else self._updated.fields_v1

        def general() -> list[Obj] | None:
            return updated_managed_fields(
                old,
                obj,
                opts.field_manager,
                node,
                now,
                rd.api_version,
                subresource=subresource,
                fields_v1=fields_v1,
                old_is_stored=True,  # the registry's ``old`` is the stored revision
            )

        if subresource == "status" and fields_v1 is not None:
            # a stored status write: the same transition as an earlier write is answered from
            # its template (one per transition, see :mod:`.statusentry`)
            entries = self._status.entries(old, obj, opts.field_manager, rd.api_version, node, now, general)
        else:
            entries = general()
        if entries is None:
            out = record_update(
                old,
                obj,
                opts.field_manager,
                schema_node=node,
                now=now,
                api_version=rd.api_version,
                subresource=subresource,
            )
            _take_managed_fields(obj, out)
            return
        _set_entries(obj["metadata"], entries)


def _encoder(rd: ResourceDef, opts: Any) -> FieldsEncoder | None:
    """Shared trees for a stored write of a stored kind; fresh ones for a dry run (whose object
    is the response) and for a view kind (presented through a conversion of its object)."""
    if getattr(opts, "dry_run", False) or rd.is_view:
        return None
    return shared_fields_v1


def _set_entries(md: Obj, entries: list[Obj]) -> None:
    if entries:
        md["managedFields"] = entries
    else:
        md.pop("managedFields", None)


def _take_managed_fields(obj: Obj, out: Obj) -> None:
    md = obj.setdefault("metadata", {})
    mf = (out.get("metadata") or {}).get("managedFields")
    if mf:
        md["managedFields"] = mf
    else:
        md.pop("managedFields", None)
