"""Kubernetes ``resource.Quantity``: exact parsing, canonical formatting, int accessors.

Values are :class:`fractions.Fraction`, so arithmetic and comparisons are exact and need no
helpers. Parsing follows apimachinery: the value keeps nano precision (finer non-zero values
round away from zero), binary-SI values are capped at 2^63-1, and the input's suffix family
(BinarySI / DecimalSI / DecimalExponent) decides how the value is written back.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal

Format = Literal["BinarySI", "DecimalSI", "DecimalExponent"]
BINARY_SI: Format = "BinarySI"
DECIMAL_SI: Format = "DecimalSI"
DECIMAL_EXPONENT: Format = "DecimalExponent"

SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = 10**9
_MAX_INT64 = 2**63 - 1
_MAX_BINARY = Fraction(_MAX_INT64)
# A decimal exponent beyond this is refused instead of building a huge integer (upstream's
# inf.Dec would only record a scale); negative ones just round up to one nano.
_MAX_EXPONENT = 4096

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXP = {e: s for s, e in _BINARY_SUFFIXES.items()}
_BINARY_BY_EXP[0] = ""


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed quantity: exact value, its format, and whether the input string is already canonical."""

    value: Fraction
    format: Format
    verbatim: bool  # upstream keeps the original string when it is in canonical-looking form


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: split into sign, numeric text, integer digits, fraction digits, suffix."""
    end = len(s)
    positive = True
    pos = 0
    if end and s[0] in "+-":
        positive = s[0] == "+"
        pos = 1
    i = pos
    while i < end and s[i] == "0":
        i += 1
    if i >= end:
        return positive, "0", "0", "", ""
    pos = i
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, s, s[pos:], "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return positive, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i < end:
        if s[i] in "+-":
            i += 1
        while i < end and s[i] in _DIGITS:
            i += 1
        if i < end:
            raise ValueError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, s[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """``suffixHandler.interpret``: (base, exponent, format) of a suffix."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and body.isascii() and body.isdigit():
            n = int(digits)
            if -(2**63) <= n <= _MAX_INT64:
                return 10, n, DECIMAL_EXPONENT
    raise ValueError(ERR_SUFFIX)


