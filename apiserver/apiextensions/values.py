"""Validation of a custom resource against its structural schema, worded as kube reports it.

kube validates custom resources with kube-openapi's schema validator and converts its errors to
field errors (``apiextensions-apiserver/pkg/apiserver/validation``). The messages reproduced here:

* wrong type — ``spec.replicas: Invalid value: "string": spec.replicas in body must be of type
  integer: "string"`` (``FieldValueTypeInvalid``);
* ``required`` — ``spec.image: Required value``; ``enum`` — ``Unsupported value: "x": supported
  values: "a", "b"``;
* bounds — ``… in body should be greater than or equal to 1``, ``… less than or equal to``,
  ``… should be at least 2 chars long``, ``Too long: may not be more than 5 bytes``, ``… should
  have at least 1 items``, ``Too many: 4: must have at most 3 items``, ``… should match '^a'``,
  ``… should be a multiple of 2``, ``… must be of type date-time: "x"``;
* ``uniqueItems`` and ``x-kubernetes-list-type: set|map`` — ``Duplicate value: …``.

``nullable`` allows ``null``; ``x-kubernetes-int-or-string`` accepts an integer or a string;
``x-kubernetes-embedded-resource`` requires ``apiVersion`` and ``kind``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import re
import uuid
from datetime import date, datetime
from typing import Any

import orjson

from apiserver import field as fe
from apiserver.field import ErrorList, Path

Node = dict[str, Any]

_GO_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
#: the string formats checked by pattern, compiled on first use (``_pattern``): the hostname
#: pattern's bounded repeats alone cost ~20 ms of every server start
_DURATION = r"^[-+]?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$"
_HOSTNAME = r"^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$"
_EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi prints for a value (``integer`` for whole floats too)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    return _GO_TYPES.get(type(value), "object")


def _type_ok(expected: str, value: Any) -> bool:
    actual = json_type(value)
    if expected == "number":
        return actual in ("number", "integer")
    return actual == expected


def _num(v: Any) -> str:
    """A bound printed like Go's ``%v`` of a float64 (``1``, ``1.5``)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _format_ok(fmt: str, value: str) -> bool:
    try:
        if fmt == "date-time":
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif fmt == "date":
            date.fromisoformat(value)
        elif fmt == "byte":
            base64.b64decode(value, validate=True)
        elif fmt == "uuid":
            uuid.UUID(value)
        elif fmt == "ipv4":
            ipaddress.IPv4Address(value)
        elif fmt == "ipv6":
            ipaddress.IPv6Address(value)
        elif fmt == "cidr":
            ipaddress.ip_network(value, strict=False)
        elif fmt == "duration":
            return bool(_pattern(_DURATION).match(value))
        elif fmt == "hostname":
            return bool(_pattern(_HOSTNAME).match(value))
        elif fmt == "email":
            return bool(_pattern(_EMAIL).match(value))
    except (ValueError, binascii.Error):
        return False
    return True


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True  # refused when the CRD was written; a stored one is not enforced


