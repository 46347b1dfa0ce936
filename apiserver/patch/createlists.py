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

import re
from collections.abc import Callable
from typing import Any

import orjson

from apiserver.patch.fieldpath import EXACT_JSON, plain_string_key

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


#: A key value whose ``k:`` element text is the value between quotes: nothing in it is escaped
#: by the Go JSON encoding (``"``, ``\\``, ``<``, ``>``, ``&``, control and non-ASCII
#: characters), so a template's key can be written for it directly. Object names are such.
_PLAIN_KEY = re.compile(r"[0-9A-Za-z._-]{1,256}")
#: the key value the template of an item is walked with
_PLACEHOLDER = "key"
#: Bounds: remembered templates, and the size of one template's text.
_ENTRIES = 512
_MAX_BYTES = 4 * 1024


class ListTemplates:
    """The ``fieldsV1`` subtree of a one-item list-map under ``spec``, from its item's template.

    A Workload's ``podGroupTemplates`` is ``[{"name": <set>, "schedulingPolicy": ...}]``: one
    item keyed by one string field. Its subtree is ``{".": {}, 'k:{"<key>":"<value>"}': item}``
    where ``item`` (the item's own fields) follows from the item with its key value left out:
    the key field is a leaf named by its field name, whatever its value, and the value only
    names the item. So an item whose key value is plain (:data:`_PLAIN_KEY`) is answered from
    the template of its text with the key value replaced: walked once, with a placeholder, by
    the same ``build``, and used only where that walk gave exactly this form.

    Table ``(template text, list schema node) -> [node, item subtree or None, its JSON]``,
    bounded and cleared when full; the node is held, so its ``id`` is not reused while the entry
    lives. A stored write gets the item subtree itself (stored objects are never modified), a
    dry run a fresh decoding of its JSON.
    """

    __slots__ = ("_table",)

    def __init__(self) -> None:
        self._table: dict[tuple[bytes, int], list[Any]] = {}

    def tree(
        self,
        items: list[Any],
        node: Any,
        keys: tuple[str, ...],
        build: Callable[[list[Any]], Obj],
        shared: bool,
    ) -> Obj:
        """The subtree of the list ``items`` under ``node`` (list-map keys ``keys``): from the
        template, or ``build(items)``."""
        got = self._template(items, node, keys, build) if len(items) == 1 and len(keys) == 1 else None
        if got is None:
            return build(items)
        key = keys[0]
        item_tree = got[1] if shared else orjson.loads(got[2])
        return {".": {}, plain_string_key(key, items[0][key]): item_tree}

    def _template(
        self, items: list[Any], node: Any, keys: tuple[str, ...], build: Callable[[list[Any]], Obj]
    ) -> list[Any] | None:
        item = items[0]
        key = keys[0]
        if type(item) is not dict or _PLAIN_KEY.fullmatch(key) is None:
            return None
        value = item.get(key)
        if type(value) is not str or _PLAIN_KEY.fullmatch(value) is None:
            return None
        blank = dict(item)
        blank[key] = _PLACEHOLDER
        try:
            text = orjson.dumps(blank, option=EXACT_JSON)
        except (TypeError, RecursionError):  # orjson refuses it: not rememberable
            return None
        if len(text) > _MAX_BYTES or b"null" in text:
            return None
        memo_key = (text, id(node))
        got = self._table.get(memo_key)
        if got is None or got[0] is not node:
            walked = build([blank])
            element = f'k:{{"{key}":"{_PLACEHOLDER}"}}'
            sub = walked.get(element)
            ok = list(walked) == [".", element] and walked["."] == {} and type(sub) is dict
            if len(self._table) >= _ENTRIES:
                self._table.clear()
            # exact copies: orjson's result holds its whole write buffer (4 KB at least)
            got = self._table[(bytes(memoryview(text)), id(node))] = [
                node,
                sub if ok else None,
                bytes(memoryview(orjson.dumps(sub))) if ok else None,
            ]
        return got if got[1] is not None else None

    def clear(self) -> None:
        self._table.clear()


__all__ = ["ListTemplates", "split_spec_lists"]
