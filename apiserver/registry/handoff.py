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
* ``metadata`` values of a ``/status`` write that the status strategy resets from the live
  object (``status_reset_metadata``: labels, annotations, finalizers, owner references) are
  replaced with copies of the live object's before admission or validation see them.

Everything else (the top level and ``metadata`` themselves, ``status``, any section that is not
the live one's, ``managedFields``, and every section of other writes) is copied as the client
copies a whole body, so the stored object and every answer and error are the same as with the
full copy. The body itself is never modified (its top level and ``metadata`` are rebuilt), and
the sections passed through are the store's read-only shared objects, which nobody modifies.
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


def private_update_body(rd: ResourceDef, body: Obj, live: Obj | None, subresource: str) -> Obj:
    """``body`` as the write path may use it: private copies of all but the live sections it
    never modifies (see the module docs). ``live``: the record's shared dict, or None (copy all).
    """
    if live is None or rd.is_view or type(body) is not dict:
        return _copy(body)
    status_write = (
        subresource == "status"
        and rd.strategy.subresource_strategy(subresource) is None
        and rd.strategy.defaults_only_replaced_by_status
        # a custom resource's body is pruned by its schema in place, live sections included
        and (rd.schema is None or rd.converter is None)
    )
    if not status_write:
        return _copy(body)
    reset = rd.strategy.status_reset_metadata
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
                md[mk] = mv if (mk in reset and mv is live_md.get(mk, _MISSING)) else _copy(mv)
            out[k] = md
        elif k not in ("status", "metadata") and v is live.get(k, _MISSING) and type(v) in (dict, list):
            out[k] = v
        else:
            out[k] = _copy(v)
    return out


__all__ = ["private_update_body"]
