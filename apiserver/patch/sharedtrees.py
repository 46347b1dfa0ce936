"""A stored write's ``fieldsV1`` trees, built from the parts their encoding was made of.

The registry stores each managedFields entry's ``fieldsV1`` as the shared canonical tree of
its text (:mod:`apiserver.storage.compact`). For a field set met for the first time, such as
the node agent's status entry of a pod (it names the pod's IPs), getting that tree used to
mean decoding the text just encoded, then serializing every subtree of the decoding again to
look it up among the canonical ones: about a fifth of the managedFields work of a pod status
write. But the encoder wrote the text from a tree whose subtrees two levels down are shared
per content (:func:`apiserver.patch.fieldpath._emit_by_subtrees`): only the part below
``f:status`` > ``f:podIPs`` is new, the conditions and container statuses are every pod's.
Here the canonical tree is built from those parts, each made canonical once per part (by
identity), so a new set costs the two top levels' dicts.

An entry a write leaves alone (the create entry of a pod under the node agent's status write,
of a PodGroup under the scheduler's condition patch) was decoded from the stored revision,
whose ``fieldsV1`` is, when the server wrote it, that set's very encoding: the stored tree
itself becomes the canonical tree of the text (stored objects are never modified), where the
text used to be decoded and every subtree of it serialized again.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.patch.fieldpath import FieldSet
from apiserver.storage.compact import canonical_fields, canonical_json, canonical_json_built

#: canonical trees of the encoder's shared subtrees, by identity: ``id -> (subtree, canonical)``.
#: Each entry holds its subtree, so the id cannot be reused while it is there; bounded (cleared
#: when full: a miss only costs one :func:`canonical_fields`).
_PARTS: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
_PARTS_LIMIT = 2048


def shared_fields_v1(fs: FieldSet) -> Obj:
    """The shared canonical ``fieldsV1`` tree of ``fs`` (a fresh one if it cannot be encoded).

    Equal, key for key and in order, to ``orjson.loads(fs.fields_v1_json())``, as
    :func:`canonical_json` of that text is.
    """
    encoded, emitted = fs.fields_v1_encoding()
    if encoded is None:
        return fs.to_fields_v1()
    if emitted is None:
        stored = fs.stored_tree()
        if stored is not None:
            # an entry the write leaves alone (the create entry under a status write): the
            # stored revision's own tree of this text, instead of decoding the text again
            return canonical_json_built(encoded, lambda: stored)
        return canonical_json(encoded)
    return canonical_json_built(encoded, lambda: _canonical_levels(emitted))


def _canonical_levels(emitted: dict[str, Any]) -> dict[str, Any]:
    """``emitted`` with fresh top two levels over canonical parts (its dicts below are the
    encoder's shared subtrees; the top two levels are its own)."""
    empty = canonical_json(b"{}")
    out: dict[str, Any] = {}
    for k, level in emitted.items():
        if not level:
            out[k] = empty
            continue
        sub: dict[str, Any] = {}
        for k2, part in level.items():
            sub[k2] = _canonical_part(part) if part else empty
        out[k] = sub
    return out


def _canonical_part(part: dict[str, Any]) -> dict[str, Any]:
    hit = _PARTS.get(id(part))
    if hit is not None and hit[0] is part:
        return hit[1]
    canon = canonical_fields(part)
    if len(_PARTS) >= _PARTS_LIMIT:
        _PARTS.clear()
    _PARTS[id(part)] = (part, canon)
    return canon


__all__ = ["shared_fields_v1"]
