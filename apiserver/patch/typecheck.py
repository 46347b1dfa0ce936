"""Type-check a request body against the served schema: kube's typed decoding, as a 400.

kube-apiserver decodes every body into Go structs, so ``"replicas": "3"`` never reaches
validation: the decoder answers 400 ``json: cannot unmarshal string into Go struct field
StatefulSetSpec.spec.replicas of type int32``. gangplane stores JSON dicts, so this module does
that check explicitly, once, before defaulting and validation. Everything downstream (strategies,
workloadbuilder, controllers) may then rely on each declared field having its declared JSON type.
``null`` is accepted anywhere (Go decodes it to the zero value); undeclared fields are left to
field validation.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.fieldpath import EXACT_JSON

_ANY, _OBJECT, _MAP, _LIST, _LEAF = 0, 1, 2, 3, 4

_JSON_OF = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


class _Shape:
    __slots__ = ("fast", "go", "items", "kind", "leaf", "leaf_types", "name", "props", "values")

    def __init__(self, kind: int, go: str = "", name: str = "") -> None:
        self.kind = kind
        self.go = go  # Go type name for messages
        self.name = name  # definition short name (StatefulSetSpec) for messages
        self.props: dict[str, _Shape] = {}
        self.values: _Shape | None = None
        self.items: _Shape | None = None
        self.leaf: tuple[str, ...] = ()  # accepted JSON types of a leaf
        #: a leaf's usual Python type (``type(v) is fast`` is always accepted): one call saved per leaf
        self.fast: type | None = None
        #: an object's properties that are leaves, by name -> their usual Python type (filled on
        #: first use, after compilation): a field of its usual type costs one lookup
        self.leaf_types: dict[str, type] | None = None

    def set_leaf(self, accepted: tuple[str, ...]) -> _Shape:
        self.leaf = accepted
        self.fast = _FAST.get(accepted[0]) if accepted else None
        return self


#: the exact Python type that satisfies a leaf's first accepted JSON type by itself (``bool`` is
#: not ``int`` here: ``type(True) is int`` is false, so booleans take the full check)
_FAST = {"string": str, "integer": int, "number": float, "boolean": bool}


_ANY_SHAPE = _Shape(_ANY)
_cache: dict[int, _Shape] = {}


def _types(node: Obj) -> tuple[str, ...]:
    t = node.get("type")
    if isinstance(t, str):
        return (t,)
    if isinstance(t, list):
        return tuple(x for x in t if x != "null")
    return ()


def _go_leaf(node: Obj, types: tuple[str, ...]) -> str:
    if types == ("integer",):
        return node.get("format") or "int"
    if types == ("number",):
        return "float64"
    if types == ("boolean",):
        return "bool"
    if types == ("string",):
        return "string"
    return "/".join(types)


def _short(ref_name: str) -> str:
    parts = ref_name.split(".")
    return f"{parts[-2]}.{parts[-1]}" if len(parts) >= 2 else ref_name


def _compile(node: Obj | None, ref_name: str = "") -> _Shape:
    if isinstance(node, dict) and "$ref" in node:
        ref_name = schema.ref_name(node["$ref"])
    elif isinstance(node, dict) and isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        ref_name = schema.ref_name(node["allOf"][0].get("$ref", "")) or ref_name
    node = schema.resolve(node)
    if not node:
        return _ANY_SHAPE
    key = id(node)
    got = _cache.get(key)
    if got is not None:
        return got
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-embedded-resource"):
        _cache[key] = _ANY_SHAPE
        return _ANY_SHAPE
    if node.get("x-kubernetes-int-or-string"):
        shape = _Shape(_LEAF, "intstr.IntOrString").set_leaf(("string", "integer"))
        _cache[key] = shape
        return shape
    one_of = node.get("oneOf") or node.get("anyOf")
    if isinstance(one_of, list):
        accepted: list[str] = []
        for alt in one_of:
            if isinstance(alt, dict):
                accepted.extend(_types(alt))
        if accepted and all(t in _JSON_OF for t in accepted):
            shape = _Shape(_LEAF, _short(ref_name) if ref_name else "/".join(accepted))
            shape.set_leaf(tuple(accepted))
            _cache[key] = shape
            return shape
        _cache[key] = _ANY_SHAPE
        return _ANY_SHAPE
    types = _types(node)
    props = node.get("properties")
    ap = node.get("additionalProperties")
    if isinstance(props, dict) or (types == ("object",) and not isinstance(ap, dict)):
        shape = _Shape(_OBJECT, _short(ref_name) if ref_name else "struct", ref_name.rsplit(".", 1)[-1])
        _cache[key] = shape  # before children: definitions may be recursive
        for name, child in (props or {}).items():
            shape.props[name] = _compile(child)
        return shape
    if isinstance(ap, dict):
        shape = _Shape(_MAP)
        _cache[key] = shape
        shape.values = _compile(ap)
        shape.go = f"map[string]{shape.values.go or 'interface {}'}"
        return shape
    items = node.get("items")
    if isinstance(items, dict) or types == ("array",):
        shape = _Shape(_LIST)
        _cache[key] = shape
        shape.items = _compile(items) if isinstance(items, dict) else _ANY_SHAPE
        shape.go = f"[]{shape.items.go or 'interface {}'}"
        return shape
    if types and all(t in _JSON_OF for t in types):
        shape = _Shape(_LEAF, _go_leaf(node, types)).set_leaf(types)
        _cache[key] = shape
        return shape
    _cache[key] = _ANY_SHAPE
    return _ANY_SHAPE


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _leaf_ok(v: Any, accepted: tuple[str, ...]) -> bool:
    for t in accepted:
        if t == "boolean":
            if isinstance(v, bool):
                return True
        elif t == "integer":
            if isinstance(v, int) and not isinstance(v, bool):
                return True
            if isinstance(v, float) and v.is_integer():
                return True
        elif t == "number":
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return True
        elif t == "string" and isinstance(v, str):
            return True
    return False


class _Mismatch(Exception):  # noqa: N818 - internal signal
    """The first value of the wrong type; its path is collected while the walk unwinds."""

    def __init__(self, value: Any, struct: str, go: str) -> None:
        super().__init__(go)
        self.value, self.struct, self.go = value, struct, go
        #: the path below the walk's start, innermost step first: ``(".", name)`` or ``("[", key)``
        self.steps: list[tuple[str, str]] = []

    def path(self, root: str) -> str:
        out = root
        for sep, name in reversed(self.steps):
            if sep == ".":
                out = f"{out}.{name}" if out else name
            else:
                out = f"{out}[{name}]"
        return out


_ZERO_LEAF = {("string",): "", ("integer",): 0, ("number",): 0, ("boolean",): False}


def _zero(shape: _Shape) -> Any:
    """Go's zero value for ``shape``, as JSON (``None`` where it is ``null`` or not one value)."""
    if shape.kind in (_OBJECT, _MAP):
        return {}
    if shape.kind == _LEAF:
        return _ZERO_LEAF.get(shape.leaf)
    return None


