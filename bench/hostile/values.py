"""Hostile values and the encoders that write them, including what well-behaved encoders refuse.

Documents are plain Python values plus three markers: :class:`Token` (written verbatim, with a
JSON and a YAML spelling: ``NaN`` / ``.nan``), :class:`Nest` (nesting ``depth`` levels deep,
written without recursion so the encoder itself never overflows) and :class:`Pairs` (a mapping
written with repeated keys). :func:`to_json` and :func:`to_yaml` write them; :func:`protobuf_body`
builds a ``k8s\\x00`` envelope around random fields.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench.hostile.choices import Chooser, chance


@dataclass(frozen=True)
class Token:
    """A value written as is: ``json`` in JSON bodies, ``yaml`` in YAML bodies."""

    json: str
    yaml: str


@dataclass(frozen=True)
class Nest:
    """``depth`` nested lists (or single-key mappings when ``mapping``) around ``1``."""

    depth: int
    mapping: bool = False


class Pairs(list):  # type: ignore[type-arg]
    """A mapping as ``(key, value)`` pairs, so a key can repeat (duplicate fields)."""


def tok(both: str) -> Token:
    return Token(both, both)


#: strings a field may hold: empty, control characters, bidi overrides, astral and
#: non-Latin-1 text, lone surrogates, path tricks, quantities, times and cron specs gone wrong
STRINGS: tuple[str, ...] = (
    "x",
    "",
    "0",
    "-1",
    "true",
    "null",
    " ",
    "\t",
    "\x00",
    "a\x00b",
    "\r\n",
    "\x7f",
    "\u0085",
    "\u2028",
    "\u202e",
    "é",
    "ß",
    "\u0131",
    "日本語",
    "💥",
    "\ufeff",
    "\uffff",
    "\U0010ffff",
    "\ud800",
    "\udc00x",
    "a" * 63,
    "a" * 64,
    "a" * 254,
    "a" * 300,
    "b" * 5000,
    "../..",
    "..",
    ".",
    "a/b",
    "a b",
    "%00",
    "'",
    '"',
    "\\",
    "*",
    "-",
    "@",
    "a:b",
    "A",
    "1e400",
    "NaN",
    "Infinity",
    "-0",
    "1Gi",
    "-1Gi",
    "1.5.5",
    "1e3",
    "0x10",
    "1000000000000000000000000000000E",
    "2020-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "0000-00-00T00:00:00Z",
    "2020-13-45T99:99:99Z",
    "* * * * *",
    "@every 1s",
    "CRON_TZ=Mars/Olympus * * * * *",
    "TZ=UTC 99 99 99 99 99",
    "system:admin",
    "kube-system",
    "fuzz-ref",
    "default",
    "$patch",
    "delete",
    "replace",
    "merge",
    "f:metadata",
    "k8s.io/x",
    "a.b.c",
    "Always",
    "Never",
    "TCP",
    "IPv6",
)

#: field names: JSON/strategic-merge directives, non-Latin-1 names (once a 500 in the Warning
#: header), NUL, empty, dotted, managedFields prefixes, surrogates
KEYS: tuple[Any, ...] = (
    "x",
    "",
    "\x00",
    "é",
    "ø",
    "日本語",
    "💥",
    "a\nb",
    '"',
    "a.b",
    "a/b",
    "~1",
    "f:x",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "$setElementOrder/ports",
    "__proto__",
    "metadata",
    "spec",
    "status",
    "apiVersion",
    "kind",
    "name",
    "items",
    "k" * 300,
    Token('"\\ud83d\\udca5"', '"\\ud83d\\udca5"'),
    Token('"\\ud800"', '"\\ud800"'),
    Token('"x"', "1"),
    Token('"y"', "null"),
    Token('"z"', "true"),
    Token('"w"', "2001-12-14"),
    Token('"v"', "? [a, b]"),
    Token('"<<"', "<<"),
    Token('"u"', "!!binary aGk="),
    Token('"t"', "&k key"),
)

_INTS = (0, 1, -1, 2, 2**31 - 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1)

#: numbers: integer edges, floats where an integer belongs, what only a lenient parser reads
NUMBERS: tuple[Any, ...] = (
    *_INTS,
    10**30,
    10**100,
    1.5,
    -0.0,
    0.1,
    1e308,
    Token("1e400", "1e400"),
    Token("-1e400", "-1e400"),
    Token("1e-400", "1e-400"),
    Token("NaN", ".nan"),
    Token("Infinity", ".inf"),
    Token("-Infinity", "-.inf"),
    Token("1" * 5000, "1" * 5000),
    Token("1" + "0" * 400, "1" + "0" * 400),
    Token("-0", "-0"),
    Token("01", "01"),
    Token("1.", "0o17"),
    Token(".5", "0x1F"),
    Token("1e5", "1_000"),
    Token("2E+2", "190:20:30"),
)

#: what only YAML can say (JSON bodies get the JSON spelling, often an error)
YAML_ONLY: tuple[Token, ...] = (
    Token("null", "~"),
    Token('"2001-12-14"', "2001-12-14"),
    Token('"2001-12-14t21:59:43.10-05:00"', "2001-12-14t21:59:43.10-05:00"),
    Token('"aGk="', "!!binary aGk="),
    Token("[]", "!!set {a, b}"),
    Token("[]", "!!omap [a: 1, b: 2]"),
    Token("[]", "!!pairs [a: 1, a: 2]"),
    Token("true", "yes"),
    Token("false", "off"),
    Token('"x"', "!!int x"),
    Token('"x"', "!!float x"),
    Token('"x"', "!!bool x"),
    Token('"x"', "!!timestamp x"),
    Token('"x"', "!!str"),
    Token('"x"', "!foo bar"),
    Token('"x"', "!!python/object/apply:os.system [true]"),
    Token('"x"', "*undefined"),
    Token('"x"', "&a [1, *a]"),
    Token("{}", "{<<: {a: 1}, b: 2}"),
    Token("{}", "{<<: 5}"),
    Token("{}", "{<<: [{a: 1}, 2]}"),
    Token('"x"', "&a x"),
    Token('"\\ud83d\\udca5"', '"\\ud83d\\udca5"'),
    Token('"\\ud800"', '"\\ud800"'),
    Token('"\\u0000"', '"\\0\\x00\\e\\N\\_\\L\\P"'),
)

DEPTHS = (2, 30, 101, 300, 1000, 1100)
#: deeper still: what a recursive decoder or merge overflows on, and what pure-Python YAML
#: parsing takes seconds for
HEAVY_DEPTHS = (1600, 5000, 20_000)
WIDTHS = (100, 2000)
HEAVY_WIDTHS = (60_000, 300_000)


def string(c: Chooser) -> Any:
    c = c.detail
    if c.heavy and chance(c, 50):
        return c.pick(("b" * 70_000, "é" * 400_000))
    return c.pick(STRINGS)


def key(c: Chooser) -> Any:
    c = c.detail
    return c.pick(KEYS)


def value(c: Chooser, budget: int = 2) -> Any:
    """One hostile value of any type; ``budget`` bounds how many containers it may open."""
    c = c.detail
    kind = c.number(0, 9 if budget > 0 else 5)
    if kind == 0:
        return c.pick((None, True, False))
    if kind in (1, 2):
        return string(c)
    if kind == 3:
        return c.pick(NUMBERS)
    if kind == 4:
        return c.pick(YAML_ONLY)
    if kind == 5:
        return Nest(c.pick(DEPTHS + HEAVY_DEPTHS if c.heavy else DEPTHS), mapping=chance(c, 2))
    if kind == 6:
        return [value(c, budget - 1) for _ in range(c.number(0, 3))]
    if kind == 7:
        return {key(c): value(c, budget - 1) for _ in range(c.number(0, 3))}
    if kind == 8:
        return Pairs([(k, value(c, budget - 1)) for k in [key(c)] * 2])
    # many of one thing: a wide list (cost per item, not depth)
    return [c.pick(("x", 1, {}, None))] * c.pick(WIDTHS + HEAVY_WIDTHS if c.heavy else WIDTHS)


def same_type(c: Chooser, v: Any) -> Any:
    """A hostile value of ``v``'s own JSON type (a string for a string, a list for a list)."""
    c = c.detail
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return c.pick(_INTS)
    if isinstance(v, float):
        return c.pick((-0.0, 1e308, 0.1, float(2**63)))
    if isinstance(v, str):
        return string(c)
    if isinstance(v, list):
        if v and chance(c, 2):
            return v + [c.pick(v)] * c.pick((1, 1, 2, 500))
        return c.pick(([], v * 2, v[:1]))
    if isinstance(v, dict):
        out = dict(v)
        out[key(c)] = value(c, 1) if chance(c, 2) else string(c)
        return c.pick(({}, out))
    return value(c)


