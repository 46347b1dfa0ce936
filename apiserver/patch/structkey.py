"""A created object's *structure key*: the memo key of its create entry, made in one pass.

:mod:`.createmem`'s shape (the object with the plain scalars of its maps blanked, lists kept
verbatim) decides a create's field set; until session 18 the entry templates
(:mod:`.createentry`, :mod:`.ownedentry`) keyed on the shape's ``orjson`` text, which costs a
blanked copy of every map of the object and then its text (~60 % of a templated create's
entry: an Event's key cost more than the rest of its entry).

The structure key is a tuple per map: its keys in order, then one marker per value in the
same order (so the key's two halves line up): a map's own structure key, a list's
``EXACT_JSON`` text (verbatim, as in the shape), ``0`` for a JSON scalar of exact type (blanked
alike, as the shape blanks them), or else the value's exact ``type``. It is made by one loop per
map and no copy (about 40 % less than the shape's copy and text), and it tells apart what the
shape's text tells apart.

What the shape's text refused, the key must not stand for: a learning create checks
:func:`rememberable` (its shape text exists: no ``null``/NaN in a list, no subclass of a JSON
type, string keys, not too large or deep; and no marker is a type, so a tuple or any other
value, whose contents the key does not see, is never learnt). A later object with an equal key
has equal keys at every level, an exact JSON scalar where the learnt object has one, maps where
it has maps, and lists with the same text (so none holds a NaN or a subclass, which that text
would refuse or write as ``null``): its shape is the learnt object's, and so is its entry.
(Keys compare by value, so a map key of a ``str`` subclass equal to a learnt key hits where the
shape's text refused it; JSON decoding never makes one, and a field is named by its key's value:
``"f:" + key`` is the same text either way.)
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.patch.createmem import shape_key
from apiserver.patch.fieldpath import EXACT_JSON

#: A structure key: a map's keys, then one marker per value.
Key = tuple[Any, ...]

_dumps = orjson.dumps
#: JSON's scalars (exact types), all marked alike.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_SCALAR = 0
#: Marks a key whose templated lists were replaced (:func:`listed_key`): no map key equals it.
_LISTED = object()
_REFS = "ownerReferences"


def _structure(m: dict[str, Any]) -> Key:
    out: list[Any] = [*m]
    for v in m.values():
        t = type(v)
        if t in _SCALARS:
            out.append(_SCALAR)
        elif t is dict:
            out.append(_structure(v))
        elif t is list:
            out.append(_dumps(v, option=EXACT_JSON))
        else:
            out.append(t)
    return tuple(out)


def structure_key(obj: dict[str, Any]) -> Key | None:
    """``obj``'s structure key, or ``None`` (a list orjson refuses, or nested too deep)."""
    try:
        return _structure(obj)
    except (TypeError, RecursionError):
        return None


def _metadata(md: dict[str, Any], refs: Key) -> Key:
    out: list[Any] = [*md]
    for k, v in md.items():
        t = type(v)
        if t in _SCALARS:
            out.append(_SCALAR)
        elif k == _REFS:
            out.append(refs)
        elif t is dict:
            out.append(_structure(v))
        elif t is list:
            out.append(_dumps(v, option=EXACT_JSON))
        else:
            out.append(t)
    return tuple(out)


def owned_key(obj: dict[str, Any], refs: list[tuple[str, dict[str, Any]]]) -> Key | None:
    """The structure key of ``obj`` (whose ``metadata`` is a map holding ``ownerReferences``,
    a list) with the references replaced by the structure keys of ``refs``' references
    (``(uid, reference)``) in the order given (uid order: the owners' uids, as every other
    scalar of a reference, are blanked)."""
    try:
        # in the form of a map's key (a blank name per reference) as every marker is
        marks = (*[""] * len(refs), *[_structure(ref) for _, ref in refs])
        out: list[Any] = [*obj]
        for k, v in obj.items():
            t = type(v)
            if t in _SCALARS:
                out.append(_SCALAR)
            elif t is dict:
                out.append(_metadata(v, marks) if k == "metadata" else _structure(v))
            elif t is list:
                out.append(_dumps(v, option=EXACT_JSON))
            else:
                out.append(t)
        return tuple(out)
    except (TypeError, RecursionError):
        return None


def listed_key(key: Key, obj: dict[str, Any], lists: list[tuple[str, str, str]]) -> Key | None:
    """``key`` (``obj``'s, a map ``spec`` among its fields) with the marker of each one-item
    list ``spec[field]`` of ``lists`` (``(field, key field, value)``) made from its item with
    the key field's value blanked; marked apart from every unlisted key (a blanked ``""`` is
    another object's verbatim value)."""
    fields = list(obj)
    at = len(fields) + fields.index("spec")
    spec = obj["spec"]
    spec_fields = list(spec)
    spec_key = list(key[at])
    for k, field, _ in lists:
        item = dict(spec[k][0])
        item[field] = ""
        try:
            spec_key[len(spec_fields) + spec_fields.index(k)] = _dumps([item], option=EXACT_JSON)
        except TypeError:
            return None
    top = list(key)
    top[at] = tuple(spec_key)
    return (_LISTED, tuple(top))


def _plain(key: Key) -> bool:
    for mark in key[len(key) // 2 :]:
        t = type(mark)
        if t is tuple:
            if not _plain(mark):
                return False
        elif t is not bytes and t is not int:  # a type: a value the key does not look into
            return False
    return True


def rememberable(obj: dict[str, Any], key: Key) -> bool:
    """Whether an entry learnt from ``obj`` (whose unlisted structure key is ``key``,
    references included) may answer later objects of that key (see the module docstring)."""
    return shape_key(obj) is not None and _plain(key)


def kept(key: Key) -> Key:
    """``key`` to be held by a table: its texts copied exactly (``orjson``'s result holds its
    whole write buffer, 4 KB at least)."""
    return tuple(
        [
            bytes(memoryview(mark)) if type(mark) is bytes else kept(mark) if type(mark) is tuple else mark
            for mark in key
        ]
    )


__all__ = ["Key", "kept", "listed_key", "owned_key", "rememberable", "structure_key"]
