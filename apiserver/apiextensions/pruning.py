"""Pruning of unknown fields from custom resources (kube's ``structural/pruning``).

Every field a structural schema does not specify is dropped, on every write, whatever the
``fieldValidation`` directive (which only decides how the dropped fields are reported, as
``unknown field "spec.foo"``):

* an object with ``properties`` keeps only those (plus every key when
  ``additionalProperties`` is a schema, whose values are pruned in turn);
* ``x-kubernetes-preserve-unknown-fields: true`` keeps unknown keys (specified ones are still
  pruned inside);
* an object with neither (``type: object`` alone) keeps nothing;
* ``x-kubernetes-embedded-resource: true`` keeps ``apiVersion``, ``kind`` and ``metadata``;
* at the root, ``apiVersion``, ``kind`` and ``metadata`` are kept and ``metadata`` is pruned as
  an ``ObjectMeta``, like any built-in object's.

``null`` values of fields that are not ``nullable`` are dropped too (kube's
``PruneNonNullableNullsWithoutDefaults``), unless the field has a default.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.openapi import schema as openapi

Node = dict[str, Any]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(node: Node, value: Any, path: str, found: list[str], root: bool = False) -> None:
    """Remove (in place) what ``node`` does not specify; append the removed paths to ``found``."""
    if isinstance(value, dict):
        _prune_object(node, value, path, found, root)
    elif isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                prune(items, item, f"{path}[{i}]", found)


def _prune_object(node: Node, value: Obj, path: str, found: list[str], root: bool) -> None:
    props: dict[str, Node] = node.get("properties") or {}
    extra = node.get("additionalProperties")
    preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(node.get("x-kubernetes-embedded-resource"))
    for key in list(value):
        if (root or embedded) and key in ("apiVersion", "kind", "metadata"):
            if key == "metadata" and isinstance(value[key], dict):
                found.extend(_prune_meta(value[key], _join(path, "metadata")))
            continue
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if sub is None:
            if preserve or extra is True:
                continue
            found.append(_join(path, key))
            del value[key]
            continue
        child = value[key]
        if child is None and not sub.get("nullable") and "default" not in sub:
            del value[key]
            continue
        prune(sub, child, _join(path, key), found)


def _prune_meta(meta: Obj, path: str) -> list[str]:
    from apiserver.patch.fieldvalidation import unknown_fields_of

    node = openapi.definitions().get(OBJECT_META)
    if node is None:
        return []
    return unknown_fields_of(node, meta, None, path, prune=True)


def prune_custom_resource(node: Node | None, obj: Obj, old: Obj | None = None) -> list[str]:
    """Prune ``obj`` (a whole custom resource) by its version's schema; returns the pruned paths.

    ``old`` is accepted for the body checker's signature: a custom resource's storage never holds
    unknown fields, so nothing needs tolerating.
    """
    if node is None:
        return []
    found: list[str] = []
    prune(node, obj, "", found, root=True)
    return found