def _walk(v: Any, shape: _Shape, struct: str, fill: bool) -> None:
    """Check ``v`` against ``shape``; raise :class:`_Mismatch` at the first wrong type.

    Paths are only needed for the error, so none is built on the way down: each level adds its
    step to the mismatch as it passes through on the way up (``try`` costs nothing until then).
    """
    if v is None:
        return
    kind = shape.kind
    if kind == _OBJECT:
        if type(v) is not dict:
            raise _Mismatch(v, struct, shape.go)
        props = shape.props
        inner = shape.name or struct
        leaf_types = shape.leaf_types
        if leaf_types is None:
            leaf_types = shape.leaf_types = {
                n: p.fast for n, p in props.items() if p.kind == _LEAF and p.fast is not None
            }
        for k, child in v.items():
            if type(child) is leaf_types.get(k):
                continue  # a leaf of its usual type (``None`` is no property's usual type)
            sub = props.get(k)
            if sub is None or child is None:
                continue
            sk = sub.kind
            if sk == _ANY:
                continue
            if sk == _LEAF:
                if type(child) is sub.fast or _leaf_ok(child, sub.leaf):
                    continue
                m = _Mismatch(child, inner, sub.go)
                m.steps.append((".", k))
                raise m
            try:
                _walk(child, sub, inner, fill)
            except _Mismatch as m:
                m.steps.append((".", k))
                raise
    elif kind == _MAP:
        if type(v) is not dict:
            raise _Mismatch(v, struct, shape.go)
        values = shape.values
        if values is not None and values.kind != _ANY:
            fast = values.fast
            for k, child in v.items():
                if type(child) is fast:
                    continue  # a leaf of its usual type (labels, annotations, data)
                if child is None:
                    if fill:
                        v[k] = _zero(values)  # Go decodes a null map value to the element's zero value
                    continue
                try:
                    _walk(child, values, struct, fill)
                except _Mismatch as m:
                    m.steps.append(("[", k))
                    raise
    elif kind == _LIST:
        if type(v) is not list:
            raise _Mismatch(v, struct, shape.go)
        items = shape.items
        if items is not None and items.kind != _ANY:
            fast = items.fast
            for i, child in enumerate(v):
                if type(child) is fast:
                    continue
                if child is None:
                    if fill:
                        v[i] = _zero(items)  # and a null slice element to the zero value (``{}``, ``""``, 0)
                    continue
                try:
                    _walk(child, items, struct, fill)
                except _Mismatch as m:
                    m.steps.append(("[", str(i)))
                    raise
    elif kind == _LEAF and not _leaf_ok(v, shape.leaf):
        raise _Mismatch(v, struct, shape.go)


