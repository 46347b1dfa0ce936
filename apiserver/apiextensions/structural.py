"""The structural-schema rules of ``apiextensions.k8s.io/v1`` (kube's ``structural.ValidateStructural``
and the schema parts of ``ValidateCustomResourceDefinitionOpenAPISchema``).

A structural schema specifies a ``type`` for every field (except ``x-kubernetes-int-or-string``
and ``x-kubernetes-preserve-unknown-fields`` nodes), is ``type: object`` at the root, restricts
``metadata`` at the root to ``name``/``generateName``, never combines ``properties`` with
``additionalProperties``, uses no ``$ref``, and uses the ``x-kubernetes-*`` extensions
consistently. Defaults must themselves be valid and pruned. Errors carry kube's paths
(``spec.versions[0].schema.openAPIV3Schema.properties[spec].type``) and messages.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from apiserver import field as fe
from apiserver.apiextensions.pruning import prune
from apiserver.apiextensions.values import validate_value
from apiserver.field import ErrorList, Path

Node = dict[str, Any]

TYPES = ("array", "boolean", "integer", "number", "object", "string")
_LIST_TYPES = ("atomic", "set", "map")
_MAP_TYPES = ("atomic", "granular")
_SCALARS = ("boolean", "integer", "number", "string")


def validate_structural(root: Any, path: Path) -> ErrorList:
    """Every structural violation of ``root`` (a version's ``openAPIV3Schema``) at ``path``."""
    errs: ErrorList = []
    if not isinstance(root, dict):
        errs.append(fe.required(path, "schemas are required"))
        return errs
    if root.get("type") != "object":
        if not root.get("type"):
            errs.append(fe.required(path.child("type"), "must not be empty at the root"))
        else:
            errs.append(fe.invalid(path.child("type"), root.get("type"), "must be object at the root"))
    _node(root, path, errs, "", root=True)
    meta = (root.get("properties") or {}).get("metadata")
    if isinstance(meta, dict):
        _root_metadata(meta, path.child("properties").key("metadata"), errs)
    for name in ("apiVersion", "kind"):
        sub = (root.get("properties") or {}).get(name)
        if isinstance(sub, dict) and sub.get("type") not in (None, "string"):
            errs.append(
                fe.invalid(
                    path.child("properties").key(name).child("type"), sub.get("type"), "must be string"
                )
            )
    return errs


def _root_metadata(meta: Node, path: Path, errs: ErrorList) -> None:
    allowed = {"type", "properties", "description"}
    props = meta.get("properties") or {}
    if set(meta) - allowed or set(props) - {"name", "generateName"}:
        errs.append(
            fe.forbidden(
                path,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            )
        )
    for name in ("name", "generateName"):
        sub = props.get(name)
        if isinstance(sub, dict) and sub.get("type") not in (None, "string"):
            errs.append(
                fe.invalid(
                    path.child("properties").key(name).child("type"), sub.get("type"), "must be string"
                )
            )


_SHAPES: dict[str, tuple[type, ...]] = {
    "type": (str,),
    "properties": (dict,),
    "items": (dict,),
    "additionalProperties": (dict, bool),
    "required": (list,),
    "enum": (list,),
    "allOf": (list,),
    "anyOf": (list,),
    "oneOf": (list,),
    "not": (dict,),
    "pattern": (str,),
    "format": (str,),
    "description": (str,),
    "nullable": (bool,),
    "x-kubernetes-list-map-keys": (list,),
    "x-kubernetes-list-type": (str,),
    "x-kubernetes-map-type": (str,),
    "x-kubernetes-validations": (list,),
    "maxLength": (int,),
    "minLength": (int,),
    "maxItems": (int,),
    "minItems": (int,),
    "maxProperties": (int,),
    "minProperties": (int,),
    "minimum": (int, float),
    "maximum": (int, float),
    "multipleOf": (int, float),
}


def _shape_errors(node: Node, path: Path) -> ErrorList:
    """Keys whose value has the wrong JSON type (a typed decoder would have refused the CRD)."""
    errs: ErrorList = []
    for key, types in _SHAPES.items():
        if key not in node:
            continue
        value = node[key]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if key == "items" and isinstance(value, list):
            errs.append(fe.forbidden(path.child("items"), "items must be a schema object and not an array"))
            continue
        if ok and key == "properties":
            ok = all(isinstance(v, dict) for v in value.values())
        if ok and key in ("required", "x-kubernetes-list-map-keys"):
            ok = all(isinstance(v, str) for v in value)
        if ok and key in ("allOf", "anyOf", "oneOf", "x-kubernetes-validations"):
            ok = all(isinstance(v, dict) for v in value)
        if not ok:
            errs.append(fe.invalid(path.child(key), value, "has the wrong type for this field"))
    return errs


def _node(node: Node, path: Path, errs: ErrorList, context: str, root: bool = False) -> None:
    """``context``: ``""`` (a field), ``"items"`` or ``"additionalProperties"``."""
    shape = _shape_errors(node, path)
    if shape:
        errs.extend(shape)
        return
    if "$ref" in node:
        errs.append(fe.forbidden(path.child("$ref"), "$ref is not supported"))
    typ = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string")
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    embedded = node.get("x-kubernetes-embedded-resource")
    if typ is not None and typ not in TYPES:
        errs.append(fe.not_supported(path.child("type"), typ, list(TYPES)))
    if preserve is False:
        errs.append(
            fe.invalid(path.child("x-kubernetes-preserve-unknown-fields"), False, "must be true or undefined")
        )
    if int_or_string is False:
        errs.append(fe.invalid(path.child("x-kubernetes-int-or-string"), False, "must be true or undefined"))
    if embedded is False:
        errs.append(
            fe.invalid(path.child("x-kubernetes-embedded-resource"), False, "must be true or undefined")
        )
    if int_or_string:
        if typ:
            errs.append(
                fe.invalid(path.child("type"), typ, "must be empty if x-kubernetes-int-or-string is true")
            )
    elif embedded:
        if typ != "object":
            errs.append(
                fe.required(path.child("type"), "must be object if x-kubernetes-embedded-resource is true")
            )
        if not node.get("properties") and not preserve:
            errs.append(
                fe.required(
                    path.child("properties"),
                    "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                )
            )
    elif not typ and not preserve and not root:
        if context == "items":
            errs.append(fe.required(path.child("type"), "must not be empty for specified array items"))
        elif context == "additionalProperties":
            errs.append(
                fe.required(path.child("type"), "must not be empty for specified additionalProperties")
            )
        else:
            errs.append(fe.required(path.child("type"), "must not be empty for specified object fields"))
    props = node.get("properties")
    extra = node.get("additionalProperties")
    if props and extra is not None and extra is not False:
        errs.append(
            fe.forbidden(
                path.child("additionalProperties"), "additionalProperties and properties are mutual exclusive"
            )
        )
    pattern = node.get("pattern")
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as e:
            errs.append(
                fe.invalid(
                    path.child("pattern"), pattern, f"must be a valid regular expression, but isn't: {e}"
                )
            )
    if typ == "array" and not isinstance(node.get("items"), dict):
        errs.append(fe.required(path.child("items"), "must be specified"))
    _extensions(node, path, errs)
    for key in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(node.get(key) or ()):
            if isinstance(sub, dict):
                _value_validation(sub, path.child(key).index(i), errs, int_or_string=bool(int_or_string))
    if isinstance(node.get("not"), dict):
        _value_validation(node["not"], path.child("not"), errs)
    if isinstance(props, dict):
        for name, sub in props.items():
            if isinstance(sub, dict):
                _node(sub, path.child("properties").key(name), errs, "")
            else:
                errs.append(fe.invalid(path.child("properties").key(name), sub, "must be an object"))
    if isinstance(extra, dict):
        _node(extra, path.child("additionalProperties"), errs, "additionalProperties")
    items = node.get("items")
    if isinstance(items, dict):
        _node(items, path.child("items"), errs, "items")
    if "default" in node:
        _default(node, path, errs)


def _value_validation(node: Node, path: Path, errs: ErrorList, int_or_string: bool = False) -> None:
    """Inside allOf/anyOf/oneOf/not only value validations may appear (no types, no defaults).

    The one exception is kube's ``x-kubernetes-int-or-string`` form
    ``anyOf: [{type: integer}, {type: string}]`` (also inside an ``allOf`` entry).
    """
    shape = _shape_errors(node, path)
    if shape:
        errs.extend(shape)
        return
    if int_or_string:
        if node.get("type") in ("integer", "string") and set(node) <= {"type"}:
            return
        if "anyOf" in node and set(node) <= {"anyOf"}:
            for i, sub in enumerate(node["anyOf"] or ()):
                if isinstance(sub, dict):
                    _value_validation(sub, path.child("anyOf").index(i), errs, int_or_string=True)
            return
    for key, why in (
        ("type", "must be empty to be structural"),
        ("default", "must be undefined to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
        ("x-kubernetes-embedded-resource", "must be false to be structural"),
        ("x-kubernetes-int-or-string", "must be false to be structural"),
    ):
        if key in node and key != "x-kubernetes-int-or-string":
            errs.append(fe.forbidden(path.child(key), why))
    for name, sub in (node.get("properties") or {}).items():
        if isinstance(sub, dict):
            _value_validation(sub, path.child("properties").key(name), errs)
    if isinstance(node.get("items"), dict):
        _value_validation(node["items"], path.child("items"), errs)


def _extensions(node: Node, path: Path, errs: ErrorList) -> None:
    typ = node.get("type")
    list_type = node.get("x-kubernetes-list-type")
    if list_type is not None:
        lp = path.child("x-kubernetes-list-type")
        if typ != "array":
            errs.append(fe.invalid(lp, list_type, "must only be used if type is array"))
        elif list_type not in _LIST_TYPES:
            errs.append(fe.not_supported(lp, list_type, list(_LIST_TYPES)))
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        if _shape_errors(items, path.child("items")):
            return  # reported where the items schema is walked
        if list_type == "set" and items.get("type") not in _SCALARS and typ == "array":
            errs.append(fe.invalid(lp, list_type, "only allowed for items of scalar types"))
        if list_type == "map":
            keys = node.get("x-kubernetes-list-map-keys")
            kp = path.child("x-kubernetes-list-map-keys")
            if not keys:
                errs.append(fe.required(kp, "must not be empty if x-kubernetes-list-type is map"))
            elif items.get("type") != "object":
                errs.append(
                    fe.invalid(
                        path.child("items").child("type"),
                        items.get("type"),
                        "must be object if parent array's x-kubernetes-list-type is map",
                    )
                )
            else:
                required = set(items.get("required") or ())
                item_props = items.get("properties") or {}
                for i, k in enumerate(keys):
                    prop = item_props.get(k)
                    if prop is None:
                        errs.append(
                            fe.invalid(kp.index(i), k, "entries must all be names of item properties")
                        )
                    elif k not in required and "default" not in prop:
                        errs.append(
                            fe.required(kp.index(i), "all map keys must be required or have a default value")
                        )
                    elif prop.get("type") not in _SCALARS:
                        errs.append(fe.invalid(kp.index(i), k, "must be a scalar property"))
    elif node.get("x-kubernetes-list-map-keys") is not None:
        errs.append(
            fe.forbidden(
                path.child("x-kubernetes-list-map-keys"), "must only be used if x-kubernetes-list-type is map"
            )
        )
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        mp = path.child("x-kubernetes-map-type")
        if typ != "object":
            errs.append(fe.invalid(mp, map_type, "must only be used if type is object"))
        elif map_type not in _MAP_TYPES:
            errs.append(fe.not_supported(mp, map_type, list(_MAP_TYPES)))


def _default(node: Node, path: Path, errs: ErrorList) -> None:
    value = copy.deepcopy(node["default"])
    dp = path.child("default")
    trial: ErrorList = []
    validate_value(node, value, dp, trial)
    errs.extend(trial)
    if not trial:
        pruned: list[str] = []
        prune(node, value, "", pruned)
        if pruned:
            errs.append(
                fe.invalid(dp, node["default"], f"must not have unknown fields, got: {', '.join(pruned)}")
            )