# ------------------------------------------------------------------------------------- JSON
def _json_str(s: str, ascii_only: bool) -> str:
    return json.dumps(s, ensure_ascii=ascii_only)


def _json_scalar(v: Any, ascii_only: bool) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, str):
        return _json_str(v, ascii_only)
    if isinstance(v, Token):
        return v.json
    if isinstance(v, Nest):
        if v.mapping:
            return '{"a":' * v.depth + "1" + "}" * v.depth
        return "[" * v.depth + "1" + "]" * v.depth
    return _json_str(repr(v), ascii_only)


def to_json(doc: Any, ascii_only: bool = True) -> bytes:
    """``doc`` as JSON text; with ``ascii_only=False`` strings go out raw (lone surrogates as
    invalid UTF-8)."""
    out: list[str] = []
    _write(doc, out, ascii_only, yaml=False)
    return "".join(out).encode("utf-8", "surrogatepass")


def to_yaml(doc: Any) -> bytes:
    """``doc`` as a YAML flow document (YAML tokens spelled the YAML way)."""
    out: list[str] = []
    _write(doc, out, True, yaml=True)
    return "".join(out).encode("utf-8", "surrogatepass")


def _items(v: Any) -> Iterator[tuple[Any, Any]]:
    return iter(v) if isinstance(v, Pairs) else iter(v.items())


