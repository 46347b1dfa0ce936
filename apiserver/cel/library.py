"""Kubernetes' CEL extension libraries that DRA selectors use: ``quantity`` and ``semver``.

Upstream (``k8s.io/apiserver/pkg/cel/library``) adds two opaque types. The runtime here has no
custom types, so a quantity or version travels as its canonical string and every function
parses its operands again (the parse is cached in :mod:`apiserver.quantity`):

* ``quantity(s)``, ``isQuantity(s)``; on quantities ``compareTo``, ``isLessThan``,
  ``isGreaterThan``, ``add``, ``sub``, ``asInteger``, ``asApproximateFloat``, ``isInteger``,
  ``sign``.
* ``semver(s)``, ``isSemver(s)``; on versions ``major``, ``minor``, ``patch`` and the same
  ``compareTo`` / ``isLessThan`` / ``isGreaterThan``.

``compareTo`` and friends are shared by both types; the operands' shape decides (a semantic
version is never a valid quantity and vice versa).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

from apiserver.quantity import format_quantity, parse_quantity_full

_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_MAX_INT64 = 2**63 - 1


class CELFunctionError(ValueError):
    """Raised inside a library function; the runtime reports it as an evaluation error."""


# -- quantity -------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _q(s: Any) -> Fraction:
    if not isinstance(s, str):
        raise CELFunctionError(f"no such overload: expected a quantity, got {type(s).__name__}")
    try:
        return parse_quantity_full(s).value
    except ValueError as e:
        raise CELFunctionError(f"quantities must match the regular expression: {e}") from e


def quantity_text(value: Fraction, like: str | None = None) -> str:
    """Canonical text of ``value``, in the binary-SI family when ``like`` was binary-SI."""
    fmt = parse_quantity_full(like).format if like else None
    return format_quantity(value, fmt) if fmt else format_quantity(value)


def quantity(s: Any) -> str:
    return quantity_text(_q(s), s)


def is_quantity(s: Any) -> bool:
    try:
        _q(s)
    except CELFunctionError:
        return False
    return True


def _q_add(a: Any, b: Any) -> str:
    other = Fraction(b) if isinstance(b, int) and not isinstance(b, bool) else _q(b)
    return quantity_text(_q(a) + other, a)


def _q_sub(a: Any, b: Any) -> str:
    other = Fraction(b) if isinstance(b, int) and not isinstance(b, bool) else _q(b)
    return quantity_text(_q(a) - other, a)


def _as_integer(a: Any) -> int:
    v = _q(a)
    if v.denominator != 1 or not -_MAX_INT64 - 1 <= v <= _MAX_INT64:
        raise CELFunctionError("cannot convert value to integer")
    return int(v)


def _is_integer(a: Any) -> bool:
    v = _q(a)
    return v.denominator == 1 and -_MAX_INT64 - 1 <= v <= _MAX_INT64


def _sign(a: Any) -> int:
    v = _q(a)
    return (v > 0) - (v < 0)


# -- semver ---------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _v(s: Any) -> tuple[int, int, int, tuple[str, ...]]:
    if not isinstance(s, str):
        raise CELFunctionError(f"no such overload: expected a version, got {type(s).__name__}")
    m = _SEMVER_RE.match(s)
    if not m:
        raise CELFunctionError(f"invalid semver: {s}")
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def semver(s: Any) -> str:
    _v(s)
    return s


def is_semver(s: Any, normalize: Any = False) -> bool:
    try:
        _v(s)
    except CELFunctionError:
        return False
    return True


def _pre_key(pre: tuple[str, ...]) -> tuple[Any, ...]:
    # semver 2.0 §11: a release sorts after its pre-releases; numeric identifiers before alphanumeric.
    if not pre:
        return (1,)
    return (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre), ())


def _compare_versions(a: str, b: str) -> int:
    va, vb = _v(a), _v(b)
    ka = (va[0], va[1], va[2], _pre_key(va[3]))
    kb = (vb[0], vb[1], vb[2], _pre_key(vb[3]))
    return (ka > kb) - (ka < kb)


# -- shared comparison ----------------------------------------------------------------------


def compare_to(a: Any, b: Any) -> int:
    if isinstance(a, str) and _SEMVER_RE.match(a):
        return _compare_versions(a, b)
    qa, qb = _q(a), _q(b)
    return (qa > qb) - (qa < qb)


def _less(a: Any, b: Any) -> bool:
    return compare_to(a, b) < 0


def _greater(a: Any, b: Any) -> bool:
    return compare_to(a, b) > 0


KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": quantity,
    "isQuantity": is_quantity,
    "add": _q_add,
    "sub": _q_sub,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: float(_q(a)),
    "isInteger": _is_integer,
    "sign": _sign,
    "semver": semver,
    "isSemver": is_semver,
    "major": lambda s: _v(s)[0],
    "minor": lambda s: _v(s)[1],
    "patch": lambda s: _v(s)[2],
    "compareTo": compare_to,
    "isLessThan": _less,
    "isGreaterThan": _greater,
}

__all__ = ["KUBERNETES_FUNCTIONS", "CELFunctionError", "compare_to", "quantity", "semver"]
