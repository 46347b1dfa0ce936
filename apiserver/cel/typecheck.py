"""Operand-type checks of admission policy expressions against a kind's schema (kube's
``status.typeChecking`` beyond undefined fields).

gangplane's CEL runtime exposes no parse tree and no checker, so this module parses the expression
itself (CEL's grammar: ternary, logical, relational, arithmetic and unary operators, member
selection, indexing, calls, list/map literals) and synthesises the types it can know: literals,
and field selections from ``object``/``oldObject`` typed by the kind's OpenAPI (or a CRD's
structural) schema — ``integer`` → int, ``number`` → double, ``string`` → string (``byte`` →
bytes, ``date-time`` → google.protobuf.Timestamp, ``duration`` → google.protobuf.Duration),
``boolean`` → bool, arrays → list(T), maps → map(string, T). Everything else (variables, params,
int-or-string, preserve-unknown-fields, most calls) is ``dyn`` and never reported.

An operator whose operand types CEL has no overload for is reported as cel-go words it, at the
operator's position: ``found no matching overload for '_==_' applied to '(string, int)'``.
Conservative where kube's environment is configurable: a comparison between two numeric types
(int, uint, double) is never reported. An expression this parser does not understand is not
checked (its undefined fields still are, by :mod:`apiserver.cel.fieldcheck`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Schema = dict[str, Any]
Resolve = Callable[[Schema | None], Schema | None]

TIMESTAMP = "google.protobuf.Timestamp"
DURATION = "google.protobuf.Duration"
_NUMERIC = ("int", "uint", "double")
_SCALARS = (*_NUMERIC, "string", "bool", "bytes", TIMESTAMP, DURATION)


@dataclass(frozen=True)
class T:
    """A synthesised type: ``name`` as cel-go prints it (``dyn`` when unknown, ``object`` for a
    structured schema node) and, for schema-typed values, the schema to select fields from."""

    name: str
    schema: Schema | None = None


DYN = T("dyn")
BOOL = T("bool")
INT = T("int")


class ParseError(Exception):
    pass


_PUNCT = ("||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", "[", "]", "(", ")", "{", "}", ",")  # fmt: skip


def tokenize(src: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) tokens; kinds: ident, int, uint, double, string, bytes, op, end."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        start = i
        prefix = ""
        if c in "rRbB" and i + 1 < n and src[i + 1] in "\"'rRbB":
            j = i
            while j < n and src[j] in "rRbB":
                prefix += src[j].lower()
                j += 1
            if j < n and src[j] in "\"'":
                i = j
                c = src[i]
            else:
                prefix = ""
        if c in "\"'":
            q3 = src[i : i + 3]
            if q3 in ('"""', "'''"):
                end = src.find(q3, i + 3)
                if end < 0:
                    raise ParseError("unterminated string")
                i = end + 3
            else:
                j = i + 1
                while j < n and src[j] != c:
                    j += 2 if src[j] == "\\" and "r" not in prefix else 1
                if j >= n:
                    raise ParseError("unterminated string")
                i = j + 1
            out.append(("bytes" if "b" in prefix else "string", src[start:i], start))
            continue
        if c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            j = i
            if src.startswith(("0x", "0X"), i):
                j = i + 2
                while j < n and (src[j].isdigit() or src[j].lower() in "abcdef"):
                    j += 1
                kind = "int"
            else:
                while j < n and src[j].isdigit():
                    j += 1
                kind = "int"
                if j + 1 < n and src[j] == "." and src[j + 1].isdigit():
                    kind = "double"
                    j += 1
                    while j < n and src[j].isdigit():
                        j += 1
                if j < n and src[j] in "eE":
                    kind = "double"
                    j += 1
                    if j < n and src[j] in "+-":
                        j += 1
                    while j < n and src[j].isdigit():
                        j += 1
            if kind == "int" and j < n and src[j] in "uU":
                kind = "uint"
                j += 1
            out.append((kind, src[i:j], i))
            i = j
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            out.append(("ident", src[i:j], i))
            i = j
            continue
        for p in _PUNCT:
            if src.startswith(p, i):
                out.append(("op", p, i))
                i += len(p)
                break
        else:
            raise ParseError(f"unexpected character {c!r}")
    out.append(("end", "", n))
    return out