def _identity(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


MISSING: Any = object()


def validate_value(
    node: Node, value: Any, path: Path, errs: ErrorList, root: bool = False, old: Any = MISSING
) -> None:
    """Append to ``errs`` every way ``value`` (at ``path``) violates ``node``.

    ``old`` is the correlated value of the object being updated (same property or map key, same
    list-map item by its keys). A value equal to it is not validated again: kube's validation
    ratcheting (``CRDValidationRatcheting``, GA in 1.33) lets an object that became invalid
    through a stricter schema be updated elsewhere.
    """
    if old is not MISSING and _identity(value) == _identity(old):
        return
    where = str(path)
    if value is None:
        if not node.get("nullable") and (node.get("type") or node.get("x-kubernetes-int-or-string")):
            errs.append(
                fe.type_invalid(
                    path, "null", f'{where} in body must be of type {node.get("type") or "string"}: "null"'
                )
            )
        return
    if node.get("x-kubernetes-int-or-string"):
        if json_type(value) not in ("integer", "string"):
            errs.append(
                fe.type_invalid(
                    path,
                    json_type(value),
                    f'{where} in body must be of type integer,string: "{json_type(value)}"',
                )
            )
            return
    else:
        expected = node.get("type")
        if expected and not _type_ok(expected, value):
            errs.append(
                fe.type_invalid(
                    path,
                    json_type(value),
                    f'{where} in body must be of type {expected}: "{json_type(value)}"',
                )
            )
            return
    enum = node.get("enum")
    if enum is not None and not any(_identity(value) == _identity(e) for e in enum):
        errs.append(
            fe.not_supported(
                path, value, [e if isinstance(e, str) else orjson.dumps(e).decode() for e in enum]
            )
        )
    if isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        _numeric(node, value, path, errs)
    elif isinstance(value, str):
        _string(node, value, path, errs)
    elif isinstance(value, list):
        _array(node, value, path, errs, old)
    elif isinstance(value, dict):
        _object(node, value, path, errs, root, old)
    for sub in node.get("allOf") or ():
        validate_value(sub, value, path, errs, old=old)
    for key in ("anyOf", "oneOf"):
        subs = node.get(key)
        if subs:
            matches = 0
            for sub in subs:
                trial: ErrorList = []
                validate_value(sub, value, path, trial)
                matches += not trial
            if (key == "anyOf" and matches == 0) or (key == "oneOf" and matches != 1):
                detail = (
                    "must validate at least one schema (anyOf)"
                    if key == "anyOf"
                    else "must validate one and only one schema (oneOf)"
                )
                errs.append(fe.invalid(path, value, f"{where} in body {detail}"))
    if isinstance(node.get("not"), dict):
        trial = []
        validate_value(node["not"], value, path, trial)
        if not trial:
            errs.append(fe.invalid(path, value, f"{where} in body must not validate the schema (not)"))


def _numeric(node: Node, value: float, path: Path, errs: ErrorList) -> None:
    where = str(path)
    lo, hi = node.get("minimum"), node.get("maximum")
    if lo is not None:
        if node.get("exclusiveMinimum") and value <= lo:
            errs.append(fe.invalid(path, value, f"{where} in body should be greater than {_num(lo)}"))
        elif value < lo:
            errs.append(
                fe.invalid(path, value, f"{where} in body should be greater than or equal to {_num(lo)}")
            )
    if hi is not None:
        if node.get("exclusiveMaximum") and value >= hi:
            errs.append(fe.invalid(path, value, f"{where} in body should be less than {_num(hi)}"))
        elif value > hi:
            errs.append(
                fe.invalid(path, value, f"{where} in body should be less than or equal to {_num(hi)}")
            )
    mult = node.get("multipleOf")
    if mult and (value / mult) != int(value / mult):
        errs.append(fe.invalid(path, value, f"{where} in body should be a multiple of {_num(mult)}"))
    fmt = node.get("format")
    if fmt == "int32" and not -(2**31) <= value < 2**31:
        errs.append(fe.invalid(path, value, f"{where} in body must be of type int32: {_num(value)}"))


def _string(node: Node, value: str, path: Path, errs: ErrorList) -> None:
    where = str(path)
    max_len = node.get("maxLength")
    if max_len is not None and len(value) > max_len:
        errs.append(fe.too_long(path, max_len))
    min_len = node.get("minLength")
    if min_len is not None and len(value) < min_len:
        errs.append(fe.invalid(path, value, f"{where} in body should be at least {min_len} chars long"))
    pattern = node.get("pattern")
    if pattern is not None and not _matches(pattern, value):
        errs.append(fe.invalid(path, value, f"{where} in body should match '{pattern}'"))
    fmt = node.get("format")
    if fmt and not node.get("x-kubernetes-int-or-string") and not _format_ok(fmt, value):
        errs.append(fe.invalid(path, value, f'{where} in body must be of type {fmt}: "{value}"'))


def correlate_items(node: Node, old: Any, value: list[Any]) -> list[Any]:
    """The old item of each new item of a list-map, by its keys; other lists correlate nothing."""
    if node.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return [MISSING] * len(value)
    keys = tuple(node.get("x-kubernetes-list-map-keys") or ())

    def ident(item: Any) -> Any:
        return _identity({k: item.get(k) for k in keys}) if isinstance(item, dict) else None

    by_key = {ident(o): o for o in old}
    return [by_key.get(ident(v), MISSING) for v in value]


def _array(node: Node, value: list[Any], path: Path, errs: ErrorList, old: Any = MISSING) -> None:
    where = str(path)
    max_items = node.get("maxItems")
    if max_items is not None and len(value) > max_items:
        errs.append(fe.too_many(path, len(value), max_items))
    min_items = node.get("minItems")
    if min_items is not None and len(value) < min_items:
        errs.append(fe.invalid(path, len(value), f"{where} in body should have at least {min_items} items"))
    list_type = node.get("x-kubernetes-list-type")
    if node.get("uniqueItems") or list_type == "set":
        seen: set[bytes] = set()
        for i, item in enumerate(value):
            ident = _identity(item)
            if ident in seen:
                errs.append(fe.duplicate(path.index(i), item))
            seen.add(ident)
    elif list_type == "map":
        keys = node.get("x-kubernetes-list-map-keys") or ()
        seen_keys: set[bytes] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            ident = _identity({k: item.get(k) for k in keys})
            if ident in seen_keys:
                errs.append(fe.duplicate(path.index(i), {k: item.get(k) for k in keys if k in item}))
            seen_keys.add(ident)
    items = node.get("items")
    if isinstance(items, dict):
        olds = correlate_items(node, old, value)
        for i, item in enumerate(value):
            validate_value(items, item, path.index(i), errs, old=olds[i])


def _object(
    node: Node, value: dict[str, Any], path: Path, errs: ErrorList, root: bool, old: Any = MISSING
) -> None:
    where = str(path)
    props: dict[str, Node] = node.get("properties") or {}
    for name in node.get("required") or ():
        if name not in value:
            errs.append(fe.required(path.child(name), ""))
    max_props = node.get("maxProperties")
    if max_props is not None and len(value) > max_props:
        errs.append(fe.too_many(path, len(value), max_props))
    min_props = node.get("minProperties")
    if min_props is not None and len(value) < min_props:
        errs.append(
            fe.invalid(path, len(value), f"{where} in body should have at least {min_props} properties")
        )
    if node.get("x-kubernetes-embedded-resource"):
        for name in ("apiVersion", "kind"):
            if not value.get(name):
                errs.append(fe.required(path.child(name), ""))
    extra = node.get("additionalProperties")
    if root and isinstance(value.get("metadata"), dict):
        # ObjectMeta is validated as for every kind; the schema may only narrow name and generateName
        meta_node = props.get("metadata") or {}
        for name, sub in (meta_node.get("properties") or {}).items():
            if name in ("name", "generateName") and isinstance(sub, dict) and name in value["metadata"]:
                old_meta = old.get("metadata") if isinstance(old, dict) else None
                old_value = old_meta.get(name, MISSING) if isinstance(old_meta, dict) else MISSING
                validate_value(
                    sub, value["metadata"][name], path.child("metadata", name), errs, old=old_value
                )
    for key, child in value.items():
        if root and key in ("apiVersion", "kind", "metadata"):
            continue  # validated as ObjectMeta and by the endpoint
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if sub is not None:
            old_child = old.get(key, MISSING) if isinstance(old, dict) else MISSING
            validate_value(sub, child, path.child(key), errs, old=old_child)