def _write(doc: Any, out: list[str], ascii_only: bool, *, yaml: bool) -> None:
    # An explicit stack: seeds are shallow, but a hostile value may be a wide list.
    stack: list[Any] = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, _Lit):
            out.append(v.text)
        elif isinstance(v, dict | Pairs):
            parts: list[Any] = [_Lit("{")]
            for i, (k, item) in enumerate(_items(v)):
                if i:
                    parts.append(_Lit(", " if yaml else ","))
                parts.append(_Lit(_key(k, ascii_only, yaml) + (": " if yaml else ":")))
                parts.append(item)
            parts.append(_Lit("}"))
            stack.extend(reversed(parts))
        elif isinstance(v, list | tuple):
            parts = [_Lit("[")]
            for i, item in enumerate(v):
                if i:
                    parts.append(_Lit(", " if yaml else ","))
                parts.append(item)
            parts.append(_Lit("]"))
            stack.extend(reversed(parts))
        elif yaml and isinstance(v, Token):
            out.append(v.yaml)
        elif yaml and isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            out.append(".nan" if math.isnan(v) else (".inf" if v > 0 else "-.inf"))
        else:
            out.append(_json_scalar(v, ascii_only))


@dataclass(frozen=True)
class _Lit:
    text: str


def _key(k: Any, ascii_only: bool, yaml: bool) -> str:
    if isinstance(k, Token):
        return k.yaml if yaml else k.json
    return _json_str(str(k), ascii_only)


# ------------------------------------------------------------------------------------ bytes
def _varint(n: int) -> bytes:
    n &= (1 << 70) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes | int) -> bytes:
    head = _varint((number << 3) | wire)
    if wire == 0:
        assert isinstance(payload, int)
        return head + _varint(payload)
    assert isinstance(payload, bytes)
    if wire == 2:
        return head + _varint(len(payload)) + payload
    return head + payload


def _proto_string(c: Chooser) -> bytes:
    s = c.pick(STRINGS[:30])
    raw = s.encode("utf-8", "surrogatepass")
    return c.pick((raw, b"\xff\xfe", b"\xc3", raw[:1]))