def schema_type(schema: Schema | None, resolve: Resolve) -> T:
    """The CEL type of a value the (resolved) schema node describes."""
    node = resolve(schema)
    if not isinstance(node, dict):
        return DYN
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("x-kubernetes-int-or-string"):
        return DYN
    if any(k in node for k in ("oneOf", "anyOf")):
        return DYN
    types = node.get("type")
    names = [t for t in (types if isinstance(types, list) else [types]) if t and t != "null"]
    if len(names) != 1:
        if isinstance(node.get("properties"), dict):
            return T("object", node)
        return DYN
    typ, fmt = names[0], node.get("format")
    if typ == "integer":
        return INT
    if typ == "number":
        return T("double")
    if typ == "boolean":
        return BOOL
    if typ == "string":
        if fmt == "byte":
            return T("bytes")
        if fmt == "date-time":
            return T(TIMESTAMP)
        if fmt == "duration":
            return T(DURATION)
        return T("string")
    if typ == "array":
        item = schema_type(node.get("items"), resolve)
        return T(f"list({item.name})", node)
    if typ == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not isinstance(node.get("properties"), dict):
            value = schema_type(extra, resolve)
            return T(f"map(string, {value.name})", node)
        if isinstance(node.get("properties"), dict):
            return T("object", node)
    return DYN


def _family(t: T) -> str:
    if t.name in _NUMERIC:
        return "num"
    if t.name.startswith("list("):
        return "list"
    if t.name.startswith("map("):
        return "map"
    return t.name


def _known(t: T) -> bool:
    """Whether an operator check may use the type: a scalar, list or map (``dyn``, objects and null
    are never reported, to stay clear of overloads kube's environment may add)."""
    return t.name in _SCALARS or _family(t) in ("list", "map")


def _binary_ok(op: str, a: T, b: T) -> bool:
    fa, fb = _family(a), _family(b)
    if op in ("==", "!="):
        return fa == fb or "dyn" in (a.name, b.name) or fa in ("list", "map")
    if op in ("<", "<=", ">", ">="):
        return fa == fb and fa in ("num", "string", "bytes", "bool", TIMESTAMP, DURATION)
    if op == "+":
        if a.name == b.name and a.name in (*_NUMERIC, "string", "bytes", DURATION):
            return True
        if fa == fb == "list":
            return True
        return {a.name, b.name} == {TIMESTAMP, DURATION}
    if op == "-":
        if a.name == b.name and a.name in (*_NUMERIC, TIMESTAMP, DURATION):
            return True
        return (a.name, b.name) == (TIMESTAMP, DURATION)
    if op in ("*", "/"):
        return a.name == b.name and a.name in _NUMERIC
    if op == "%":
        return a.name == b.name and a.name in ("int", "uint")
    if op in ("&&", "||"):
        return a.name == b.name == "bool"
    return True


_RESULT_BOOL = ("==", "!=", "<", "<=", ">", ">=", "&&", "||", "in")
_MEMBER_RESULTS = {
    "size": INT,
    "startsWith": BOOL,
    "endsWith": BOOL,
    "contains": BOOL,
    "matches": BOOL,
    "all": BOOL,
    "exists": BOOL,
    "exists_one": BOOL,
    "lowerAscii": T("string"),
    "upperAscii": T("string"),
    "trim": T("string"),
}
_GLOBAL_RESULTS = {
    "size": INT,
    "has": BOOL,
    "int": INT,
    "uint": T("uint"),
    "double": T("double"),
    "string": T("string"),
    "bool": BOOL,
    "bytes": T("bytes"),
    "timestamp": T(TIMESTAMP),
    "duration": T(DURATION),
    "matches": BOOL,
}
_LITERALS = {"int": INT, "uint": T("uint"), "double": T("double"), "string": T("string"), "bytes": T("bytes")}