def _round_up_nano(v: Fraction) -> Fraction:
    """Keep nano precision, rounding a finer non-zero value away from zero."""
    if v.denominator == 1 or (_NANO % v.denominator) == 0:
        return v
    scaled = v.numerator * _NANO
    q = -((-abs(scaled)) // v.denominator)  # ceil of the magnitude
    return Fraction(q if v > 0 else -q, _NANO)


def _fast_path(num: str, denom: str, exponent: int, fmt: Format) -> tuple[bool, bool]:
    """Upstream's int64 fast path: (taken, input string kept verbatim as the serialized form).

    Only matters for two observable quirks: a value that misses the fast path must have a
    digit (else ``ERR_NUMERIC``), and a fast-path value in canonical-looking form is written
    back exactly as the client sent it (``"+1"`` stays ``"+1"``).
    """
    shifted = num + denom
    if fmt == BINARY_SI:
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return False, False
        value = int(shifted)
        if value * (1 << exponent) > _MAX_INT64:
            return False, False
        return True, exponent % 10 == 0 and (value & 0x07) != 0
    if 18 - len(shifted) < 0:
        return False, False
    scale = exponent - len(denom)
    if scale < -9:
        return False, False
    return True, scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


@lru_cache(maxsize=8192)
def parse(s: str) -> Parsed:
    """Parse a quantity string (cached: quantities repeat heavily across pods)."""
    if not s:
        raise ValueError(ERR_FORMAT_WRONG)
    if s == "0":
        return Parsed(Fraction(0), DECIMAL_SI, True)
    positive, value, num, denom, suffix = _scan(s)
    base, exponent, fmt = _interpret(suffix)
    fast, verbatim = _fast_path(num, denom, exponent, fmt)
    if not fast and not any(c in _DIGITS for c in value):
        raise ValueError(ERR_NUMERIC)  # inf.Dec.SetString needs at least one digit
    mag = Fraction(int(num + denom), 10 ** len(denom))
    if base == 2:
        mag *= 1 << exponent
    elif exponent > _MAX_EXPONENT:
        raise ValueError(ERR_SUFFIX)
    elif exponent < -_MAX_EXPONENT:
        mag = Fraction(1, _NANO) if mag else mag
    else:
        mag *= Fraction(10) ** exponent
    mag = _round_up_nano(mag)
    if fmt == BINARY_SI:
        if mag > _MAX_BINARY:
            mag = _MAX_BINARY
        if 0 < mag < 1:
            fmt = DECIMAL_SI
    return Parsed(mag if positive else -mag, fmt, verbatim)


def _as_text(s: str | int | float) -> str:
    """The text a JSON decoder would hand to ``Quantity.UnmarshalJSON`` (trimmed)."""
    if isinstance(s, bool):
        raise ValueError(ERR_FORMAT_WRONG)
    if isinstance(s, int):
        return str(s)
    if isinstance(s, float):
        if s != s or s in (float("inf"), float("-inf")):
            raise ValueError(ERR_FORMAT_WRONG)
        return repr(s)
    if not isinstance(s, str):
        raise ValueError(ERR_FORMAT_WRONG)
    return s.strip()


def parse_quantity(s: str | int | float) -> Fraction:
    """``resource.ParseQuantity`` returning the exact value; raises ``ValueError`` on bad input."""
    return parse(_as_text(s)).value


def parse_quantity_full(s: str | int | float) -> Parsed:
    """Like :func:`parse_quantity`, also returning the format family."""
    return parse(_as_text(s))


def _round_away(v: Fraction) -> int:
    """Round to an integer away from zero, as ``Quantity.ScaledValue`` does."""
    if v.denominator == 1:
        return v.numerator
    q = -((-abs(v.numerator)) // v.denominator)
    return q if v > 0 else -q


def _value_of(q: Fraction | int | str | float) -> Fraction:
    if isinstance(q, Fraction):
        return q
    if isinstance(q, int) and not isinstance(q, bool):
        return Fraction(q)
    return parse_quantity(q)


def to_milli(q: Fraction | int | str | float) -> int:
    """``MilliValue``: value*1000 rounded up in magnitude (``"0.1m"`` -> 1)."""
    return _round_away(_value_of(q) * 1000)


def to_int(q: Fraction | int | str | float) -> int:
    """``Value``: the value rounded up in magnitude (``"1.5"`` -> 2, ``"100m"`` -> 1)."""
    return _round_away(_value_of(q))


def _canonical_decimal(v: Fraction) -> tuple[int, int]:
    """``AsCanonicalBytes``: integer mantissa and a base-10 exponent that is a multiple of 3."""
    v = _round_up_nano(v)
    mantissa = v.numerator * (_NANO // v.denominator)
    exponent = -9
    while mantissa and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def format_quantity(value: Fraction | int, fmt: Format = DECIMAL_SI) -> str:
    """``Quantity.String()`` in canonical form: ``1536Mi``, ``500m``, ``4``, ``12e6``."""
    value = Fraction(value)
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI
        else:
            mantissa = value.numerator
            exp = 0
            while exp < 60 and mantissa % 1024 == 0:
                mantissa //= 1024
                exp += 10
            return f"{mantissa}{_BINARY_BY_EXP[exp]}"
    elif fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
        fmt = DECIMAL_EXPONENT
    mantissa, exponent = _canonical_decimal(value)
    if fmt == DECIMAL_SI and exponent in _DECIMAL_BY_EXP:
        return f"{mantissa}{_DECIMAL_BY_EXP[exponent]}"
    if exponent == 0:
        return str(mantissa)
    return f"{mantissa}e{exponent}"


@lru_cache(maxsize=8192)
def _canonicalize_text(s: str) -> str:
    p = parse(s)
    return s if p.verbatim else format_quantity(p.value, p.format)


def canonicalize(s: str | int | float) -> str:
    """The string kube writes back for a quantity: ``"1000m"`` -> ``"1"``, ``"1024Mi"`` -> ``"1Gi"``."""
    return _canonicalize_text(_as_text(s))


def add(a: Fraction, b: Fraction) -> Fraction:
    return a + b


def sub(a: Fraction, b: Fraction) -> Fraction:
    return a - b


@lru_cache(maxsize=16384)
def _milli(s: str | int | float) -> int:
    return to_milli(parse_quantity(s))


@lru_cache(maxsize=16384)
def _units(s: str | int | float) -> int:
    return to_int(parse_quantity(s))


MILLI_RESOURCES = frozenset({"cpu"})


def resource_list_milli(rl: dict[str, str] | None) -> dict[str, int]:
    """A ResourceList as integers: ``cpu`` in millicores, everything else in units (bytes, counts)."""
    if not rl:
        return {}
    return {k: (_milli(v) if k in MILLI_RESOURCES else _units(v)) for k, v in rl.items()}