def check_types(rd: Any, obj: Obj, *, fill: bool = True, live: Obj | None = None) -> None:
    """Raise 400 BadRequest, worded like kube's decoder, at the first value of the wrong type.

    With ``fill`` (an object about to be stored), ``null`` elements of typed lists and maps
    become their element's zero value, as Go's decoder makes them: ``tolerations: [null]`` is
    stored (and validated) as ``[{}]``, ``labels: {"a": null}`` as ``{"a": ""}``.

    ``live``: the stored object an update or patch replaces (it passed this check when it was
    written), whose unchanged top-level sections need no second look (see :func:`_unchanged`).
    """
    check_kind_types(rd.group, rd.version, rd.kind, obj, fill=fill, live=live)


def check_kind_types(
    group: str, version: str, kind: str, obj: Any, *, fill: bool = True, live: Obj | None = None
) -> None:
    """:func:`check_types` for any served kind (``autoscaling/v1`` Scale bodies, for one)."""
    shape = _kind_shape(group, version, kind)
    if shape is None:
        return
    if live is not None and type(obj) is dict and type(live) is dict and shape.kind == _OBJECT:
        # Only the sections the write changed can hold a wrong type (a status write leaves
        # ``spec`` and ``metadata`` as they were): walk those, in the object's order, so the
        # first mismatch is the one the full walk finds first.
        obj = {k: v for k, v in obj.items() if not _unchanged(v, live.get(k, _ABSENT))}
    try:
        _walk(obj, shape, kind, fill)
    except _Mismatch as m:
        path = m.path("")
        where = f"Go struct field {m.struct}.{path}" if path else "Go value"
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot unmarshal '
            f"{_json_type(m.value)} into {where} of type {m.go}"
        ) from None


@functools.lru_cache(maxsize=1024)
def _kind_shape(group: str, version: str, kind: str) -> _Shape | None:
    """The compiled shape of a served kind (``None``: no schema): looked up and compiled on
    every write before, from tables built once (``schema.for_gvk`` and ``_compile``'s are both
    memoized for the process), so it is remembered for as long."""
    node = schema.for_gvk(group, version, kind)
    if node is None:
        return None
    return _compile(node, schema.definition_name_for(group, version, kind) or "")


_ABSENT: Any = object()


def _unchanged(v: Any, old: Any) -> bool:
    """``v`` is exactly the live object's section ``old``, so it passed this check already.

    Equal ``orjson`` texts (``EXACT_JSON``: ``true``/``1``/``1.0`` differ, subclasses refused)
    of values already ``==``, and no ``null`` in them: NaN and infinities are written as
    ``null`` too, and a ``null`` in a typed list or map is what ``fill`` rewrites. Scalars are
    left to the walk, which checks them as cheaply as this would.
    """
    if old is _ABSENT or type(v) not in (dict, list) or type(old) is not type(v):
        return False
    if v is old:
        # the live object's own section (a handed-off body, see ``registry.handoff``): it was
        # checked, and ``fill`` applied, when it was written; nobody modifies a stored object
        return True
    if type(v) is dict and _same_entries(v, old):
        return True
    try:
        if v != old:
            return False
        text = orjson.dumps(v, option=EXACT_JSON)
        return b"null" not in text and orjson.dumps(old, option=EXACT_JSON) == text
    except Exception:  # unorderable or unserializable: let the walk decide
        return False


def _same_entries(v: Obj, old: Obj) -> bool:
    """``v`` holds the live map ``old``'s very values, under the same keys in the same order.

    A status write's ``metadata`` is a new map of the live object's values (the registry's
    merge base and a handed-off body keep them, ``registry.handoff``): each value is then as
    unchanged as a section that *is* the live one, and the map's text is the live map's, so
    the answer is the JSON comparison's without writing either text (two encodings of the
    metadata, managed fields included, per status write)."""
    if len(v) != len(old):
        return False
    return all(x is y and k == ok for (k, x), (ok, y) in zip(v.items(), old.items(), strict=True))


def check_apply_types(rd: Any, patch: Obj) -> None:
    """Type-check an apply configuration before it is merged: the typed conversion kube's field
    manager makes of it (built-in kinds whole, custom resources' ``metadata``)."""
    if rd.schema is not None and rd.converter is not None:
        check_metadata_types(rd, patch, fill=False)
    else:
        check_types(rd, patch, fill=False)  # a null in an apply configuration means something


OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def check_metadata_types(rd: Any, obj: Obj, *, fill: bool = True) -> None:
    """:func:`check_types` of ``metadata`` alone (custom resources: the rest is their schema's job)."""
    node = schema.definitions().get(OBJECT_META)
    md = obj.get("metadata")
    if node is None or md is None:
        return
    try:
        _walk(md, _compile(node, OBJECT_META), "ObjectMeta", fill)
    except _Mismatch as m:
        raise errors.bad_request(
            f'{rd.kind} in version "{rd.version}" cannot be handled as a {rd.kind}: json: cannot unmarshal '
            f"{_json_type(m.value)} into Go struct field {m.struct}.{m.path('metadata')} of type {m.go}"
        ) from None