class _Checker:
    """A recursive-descent parser over :func:`tokenize`'s tokens that returns each sub-expression's
    type and records operator mismatches."""

    def __init__(self, src: str, root: Schema, resolve: Resolve) -> None:
        self.toks = tokenize(src)
        self.i = 0
        self.root = root
        self.resolve = resolve
        self.errors: list[tuple[int, str]] = []

    # -- token helpers
    def peek(self, text: str) -> bool:
        kind, tok, _ = self.toks[self.i]
        return kind == "op" and tok == text

    def take(self) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        if not self.peek(text):
            raise ParseError(f"expected {text!r}")
        self.i += 1

    # -- grammar
    def parse(self) -> None:
        self.expr()
        if self.toks[self.i][0] != "end":
            raise ParseError("trailing input")

    def expr(self) -> T:
        cond = self.binary(0)
        if self.peek("?"):
            self.take()
            a = self.binary(0)
            self.expect(":")
            b = self.expr()
            del cond
            return a if a == b else DYN
        return cond

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> T:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        ops = self._LEVELS[level]
        while True:
            kind, tok, off = self.toks[self.i]
            if not ((kind == "op" and tok in ops) or (kind == "ident" and tok == "in" and "in" in ops)):
                return left
            self.take()
            right = self.binary(level + 1)
            left = self.apply(tok, off, left, right)

    def apply(self, op: str, off: int, a: T, b: T) -> T:
        if op == "in":
            return BOOL
        if _known(a) and _known(b) and not _binary_ok(op, a, b):
            self.errors.append(
                (off, f"found no matching overload for '_{op}_' applied to '({a.name}, {b.name})'")
            )
            return BOOL if op in _RESULT_BOOL else DYN
        if op in _RESULT_BOOL:
            return BOOL
        return a if a.name == b.name else DYN

    def unary(self) -> T:
        if self.peek("!") or self.peek("-"):
            _, op, off = self.take()
            # a negative number literal is one token in CEL
            kind = self.toks[self.i][0]
            if op == "-" and kind in ("int", "double") and not self.peek("("):
                operand = self.member()
                return operand
            operand = self.unary()
            allowed = ("bool",) if op == "!" else ("int", "double", DURATION)
            if _known(operand) and operand.name not in allowed:
                self.errors.append(
                    (off, f"found no matching overload for '{op}_' applied to '({operand.name})'")
                )
                return DYN
            return operand
        return self.member()

    def member(self) -> T:
        t = self.primary()
        while True:
            if self.peek("."):
                self.take()
                if self.peek("?"):
                    self.take()
                kind, name, _ = self.take()
                if kind != "ident":
                    raise ParseError("expected a field name")
                if self.peek("("):
                    self.args()
                    t = _MEMBER_RESULTS.get(name, DYN)
                else:
                    t = self.select(t, name)
            elif self.peek("["):
                self.take()
                if self.peek("?"):
                    self.take()
                self.expr()
                self.expect("]")
                t = self.index(t)
            elif self.peek("{") and t.name == "type":
                self.take()
                self.fields("}")
                t = DYN
            else:
                return t

    def select(self, t: T, name: str) -> T:
        node = self.resolve(t.schema) if t.schema is not None else None
        if node is None:
            return DYN
        if t.name == "object":
            props = node.get("properties") or {}
            return schema_type(props[name], self.resolve) if name in props else DYN
        if t.name.startswith("map("):
            return schema_type(node.get("additionalProperties"), self.resolve)
        return DYN

    def index(self, t: T) -> T:
        node = self.resolve(t.schema) if t.schema is not None else None
        if node is None:
            return DYN
        if t.name.startswith("list("):
            return schema_type(node.get("items"), self.resolve)
        if t.name.startswith("map("):
            return schema_type(node.get("additionalProperties"), self.resolve)
        return DYN

    def args(self) -> list[T]:
        self.expect("(")
        out: list[T] = []
        while not self.peek(")"):
            out.append(self.expr())
            if not self.peek(","):
                break
            self.take()
        self.expect(")")
        return out

    def fields(self, close: str) -> None:
        while not self.peek(close):
            if self.peek("?"):
                self.take()
            self.expr()
            self.expect(":")
            self.expr()
            if not self.peek(","):
                break
            self.take()
        self.expect(close)

    def primary(self) -> T:
        kind, tok, _ = self.take()
        if kind in _LITERALS:
            return _LITERALS[kind]
        if kind == "ident":
            if tok in ("true", "false"):
                return BOOL
            if tok == "null":
                return T("null")
            if self.peek("("):
                self.args()
                return _GLOBAL_RESULTS.get(tok, DYN)
            if tok in ("object", "oldObject"):
                return T("object", self.root)
            if tok[:1].isupper() and self.peek("{"):
                return T("type")  # message construction (Object{…}), parsed by member()
            return DYN
        if kind == "op" and tok == ".":
            return self.primary()
        if kind == "op" and tok == "(":
            t = self.expr()
            self.expect(")")
            return t
        if kind == "op" and tok == "[":
            items: list[T] = []
            while not self.peek("]"):
                if self.peek("?"):
                    self.take()
                items.append(self.expr())
                if not self.peek(","):
                    break
                self.take()
            self.expect("]")
            names = {t.name for t in items}
            return T(f"list({names.pop()})") if len(names) == 1 else T("list(dyn)")
        if kind == "op" and tok == "{":
            self.fields("}")
            return DYN
        raise ParseError(f"unexpected {tok!r}")


def type_errors(expression: str, root_schema: Schema, resolve: Resolve) -> list[tuple[int, str]]:
    """(0-based offset, cel-go message) for each operator applied to operand types CEL has no
    overload for; an expression this parser cannot read gives none."""
    checker = _Checker(expression, root_schema, resolve)
    try:
        checker.parse()
    except (ParseError, IndexError):
        return []
    return checker.errors
