"""The private body of an in-process update whose caller hands its body over (``handoff=True``).

The in-process client copies every update body (a JSON round trip) because the write path
modifies what it is given and may keep parts of it in the stored object, and the caller's dict
must not change under it, nor the stored object under the caller. A node agent's pod status
body is mostly the pod it read from its informer: ``spec`` and the metadata values are the very
objects the store shares read-only as the current state (:meth:`Record.shared`), and copying
them costs as much as the rest of the body.

A section that *is* the live object's own section can be passed through uncopied where the
write path provably never modifies it and what it stores for it is the live object's anyway:

* on a ``/status`` write of a built-in kind whose strategy defaults nothing a status write
  keeps (``defaults_only_replaced_by_status``: Pods, StatefulSets, PodGroups; a custom
  resource's body is pruned in place by its schema, so it is always copied), every top-level
  section but ``status`` and ``metadata`` is replaced with the live object's by
  ``prepare_for_status_update`` before anything but the type check (which skips a section
  that is the live one) looks at it;
* ``metadata`` values of a ``/status`` write that are the live object's own are only read
  before the write replaces them: the ones the status strategy resets from the live object
  (``status_reset_metadata``: labels, annotations, finalizers, owner references) are replaced
  with the live values (or copies, for mutating admission) before admission or validation see
  them; ``managedFields`` (a status write ignores the request's, kube's field manager keeps the
  stored ones) and what a kind does not reset are read by the type check and the validations,
  and the registry gives them to mutating admission and a dry run's answer as private copies
  (``GenericStore._update_from``). The type check never rewrites a value of the live object:
  it fills ``null`` elements of typed lists and maps, and the stored object has none (it was
  filled when written).

Everything else (the top level and ``metadata`` themselves, ``status``, any section or value
that is not the live one's, and every section of other writes) is copied as the client copies a
whole body, so the stored object and every answer and error are the same as with the full copy.
The body itself is never modified (its top level and ``metadata`` are rebuilt), and the sections
passed through are the store's read-only shared objects, which nobody modifies.

A ``/status`` merge patch (JSON merge or strategic, :func:`private_patch_base`) is merged into
such a body too, made from the live object instead of the registry's decoding of the whole
stored text: a merge patch changes only what it names, so what it does not name reaches the
write path as the live object's own and is treated as above (session 19, issue #22: the
scheduler's PodGroup condition write no longer decodes the PodGroup, and its spec, metadata and
owner references are found unchanged by identity downstream).
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.rest.resources import ResourceDef

_MISSING: Any = object()
#: the integers orjson writes (others raise, as the client's round trip of the whole body did)
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _copy(v: Any) -> Any:
    """What the in-process client's JSON round trip makes of one value (same errors too).

    Scalars the round trip returns unchanged are passed as they are: exact ``bool``, ``None``,
    ``int`` in orjson's range, and ASCII ``str`` (a lone surrogate makes the round trip raise;
    a ``str`` subclass comes back as a plain ``str``)."""
    t = type(v)
    if t is str:
        if v.isascii():
            return v
    elif t is bool or v is None or (t is int and _INT_MIN <= v <= _INT_MAX):
        return v
    return orjson.loads(orjson.dumps(v))


def _plain_key(k: Any) -> bool:
    """A key the round trip writes as it is (an ASCII ``str``); any other goes the whole way."""
    return type(k) is str and k.isascii()


def _keeps_live_sections(rd: ResourceDef, subresource: str) -> bool:
    """A ``/status`` write of a kind whose every section but ``status`` and ``metadata`` the
    write path replaces with the live object's before anything modifies it (module docs)."""
    return (
        subresource == "status"
        and not rd.is_view
        and rd.strategy.subresource_strategy(subresource) is None
        and rd.strategy.defaults_only_replaced_by_status
        # a custom resource's body is pruned by its schema in place, live sections included
        and (rd.schema is None or rd.converter is None)
    )


def private_update_body(rd: ResourceDef, body: Obj, live: Obj | None, subresource: str) -> Obj:
    """``body`` as the write path may use it: private copies of all but the live sections it
    never modifies (see the module docs). ``live``: the record's shared dict, or None (copy all).
    """
    if live is None or type(body) is not dict or not _keeps_live_sections(rd, subresource):
        return _copy(body)
    live_md = live.get("metadata")
    out: Obj = {}
    for k, v in body.items():
        if not _plain_key(k):
            return _copy(body)  # what the round trip refuses or rewrites, it does so the same way
        if k == "metadata" and type(v) is dict and type(live_md) is dict:
            md: Obj = {}
            for mk, mv in v.items():
                if not _plain_key(mk):
                    return _copy(body)
                md[mk] = mv if mv is live_md.get(mk, _MISSING) else _copy(mv)
            out[k] = md
        elif k not in ("status", "metadata") and v is live.get(k, _MISSING) and type(v) in (dict, list):
            out[k] = v
        else:
            out[k] = _copy(v)
    return out


def _names_plainly(patch: Obj) -> bool:
    """Every key of ``patch`` is a plain field name: no strategic-merge directive (``$patch``,
    ``$retainKeys``, ``$setElementOrder/…``, ``$deleteFromPrimitiveList/…``), which can change
    fields other than the one it names."""
    return all(_plain_key(k) and not k.startswith("$") for k in patch)


def private_patch_base(rd: ResourceDef, live: Obj, patch: Any, subresource: str) -> Obj | None:
    """The object a JSON merge or strategic merge patch of ``/status`` is merged into: what the
    registry's private decoding of the stored object (``Record.copy``) would be for the write
    path, sharing the live sections it never modifies. None: not such a write (decode a copy).

    A merge patch changes only the fields it names, so the sections it does not name reach
    the status write's reset as they were, and the write path replaces them with the live
    object's (see the module docs): those are the live ones here already, as
    :func:`private_update_body` passes them through for an update. The top level and
    ``metadata`` are new dicts; ``status``, every section the patch names and every
    ``metadata`` value it names are private copies; the other ``metadata`` values are the live
    ones (module docs). A patch holding a directive at either level, or replacing ``metadata``
    with a non-object, takes the general path. The live object is never modified. ``live``: the
    stored revision the write replaces (the registry's ``old``).
    """
    if type(live) is not dict or type(patch) is not dict or not _names_plainly(patch):
        return None
    if not _keeps_live_sections(rd, subresource):
        return None
    named_md = patch.get("metadata", _MISSING)
    if named_md is _MISSING:
        named_md = {}
    elif type(named_md) is not dict or not _names_plainly(named_md):
        return None  # ``metadata`` replaced or directed: the general path says what becomes of it
    out: Obj = {}
    for k, v in live.items():
        if k == "metadata" and type(v) is dict:
            # the values it does not name are the live ones (see the module docs)
            out[k] = (
                {mk: _copy(mv) if mk in named_md else mv for mk, mv in v.items()} if named_md else dict(v)
            )
        elif k == "status" or k in patch or k == "metadata":
            out[k] = _copy(v)
        else:
            out[k] = v
    return out


__all__ = ["private_patch_base", "private_update_body"]
