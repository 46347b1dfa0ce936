"""Defaults from a structural schema (kube's ``structural/defaulting``).

A property with a ``default`` that is missing (or ``null`` without ``nullable``) gets a copy of
the default; defaulting then descends into the result, so nested defaults apply inside a defaulted
object. ``additionalProperties`` and ``items`` are defaulted per value. kube applies defaults when
a request is decoded and when an object is read from storage; here, on every write (the stored
object then carries them, which is what a read would show).
"""

from __future__ import annotations

import copy
from typing import Any

Node = dict[str, Any]


def apply_defaults(node: Node, value: Any) -> None:
    """Default ``value`` in place by ``node``."""
    if isinstance(value, dict):
        props: dict[str, Node] = node.get("properties") or {}
        for key, sub in props.items():
            if "default" in sub and (key not in value or (value[key] is None and not sub.get("nullable"))):
                value[key] = copy.deepcopy(sub["default"])
        extra = node.get("additionalProperties")
        for key, child in value.items():
            sub = props.get(key)
            if sub is None and isinstance(extra, dict):
                sub = extra
            if sub is not None:
                apply_defaults(sub, child)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            for item in value:
                apply_defaults(items, item)