def proto_message(c: Chooser, budget: int = 3) -> bytes:
    """Random protobuf fields: any number and wire type, varints of every size, lengths that
    lie, nested messages, strings that are not UTF-8."""
    out = bytearray()
    for _ in range(c.number(0, 5)):
        number = c.pick((1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 2**29 - 1, 0))
        wire = c.pick((2, 0, 1, 5, 3, 4, 6, 7))
        if wire == 0:
            out += _field(number, 0, c.pick((0, 1, 2**31, 2**32 + 5, 2**63, 2**64 - 1, 2**70 - 1)))
        elif wire == 2:
            payload = proto_message(c, budget - 1) if budget > 0 and chance(c, 2) else _proto_string(c)
            if chance(c, 6):  # a length longer than what follows
                out += _varint((number << 3) | 2) + _varint(len(payload) + c.pick((1, 1000, 2**40)))
                out += payload
            else:
                out += _field(number, 2, payload)
        elif wire == 1:
            out += _field(number, 1, b"\xff" * c.pick((8, 3)))
        elif wire == 5:
            out += _field(number, 5, b"\x01" * c.pick((4, 1)))
        else:
            out += _varint((number << 3) | wire)
    if chance(c, 8):
        out += b"\x80" * c.pick((1, 11))  # a varint that never ends
    return bytes(out)


#: (apiVersion, kind) pairs of the envelope; the decoder has messages for most of them
PROTO_KINDS = (
    ("v1", "ConfigMap"),
    ("v1", "Pod"),
    ("v1", "Secret"),
    ("v1", "Namespace"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("batch/v1", "Job"),
    ("v1", "DeleteOptions"),
    ("meta.k8s.io/v1", "DeleteOptions"),
    ("v1", "Nope"),
    ("", ""),
)


def protobuf_body(c: Chooser, api_version: str, kind: str) -> bytes:
    """A ``k8s\\x00`` envelope (kube's runtime.Unknown) around a hostile raw message."""
    c = c.detail
    if chance(c, 2):
        api_version, kind = c.pick(PROTO_KINDS)
    type_meta = _field(1, 2, api_version.encode()) + _field(2, 2, kind.encode())
    if chance(c, 5):
        type_meta = proto_message(c, 1)
    envelope = _field(1, 2, type_meta) + _field(2, 2, proto_message(c))
    if chance(c, 6):
        envelope += _field(3, 2, c.pick((b"gzip", b"", b"\xff")))
    if chance(c, 6):
        envelope += _field(
            4, 2, c.pick((b"application/json", b"application/vnd.kubernetes.protobuf", b"\x00"))
        )
    prefix = c.pick((b"k8s\x00", b"k8s\x00", b"k8s", b"", b"k8s\x01"))
    return prefix + envelope


def cbor_body(c: Chooser) -> bytes:
    """Bytes sent as ``application/apply-patch+cbor`` (gangplane does not decode CBOR)."""
    c = c.detail
    return c.pick((b"\xa1\x61a\x01", b"\xd9\xd9\xf7\xa0", b"\xff", b"", b"\x9f" * 100))


def garbage(c: Chooser) -> bytes:
    """Bodies no parser should accept, or accept in only one reading."""
    c = c.detail
    return c.pick(
        (
            b"{",
            b"}",
            b"{}{}",
            b'{"a":1,}',
            b"[1,]",
            b"\xef\xbb\xbf{}",
            b"\xff\xfe{\x00}\x00",
            b"\x00",
            b"   ",
            b"null",
            b"0",
            b'""',
            b"{'a': 1}",
            b'{"a":"\\x41"}',
            b'{"a":"\\u12"}',
            b'{"a":"\xc3\x28"}',
            b'{"a" 1}',
            b"---\n---\n",
            b"a: 1\n---\nb: 2\n",
            b"a: [1, 2\n",
            b"\t- a\n",
            b"%YAML 9.9\n---\na: 1\n",
            b"%TAG ! tag:x,2000:\n---\n!y a\n",
            base64.b64encode(b'{"kind":"ConfigMap"}'),
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}' + b" " * 10 + b"x",
        )
    )
