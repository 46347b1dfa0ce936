"""Label and field selectors (``k8s.io/apimachinery/pkg/labels`` and ``pkg/fields``).

Selectors are parsed once into immutable objects whose ``matches`` is a tight loop over
precompiled ``(op, key, value)`` steps, because they run on hot paths: watch fan-out,
informer indexes and the scheduler. Parse errors raise ``ValueError`` carrying
kube-apiserver's exact message, ready to be returned as a 400 ``BadRequest``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from apiserver.field import FieldError, Path, invalid, not_supported
from apiserver.validation.names import go_quote, is_qualified_name, is_valid_label_value

# selection.Operator values
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS = (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST)
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# compiled step kinds, cheapest first in the dispatch chain
_K_EQ, _K_NE, _K_IN, _K_NOTIN, _K_EXISTS, _K_DNE, _K_GT, _K_LT = range(8)
_EMPTY: Mapping[str, str] = {}


def _parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: no spaces or underscores, int64 range."""
    if _INT64_RE.fullmatch(s) is None:
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def _aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: de-duplicated, bracketed when several."""
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


class Requirement:
    """One ``key op values`` term; immutable once built by :func:`new_requirement`."""

    __slots__ = ("key", "operator", "values", "_set")

    def __init__(self, key: str, operator: str, values: tuple[str, ...]) -> None:
        self.key = key
        self.operator = operator
        self.values = values
        self._set = frozenset(values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            v = labels.get(self.key)
            return v is not None and v in self._set
        if op in (NOT_IN, NOT_EQUALS):
            v = labels.get(self.key)
            return v is None or v not in self._set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            return _compare(labels.get(self.key), self.values, op == GREATER_THAN)
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({vals})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{sym}{vals}"

    def __repr__(self) -> str:
        return f"Requirement({self.key!r}, {self.operator!r}, {self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirement) and (self.key, self.operator, self.values) == (
            other.key,
            other.operator,
            other.values,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))


def _compare(label: str | None, values: tuple[str, ...], greater: bool) -> bool:
    if label is None or len(values) != 1:
        return False
    lv, rv = _parse_int64(label), _parse_int64(values[0])
    if lv is None or rv is None:
        return False
    return lv > rv if greater else lv < rv


def new_requirement(key: str, op: str, values: Iterable[str] | None) -> Requirement:
    """``labels.NewRequirement``: validates key, operator arity and values; ``ValueError`` on failure."""
    vals = None if values is None else list(values)
    if not isinstance(key, str) or any(not isinstance(v, str) for v in vals or ()):
        raise ValueError("label selector keys and values must be strings")
    n = 0 if vals is None else len(vals)
    errs: list[FieldError] = []
    key_msgs = is_qualified_name(key)
    if key_msgs:
        errs.append(invalid(Path("key"), key, "; ".join(key_msgs)))
    vpath = Path("values")
    if op in (IN, NOT_IN):
        if n == 0:
            errs.append(invalid(vpath, vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if n != 1:
            errs.append(invalid(vpath, vals, "exact-match compatibility requires one single value"))
    elif op in (EXISTS, DOES_NOT_EXIST):
        if n != 0:
            errs.append(invalid(vpath, vals, "values set must be empty for exists and does not exist"))
    elif op in (GREATER_THAN, LESS_THAN):
        if n != 1:
            errs.append(invalid(vpath, vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals or ()):
            if _parse_int64(v) is None:
                errs.append(
                    invalid(vpath.index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer")
                )
    else:
        errs.append(not_supported(Path("operator"), op, list(_VALID_OPERATORS)))
    for i, v in enumerate(vals or ()):
        msgs = is_valid_label_value(v)
        if msgs:
            errs.append(invalid(vpath.index(i).key(key), v, "; ".join(msgs)))
    if errs:
        raise ValueError(_aggregate([str(e) for e in errs]))
    return Requirement(key, op, tuple(vals or ()))


class LabelSelector:
    """A parsed, immutable label selector (``labels.Selector``)."""

    __slots__ = ("requirements", "_nothing", "_steps", "_eq_pairs", "_str")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        reqs = tuple(sorted(requirements, key=lambda r: r.key))
        self.requirements: tuple[Requirement, ...] = reqs
        self._nothing = nothing
        self._str = ",".join(str(r) for r in reqs)
        steps: list[tuple[int, str, Any]] = []
        for r in reqs:
            op = r.operator
            if op in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                steps.append((_K_EQ, r.key, r.values[0]))
            elif op in (NOT_EQUALS, NOT_IN) and len(r.values) == 1:
                steps.append((_K_NE, r.key, r.values[0]))
            elif op in (IN, EQUALS, DOUBLE_EQUALS):
                steps.append((_K_IN, r.key, r._set))
            elif op in (NOT_IN, NOT_EQUALS):
                steps.append((_K_NOTIN, r.key, r._set))
            elif op == EXISTS:
                steps.append((_K_EXISTS, r.key, None))
            elif op == DOES_NOT_EXIST:
                steps.append((_K_DNE, r.key, None))
            else:
                steps.append((_K_GT if op == GREATER_THAN else _K_LT, r.key, r.values))
        self._steps = tuple(steps)
        # The common shape (matchLabels only) gets a dedicated loop.
        self._eq_pairs = (
            tuple((k, v) for _, k, v in steps) if steps and all(s[0] == _K_EQ for s in steps) else None
        )

    @property
    def empty(self) -> bool:
        """True when the selector matches everything (``Selector.Empty``)."""
        return not self._nothing and not self.requirements

    @property
    def nothing(self) -> bool:
        """True for ``labels.Nothing()`` (from a nil ``metav1.LabelSelector``)."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        if labels is None:
            labels = _EMPTY
        pairs = self._eq_pairs
        if pairs is not None:
            get = labels.get
            for k, v in pairs:  # noqa: SIM110 - a plain loop beats all() on this hot path
                if get(k) != v:
                    return False
            return True
        get = labels.get
        for kind, key, val in self._steps:
            if kind == _K_EQ:
                if get(key) != val:
                    return False
            elif kind == _K_NE:
                if get(key) == val:
                    return False
            elif kind == _K_IN:
                got = get(key)
                if got is None or got not in val:
                    return False
            elif kind == _K_NOTIN:
                got = get(key)
                if got is not None and got in val:
                    return False
            elif kind == _K_EXISTS:
                if key not in labels:
                    return False
            elif kind == _K_DNE:
                if key in labels:
                    return False
            elif not _compare(get(key), val, kind == _K_GT):
                return False
        return True

    def required_pairs(self) -> tuple[tuple[str, str], ...]:
        """The ``key=value`` pairs every matching label set carries (from ``=``/``==``/one-value ``in``)."""
        return tuple((key, val) for kind, key, val in self._steps if kind == _K_EQ)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``a=b`` or ``a in (b)``), else None."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return "LabelSelector(<nothing>)" if self._nothing else f"LabelSelector({self._str!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelSelector) and (self._nothing, self._str) == (other._nothing, other._str)

    def __hash__(self) -> int:
        return hash((self._nothing, self._str))


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


# --- string syntax -------------------------------------------------------------------------

(
    _T_ERROR,
    _T_EOS,
    _T_CLOSE,
    _T_COMMA,
    _T_NOT,
    _T_DEQ,
    _T_EQ,
    _T_GT,
    _T_IDENT,
    _T_IN,
    _T_LT,
    _T_NEQ,
    _T_NOTIN,
    _T_OPEN,
) = range(14)
_STRING_TO_TOKEN = {
    ")": _T_CLOSE,
    ",": _T_COMMA,
    "!": _T_NOT,
    "==": _T_DEQ,
    "=": _T_EQ,
    ">": _T_GT,
    "in": _T_IN,
    "<": _T_LT,
    "!=": _T_NEQ,
    "notin": _T_NOTIN,
    "(": _T_OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_TOKENS = {
    _T_IN: IN,
    _T_EQ: EQUALS,
    _T_DEQ: DOUBLE_EQUALS,
    _T_GT: GREATER_THAN,
    _T_LT: LESS_THAN,
    _T_NOTIN: NOT_IN,
    _T_NEQ: NOT_EQUALS,
}


def _lex(s: str) -> list[tuple[int, str]]:
    """The upstream lexer; a NUL character ends the input, as Go's ``read()`` returning 0 does."""
    items: list[tuple[int, str]] = []
    n = len(s)
    pos = 0
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n or s[pos] == "\0":
            items.append((_T_EOS, ""))
            return items
        ch = s[pos]
        if ch in _SPECIAL:
            buf = ""
            last: tuple[int, str] | None = None
            while pos < n and s[pos] in _SPECIAL:
                cand = buf + s[pos]
                tok = _STRING_TO_TOKEN.get(cand)
                if tok is None and last is not None:
                    break
                buf = cand
                pos += 1
                if tok is not None:
                    last = (tok, cand)
            items.append(last if last is not None else (_T_ERROR, f"error expected: keyword found '{buf}'"))
        else:
            start = pos
            while pos < n and s[pos] not in _SPECIAL and s[pos] not in _WHITESPACE and s[pos] != "\0":
                pos += 1
            lit = s[start:pos]
            items.append((_STRING_TO_TOKEN.get(lit, _T_IDENT), lit))
            if pos < n and s[pos] == "\0":
                pos += 1  # upstream consumes the NUL without unreading it


class _Parser:
    """Recursive-descent parser mirroring ``labels.Parser`` (including its error texts)."""

    __slots__ = ("items", "pos")

    def __init__(self, s: str) -> None:
        self.items = _lex(s)
        self.pos = 0

    def _peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_T_IN, _T_NOTIN):
            tok = _T_IDENT
        return tok, lit

    def _next(self, values: bool = True) -> tuple[int, str]:
        item = self._peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self._peek()
            if tok in (_T_IDENT, _T_NOT):
                try:
                    reqs.append(self._requirement())
                except ValueError as e:
                    raise ValueError(f"unable to parse requirement: {e}") from None
                t, lit2 = self._next()
                if t == _T_EOS:
                    return reqs
                if t == _T_COMMA:
                    t2, lit3 = self._peek()
                    if t2 not in (_T_IDENT, _T_NOT):
                        raise ValueError(f"found '{lit3}', expected: identifier after ','")
                else:
                    raise ValueError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _T_EOS:
                return reqs
            else:
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        key, op = self._key_and_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, op, ())
        op = self._operator()
        vals = self._values() if op in (IN, NOT_IN) else self._exact_value()
        return new_requirement(key, op, sorted(vals))

    def _key_and_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self._next()
        if tok == _T_NOT:
            op = DOES_NOT_EXIST
            tok, lit = self._next()
        if tok != _T_IDENT:
            raise ValueError(f"found '{lit}', expected: identifier")
        msgs = is_qualified_name(lit)
        if msgs:
            raise ValueError("<nil>: " + invalid("", lit, "; ".join(msgs)).error_body())
        if self._peek()[0] in (_T_EOS, _T_COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def _operator(self) -> str:
        tok, lit = self._next(values=False)
        op = _OPERATOR_TOKENS.get(tok)
        if op is None:
            raise ValueError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return op

    def _values(self) -> set[str]:
        tok, lit = self._next()
        if tok != _T_OPEN:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self._peek()
        if tok in (_T_IDENT, _T_COMMA):
            vals = self._identifiers()
            if self._next()[0] != _T_CLOSE:
                raise ValueError(f"found '{lit}', expected: ')'")
            return vals
        if tok == _T_CLOSE:
            self._next()
            return {""}
        raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")

    def _identifiers(self) -> set[str]:
        vals: set[str] = set()
        while True:
            tok, lit = self._next()
            if tok == _T_IDENT:
                vals.add(lit)
                tok2, lit2 = self._peek()
                if tok2 == _T_COMMA:
                    continue
                if tok2 == _T_CLOSE:
                    return vals
                raise ValueError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _T_COMMA:
                if not vals:
                    vals.add("")  # "(,"
                tok2 = self._peek()[0]
                if tok2 == _T_CLOSE:
                    vals.add("")  # ",)"
                    return vals
                if tok2 == _T_COMMA:
                    vals.add("")  # ",,"
                continue
            raise ValueError(f"found '{lit}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        if self._peek()[0] in (_T_EOS, _T_COMMA):
            return {""}
        tok, lit = self._next()
        if tok == _T_IDENT:
            return {lit}
        raise ValueError(f"found '{lit}', expected: identifier")


@lru_cache(maxsize=4096)
def parse_label_selector(s: str) -> LabelSelector:
    """``labels.Parse``: ``a=b,c!=d,e in (f,g),h notin (i),j,!k``; ``ValueError`` on bad syntax.

    Results are cached: selectors are immutable and clients repeat the same query strings.
    """
    reqs = _Parser(s).parse()
    return LabelSelector(reqs) if reqs else EVERYTHING


_DICT_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_dict(sel: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: None -> matches nothing, ``{}`` -> matches everything.

    Parsed once per distinct selector (:func:`_parsed`): the StatefulSet controller parses a
    new set's ``spec.selector``, and the scheduler parses the same selector again for the set's
    first pod (its default spreading); a parse validates every key and value (~10 µs), the
    lookup reads the selector's strings once. Selectors are immutable, so the one parsed is
    the one every later parse would build; an invalid selector raises each time, as before."""
    key = selector_dict_key(sel)
    if key is None:
        return _label_selector_from_dict(sel)
    return _parsed(_KeyedSelector(key, sel))


class _KeyedSelector:
    """A selector dict for :func:`_parsed`'s cache, hashed and compared by its
    :func:`selector_dict_key` (a dict itself is unhashable; the key is all the parse reads)."""

    __slots__ = ("key", "sel")

    def __init__(self, key: tuple[Any, ...], sel: Mapping[str, Any] | None) -> None:
        self.key = key
        self.sel = sel

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _KeyedSelector) and other.key == self.key


@lru_cache(maxsize=4096)
def _parsed(keyed: _KeyedSelector) -> LabelSelector:
    """The parse of the first selector dict met with ``keyed``'s key (an invalid one raises and
    is not remembered: ``lru_cache`` keeps no exceptions). The cache keeps ``keyed`` as its key,
    without the dict: a hit compares keys only."""
    sel, keyed.sel = keyed.sel, None
    return _label_selector_from_dict(sel)


def selector_dict_key(sel: object) -> tuple[Any, ...] | None:
    """A hashable rendering of a selector dict made of strings only, or ``None`` (parse it uncached).

    Equal renderings mean equal selectors: the pairs of ``matchLabels`` in order, and each
    requirement's key, operator and values in order (as the parse reads them)."""
    if type(sel) is not dict or not sel.keys() <= {"matchLabels", "matchExpressions"}:
        return None
    labels = sel.get("matchLabels")
    exprs = sel.get("matchExpressions")
    if labels is None:
        pairs: tuple[tuple[str, str], ...] | None = None
    elif type(labels) is dict and all(type(k) is str and type(v) is str for k, v in labels.items()):
        pairs = tuple(labels.items())
    else:
        return None
    if exprs is None:
        return (pairs, None)
    if type(exprs) is not list:
        return None
    out: list[tuple[str, str, tuple[str, ...] | None]] = []
    for e in exprs:
        if type(e) is not dict or not e.keys() <= {"key", "operator", "values"}:
            return None
        k, op, vals = e.get("key"), e.get("operator"), e.get("values")
        if type(k) is not str or type(op) is not str:
            return None
        if vals is None:
            out.append((k, op, None))
        elif type(vals) is list and all(type(v) is str for v in vals):
            out.append((k, op, tuple(vals)))
        else:
            return None
    return (pairs, tuple(out))


def _label_selector_from_dict(sel: Mapping[str, Any] | None) -> LabelSelector:
    """:func:`label_selector_from_dict`, parsed now."""
    if sel is None:
        return NOTHING
    if not isinstance(sel, Mapping):
        raise ValueError("a label selector must be an object")
    match_labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(exprs, list):
        raise ValueError("matchLabels must be an object and matchExpressions a list")
    if not match_labels and not exprs:
        return EVERYTHING
    reqs = [new_requirement(k, EQUALS, [v]) for k, v in match_labels.items()]
    for expr in exprs:
        if not isinstance(expr, Mapping):
            raise ValueError("a label selector requirement must be an object")
        op_name = expr.get("operator") or ""
        op = _DICT_OPERATORS.get(op_name)
        if op is None:
            raise ValueError(f"{go_quote(str(op_name))} is not a valid label selector operator")
        vals = expr.get("values")
        reqs.append(new_requirement(expr.get("key") or "", op, list(vals) if vals else None))
    return LabelSelector(reqs)


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromValidatedSet``: exact match on every pair; empty -> everything."""
    if not labels:
        return EVERYTHING
    return LabelSelector(Requirement(k, EQUALS, (v,)) for k, v in labels.items())


def label_selector_string(sel: Mapping[str, Any] | None) -> str:
    """``LabelSelectorAsSelector(sel).String()``: what ``Scale.status.selector`` holds ("" if empty)."""
    return str(label_selector_from_dict(sel))


def format_label_selector(sel: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector`` (kubectl describe): ``<none>`` if empty or nil, ``<error>`` if invalid."""
    try:
        s = str(label_selector_from_dict(sel))
    except (ValueError, AttributeError, TypeError):
        return "<error>"
    return s or "<none>"


# --- field selectors -----------------------------------------------------------------------


class FieldSelector:
    """A parsed field selector (``fields.Selector``): an AND of ``field=value`` / ``field!=value``."""

    __slots__ = ("requirements", "_str")

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()) -> None:
        self.requirements: tuple[tuple[str, str, str], ...] = tuple(requirements)
        self._str = ",".join(f"{f}{op}{escape_field_value(v)}" for f, op, v in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def fields(self) -> set[str]:
        return {f for f, _, _ in self.requirements}

    def matches(self, getter: Callable[[str], str | None]) -> bool:
        """``getter(field)`` returns the object's value; a missing field counts as ``""``."""
        for f, op, v in self.requirements:
            got = getter(f) or ""
            if (got == v) != (op == EQUALS):
                return False
        return True

    def matcher(self, getters: Mapping[str, Callable[[Any], str | None]]) -> Callable[[Any], bool]:
        """:meth:`matches` of an object, with ``getters[field](obj)`` reading each field: the same
        test, requirement after requirement, bound once instead of per object.

        A watch filters every write of its resource through its selector, twice for an update
        (the scheduler's pod watch selects on ``status.phase``: every pod write in the plane);
        bound here, one object costs no getter closure, no lookup by field name and no call of
        :meth:`matches`.
        """
        # requirements on one field in a row (``status.phase!=Succeeded,status.phase!=Failed``)
        # read it once: a getter only reads the object
        runs: list[tuple[Callable[[Any], str | None], list[tuple[str, bool]]]] = []
        last = ""
        for f, op, v in self.requirements:
            if not runs or f != last:
                runs.append((getters[f], []))
                last = f
            runs[-1][1].append((v, op == EQUALS))
        checks = tuple((get, tuple(tests)) for get, tests in runs)

        def match(obj: Any) -> bool:
            for get, tests in checks:
                got = get(obj) or ""
                for v, eq in tests:
                    if (got == v) != eq:
                        return False
            return True

        return match

    def requires_exact_match(self, field: str) -> str | None:
        for f, op, v in self.requirements:
            if f == field and op == EQUALS:
                return v
        return None

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return f"FieldSelector({self._str!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSelector) and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)


def escape_field_value(v: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    if "\\" not in v and "," not in v and "=" not in v:
        return v
    return v.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(v: str) -> str:
    """``fields.UnescapeValue``: undo :func:`escape_field_value`; bare ``,``/``=`` are errors."""
    if "\\" not in v and "," not in v and "=" not in v:
        return v
    out: list[str] = []
    in_slash = False
    for ch in v:
        if in_slash:
            if ch not in ("\\", ",", "="):
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in (",", "="):
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(s: str) -> list[str]:
    """Split on commas not escaped by a backslash (escapes are kept for the value unescaper)."""
    if "\\" not in s:
        return s.split(",")
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(s):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(s[start:i])
            start = i + 1
    terms.append(s[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """The first ``!=``, ``==`` or ``=`` splits the term; the field part has no escaping."""
    i_eq = term.find("=")
    i_ne = term.find("!=")
    if i_ne != -1 and (i_eq == -1 or i_ne < i_eq):
        return term[:i_ne], NOT_EQUALS, term[i_ne + 2 :]
    if i_eq == -1:
        return None
    if term.startswith("==", i_eq):
        return term[:i_eq], DOUBLE_EQUALS, term[i_eq + 2 :]
    return term[:i_eq], EQUALS, term[i_eq + 1 :]


@lru_cache(maxsize=4096)
def parse_field_selector(s: str) -> FieldSelector:
    """``fields.ParseSelector``: ``a=b``, ``a==b``, ``a!=b``, comma-separated, sorted by term text."""
    if not s:
        return FieldSelector()
    parts = sorted(_split_terms(s))
    reqs: list[tuple[str, str, str]] = []
    for part in parts:
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise ValueError(f"invalid selector: '{s}'; can't understand '{part}'")
        lhs, op, rhs = split
        reqs.append((lhs, NOT_EQUALS if op == NOT_EQUALS else EQUALS, unescape_field_value(rhs)))
    return FieldSelector(reqs)


def field_value_getter(path: str) -> Callable[[Mapping[str, Any]], str]:
    """What a field selector compares for the dotted ``path`` of an object (``spec.nodeName``).

    The string form of the value; ``true``/``false`` for a bool; ``""`` when it is absent or a
    step below is not an object. The built-in kinds' selectable fields (the registry's table)
    and a CRD's ``selectableFields`` both read fields this way, so one selector means the same
    on either.
    """
    parts = path.split(".")
    if len(parts) == 2:  # ``spec.nodeName``, ``status.phase``: most selectable fields, unrolled
        first, second = parts

        def get2(obj: Mapping[str, Any]) -> str:
            cur: Any = obj.get(first) if isinstance(obj, dict) else None
            if not isinstance(cur, dict):
                return ""
            return _field_text(cur.get(second))

        return get2

    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for p in parts:
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(p)
        return _field_text(cur)

    return get


def _field_text(value: Any) -> str:
    """A selectable field's value as a field selector compares it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def unsupported_fields(sel: FieldSelector, supported: set[str] | frozenset[str]) -> list[str]:
    """Fields the selector uses that the resource cannot filter on, in first-use order.

    The registry answers each with 400 ``field label not supported: <name>``.
    """
    out: list[str] = []
    for f, _, _ in sel.requirements:
        if f not in supported and f not in out:
            out.append(f)
    return out
