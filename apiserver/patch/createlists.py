"""The lists of a created object's ``spec`` that keep its shape from recurring.

:mod:`.createmem` remembers a create's field set by the object's *shape*: every plain scalar of
a map blanked, every list kept verbatim (list items are named by their values). Objects whose
``spec`` holds a list naming the object itself never share a shape: a Workload's
``spec.podGroupTemplates`` is ``[{"name": <the StatefulSet's name>, ...}]``, so each set's
Workload create walked and encoded its whole field set again.

The field set of a create is a union over paths, and a list under ``spec`` contributes exactly
the paths of its own one-sided walk (the list's path and everything under it): nothing outside
the list depends on it, as long as ``spec`` itself still holds something (an empty ``spec``
compares differently from a non-empty one against the create's empty ``spec``). So the rest of
the object, with those lists left out, has a shape that does recur; the lists are walked and
encoded on their own and their subtrees placed under ``f:spec`` where the full encoding puts
them (see :func:`apiserver.patch.apply._created_entry`).

The caller splits only objects whose shape key exists (:func:`.createmem.shape_key`: no
``null``, NaN or value orjson refuses anywhere, lists included), and only where ``spec`` is
walked key by key (not an atomic map) with nothing under it skipped.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def split_spec_lists(obj: Obj) -> tuple[Obj, list[tuple[str, list[Any]]]] | None:
    """``obj`` without the non-empty lists directly under its ``spec``, and those lists in
    ``spec``'s key order; ``None`` when there is nothing to split off or ``spec`` would be left
    empty. ``obj`` is not modified (the top level and ``spec`` are copied)."""
    spec = obj.get("spec")
    if type(spec) is not dict:
        return None
    lists = [(k, v) for k, v in spec.items() if type(v) is list and v]
    if not lists or len(lists) == len(spec):
        return None
    rest = dict(obj)
    rest["spec"] = rest_spec = dict(spec)
    for k, _ in lists:
        del rest_spec[k]
    return rest, lists


__all__ = ["split_spec_lists"]
