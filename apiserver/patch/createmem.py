"""The field set a create records, remembered by the object's *shape*.

A create's ``managedFields`` entry (an Update-operation manager writing a new object) owns
every field of the object outside the reset fields: the one-sided walk of the whole object
that :func:`apiserver.patch.apply.updated_managed_fields` makes. Its result does not depend on
the value of any plain scalar (string, number, boolean, null) held in a map: such an entry is
one leaf path named by its key, whatever the value. It does depend on everything in lists,
whose items are named by their values (``k:{"name":"c"}``, ``v:"a-finalizer"``).

So the objects a cluster creates by the thousand (pods of one template, each with its own
name, uid, hostname and label values; Events, which differ only in scalars) share a few
shapes, and the walk, the set algebra after it and the encoding of the set (memoized on the
set instance) are done once per shape. The shape blanks the plain scalars of every map not
inside a list (``spec.hostname``, ``metadata.labels`` values, ``involvedObject.uid``, a
template's labels) and keeps every list verbatim. Its ``orjson`` text is the key (a quarter of the
cost of ``marshal``), under the same rules as :func:`apiserver.patch.apply._same_json`: the text
is type-exact (``true``/``1``/``1.0`` differ; ``EXACT_JSON`` refuses subclasses of builtins)
except that NaN and infinities are written as ``null``, so a shape whose text holds a ``null``
(the blanked scalars are written as ``0``, so any ``null`` comes from a list) is not remembered, nor is one orjson refuses.
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.patch.fieldpath import EXACT_JSON, FieldSet

#: Exact types blanked in the shape: the JSON scalars (a value of any other type keeps the
#: object out of the memo, see :func:`shape_key`).
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: Bounds: remembered shapes, and the size of one shape's text.
_ENTRIES = 1024
_MAX_BYTES = 16 * 1024  # with _ENTRIES: at most 16 MB of keys, typically ~1 MB


def _blank(m: dict[str, Any]) -> dict[str, Any]:
    """``m`` with the plain-scalar values of it and of its maps (not of lists) replaced by ``0``."""
    out: dict[str, Any] = {}
    for k, v in m.items():
        t = type(v)
        if t in _SCALARS:
            out[k] = 0
        elif t is dict:
            out[k] = _blank(v)
        else:
            out[k] = v
    return out


def shape_key(obj: dict[str, Any]) -> bytes | None:
    """The memo key of ``obj``'s create field set, or ``None`` (not rememberable: too large, or
    holding a ``null``, NaN or a value orjson refuses, such as a subclass of ``str``)."""
    return key_of_blanked(blanked(obj))


def blanked(obj: dict[str, Any]) -> dict[str, Any] | None:
    """``obj``'s shape as a value (:func:`shape_key` is its text; ``None``: nested deeper than
    Python recurses): blanking works key by key, so the shape of ``obj`` without some entries
    is this value without them."""
    try:
        return _blank(obj)
    except RecursionError:
        return None


def key_of_blanked(shape: dict[str, Any] | None) -> bytes | None:
    """:func:`shape_key` of the object whose :func:`blanked` value is ``shape``."""
    if shape is None:
        return None
    try:
        text = orjson.dumps(shape, option=EXACT_JSON)
    except (TypeError, RecursionError):  # orjson refuses it (or nests deeper than it writes)
        return None
    return text if len(text) <= _MAX_BYTES and b"null" not in text else None


class CreateFieldsMemo:
    """Bounded table ``(shape, schema node, reset fields) -> field set``; cleared when full.

    The schema node and the reset field set are held by the entry, so their ``id`` cannot be
    reused by another object while the entry lives.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, int, int], tuple[Any, FieldSet, FieldSet]] = {}

    def get(self, shape: bytes, node: Any, reset: FieldSet) -> FieldSet | None:
        hit = self._table.get((shape, id(node), id(reset)))
        if hit is not None and hit[0] is node and hit[1] is reset:
            return hit[2]
        return None

    def put(self, shape: bytes, node: Any, reset: FieldSet, fields: FieldSet) -> None:
        if len(self._table) >= _ENTRIES:
            self._table.clear()
        # an exact copy of the key: orjson's result holds its whole write buffer (4 KB at least)
        self._table[(bytes(memoryview(shape)), id(node), id(reset))] = (node, reset, fields)

    def clear(self) -> None:
        self._table.clear()


__all__ = ["CreateFieldsMemo", "blanked", "key_of_blanked", "shape_key"]
