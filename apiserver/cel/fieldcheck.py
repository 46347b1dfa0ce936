"""A partial CEL type check of admission policy expressions: field references against a kind's schema.

kube's ValidatingAdmissionPolicy status controller type-checks each expression against the kinds
its ``matchConstraints`` name and reports what fails in ``status.typeChecking``. gangplane's CEL
runtime has no type checker; this module checks what most mistakes are: a chain of field
selections from ``object`` or ``oldObject`` (``object.spec.replicass``) naming a field the kind's
OpenAPI schema does not have. The warning reads as cel-go's::

    apps/v1, Kind=StatefulSet: ERROR: <input>:1:12: undefined field 'replicass'
     | object.spec.replicass > 1
     | ...........^

Maps (``additionalProperties``), arrays, ``x-kubernetes-preserve-unknown-fields`` and
``int-or-string`` stop the walk (anything may follow them); so do indexing and calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Schema = dict[str, Any]
Resolve = Callable[[Schema | None], Schema | None]

_ROOTS = ("object", "oldObject")


def _is_ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _is_ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def _skip_string(src: str, i: int) -> int:
    q = src[i]
    if src.startswith(q * 3, i):
        end = src.find(q * 3, i + 3)
        return len(src) if end < 0 else end + 3
    j = i + 1
    while j < len(src):
        if src[j] == "\\":
            j += 2
            continue
        if src[j] == q:
            return j + 1
        j += 1
    return j


def selections(expression: str) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """Each ``object.a.b`` / ``oldObject.a`` chain: the root and its (field, offset of the dot)."""
    i, n = 0, len(expression)
    while i < n:
        c = expression[i]
        if c in "\"'":
            i = _skip_string(expression, i)
            continue
        if not _is_ident_start(c):
            i += 1
            continue
        j = i
        while j < n and _is_ident(expression[j]):
            j += 1
        word = expression[i:j]
        preceded = i > 0 and expression[i - 1] in "._"
        if word in _ROOTS and not preceded:
            chain: list[tuple[str, int]] = []
            k = j
            while k < n and expression[k] == ".":
                m = k + 1
                if m < n and expression[m] == "?":  # optional field selection
                    m += 1
                e = m
                while e < n and _is_ident(expression[e]):
                    e += 1
                if e == m:
                    break
                chain.append((expression[m:e], k))
                k = e
            if chain:
                yield word, chain
            i = k
            continue
        i = j


def _walk(schema: Schema | None, field: str, resolve: Resolve) -> tuple[Schema | None, bool]:
    """(the field's schema or None to stop checking, whether the field is undefined)."""
    node = resolve(schema)
    if node is None:
        return None, False
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string"):
        return None, False
    props = node.get("properties")
    if isinstance(props, dict) and field in props:
        return props[field], False
    extra = node.get("additionalProperties")
    if extra is not None and extra is not False:
        return None, False  # a map: any key (and no more checking below it)
    types = node.get("type")
    type_set = set(types) if isinstance(types, list) else {types}
    if isinstance(props, dict) or "object" in type_set:
        return None, True
    return None, False


def undefined_fields(expression: str, root_schema: Schema, resolve: Resolve) -> list[tuple[str, int]]:
    """(field, 1-based column of its dot) for each selection the schema does not define."""
    out: list[tuple[str, int]] = []
    for _root, chain in selections(expression):
        schema: Schema | None = root_schema
        for name, dot in chain:
            schema, undefined = _walk(schema, name, resolve)
            if undefined:
                out.append((name, dot + 1))
                break
            if schema is None:
                break
    return out


def issue_lines(gvk: str, expression: str, issues: list[tuple[int, str]]) -> list[str]:
    """cel-go's rendering of issues (0-based offset, message), in the order of their offsets: the
    GVK, the error with its line and column, the source line and a caret under the column."""
    lines: list[str] = []
    for offset, message in sorted(issues):
        start = expression.rfind("\n", 0, offset) + 1
        end = expression.find("\n", offset)
        line_no = expression.count("\n", 0, offset) + 1
        col = offset - start
        lines.append(f"{gvk}: ERROR: <input>:{line_no}:{col + 1}: {message}")
        lines.append(f" | {expression[start : len(expression) if end < 0 else end]}")
        lines.append(" | " + "." * col + "^")
    return lines
