"""A StatefulSet revision's hash with the pod spec's share computed once per pod spec content.

A revision's name carries ``HashControllerRevision``: FNV-1 (32 bit) over the Go-JSON bytes of
its ``data`` (``{"spec":{"template":{"$patch":"replace","metadata":…,"spec":…}}}``, keys sorted)
and the collision count. In Python that byte loop cost 15–40 µs per set, the largest single piece
of the creating sync's own logic. Sets made from one manifest differ in their template's labels
(``app: <name>``), so the template as a whole is new for every set — but the pod spec, most of the
bytes and the *end* of them, is usually the same.

FNV-1's step ``h ← (h·p mod 2³²) xor b`` changes only the low byte by the xor, and the low byte of
the next state depends only on the low byte of this one (``p`` is odd: products mod 2⁸ see only
low bytes). So after a fixed byte string ``t`` of length ``k``, from any state ``h``::

    H_t(h) = h·pᵏ + C_t(h mod 256)   (mod 2³²)

where ``C_t`` is a table of 256 values: the sum of the xor corrections, each determined by the low
byte. :class:`RevisionHasher` computes ``C_t`` once per (pod spec content, collision count) — the
256 starting low bytes run through ``t`` side by side, as 64-bit lanes of one Python integer (≈ 1 ms
for a few hundred bytes; numpy took as long and its import would land in a sync) — and
per revision hashes only the bytes before the pod spec (the ``$patch`` marker and the template's
metadata: a few dozen bytes), then finishes with one multiply-add. The value is FNV-1's exactly,
not an approximation; ``tests/unit/controllers/test_revision_hash.py`` compares it with
:func:`controllers.history.hash_revision` over many templates.

The JSON of ``data`` is the JSON of its parts joined in sorted key order, so the head's bytes and
the tail's bytes are serialised apart (the HTML-safe escapes are per character). Anything of
another shape (a template key sorting after ``spec``, no pod spec, a ``data`` with other keys)
takes :func:`~controllers.history.hash_revision`. Tables are kept least recently used first, at
most ``capacity`` of them (1 KiB each plus the key).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import orjson

from controllers import history

_PRIME = 0x01000193
_MASK = 0xFFFFFFFF
#: pod spec contents (each with its collision counts) remembered
DEFAULT_CAPACITY = 256


class _Tail:
    """A pod spec's tail bytes (``,"spec":<pod spec>}}}`` then the collision count) and ``C_t``."""

    __slots__ = ("power", "table")

    def __init__(self, tail: bytes) -> None:
        self.power = pow(_PRIME, len(tail), 1 << 32)
        self.table = _correction_table(tail, self.power)

    def finish(self, h: int) -> int:
        """FNV-1 of ``head + tail`` given ``h``, the FNV-1 state after ``head``."""
        return (h * self.power + self.table[h & 0xFF]) & _MASK


#: 256 lanes of 64 bits in one int: a lane's state (< 2³²) times the prime (< 2²⁵) stays in its lane
_LANE = 64
_ONES = sum(1 << (_LANE * j) for j in range(256))
_LANE_MASKS = _ONES * _MASK
_START = sum(j << (_LANE * j) for j in range(256))


def _correction_table(tail: bytes, power: int) -> list[int]:
    """``C_t(j)`` for every low byte ``j``: the states ``0..255`` run through ``tail`` side by side,
    packed in one integer (one multiply, mask and xor per byte for all 256)."""
    x = _START
    spread: dict[int, int] = {}
    for b in tail:
        r = spread.get(b)
        if r is None:
            r = spread[b] = _ONES * b
        x = ((x * _PRIME) & _LANE_MASKS) ^ r
    return [(((x >> (_LANE * j)) & _MASK) - j * power) & _MASK for j in range(256)]


def _fnv1_from(h: int, data: bytes) -> int:
    """FNV-1 continued from state ``h`` over ``data``."""
    for b in data:
        h = ((h * _PRIME) & _MASK) ^ b
    return h


#: every StatefulSet revision's bytes start so (keys sorted: ``$patch`` first); FNV-1 state after it
_PREFIX = b'{"spec":{"template":{'
_PATCHED = b'"$patch":"replace"'
_PREFIX_STATE = _fnv1_from(0x811C9DC5, _PREFIX)
_PATCHED_STATE = _fnv1_from(_PREFIX_STATE, _PATCHED)


#: what ``history.raw_data`` writes in place of these characters (Go's HTML-safe escapes)
_GO_ESCAPES = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
_GO_ESCAPED = re.compile(b"|".join(re.escape(raw) for raw, _ in _GO_ESCAPES))


def _orjson_exact(value: Any) -> bool:
    """``value`` holds only what orjson writes byte for byte as ``json.dumps`` does: plain dicts
    with str keys, lists, str, bool, None and ints (no float: the two spell some floats
    differently; no tuple or other type ``json`` and orjson treat differently). An int beyond
    64 bits or a lone surrogate passes here: orjson refuses those with a TypeError."""
    t = type(value)
    if t is dict:
        for k, v in value.items():  # noqa: SIM110 - a loop, not all() over a generator: half the cost
            if type(k) is not str or not _orjson_exact(v):
                return False
        return True
    if t is str or t is bool or t is int or value is None:
        return True
    if t is list:
        for v in value:  # noqa: SIM110 - as above
            if not _orjson_exact(v):
                return False
        return True
    return False


def go_json(value: Any) -> bytes:
    """``history.raw_data(value)``, by orjson where that writes the same bytes (sorted keys, no
    spaces, the same escapes; what orjson refuses, a lone surrogate or a huge int, takes the
    general path), then the same HTML-safe replacements. A revision's template metadata is a
    few plain strings: this is several times cheaper than the ``json`` module's encoder."""
    if not _orjson_exact(value):
        return history.raw_data(value)
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return history.raw_data(value)
    if _GO_ESCAPED.search(out) is None:
        return out
    for raw, escaped in _GO_ESCAPES:
        out = out.replace(raw, escaped)
    return out


class RevisionHasher:
    """``HashControllerRevision`` for StatefulSet revision data, the pod spec's share memoized."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._tails: OrderedDict[tuple[bytes, int, bool], _Tail] = OrderedDict()
        #: hashes finished from a kept table / that built one / that took the general path
        self.hits = 0
        self.misses = 0
        self.general = 0

    def __len__(self) -> int:
        return len(self._tails)

    def hash(self, data: Any, collision_count: int) -> str:
        """The same string as ``history.hash_revision(data, collision_count)``."""
        template = _template_of(data)
        if template is None or any(k > "spec" for k in template):
            self.general += 1
            return history.hash_revision(data, collision_count)
        spec = template["spec"]
        head_members = {k: v for k, v in template.items() if k != "spec"}
        try:
            key = (orjson.dumps(spec, option=orjson.OPT_SORT_KEYS), collision_count, bool(head_members))
        except TypeError:  # not JSON values (never from an API server)
            self.general += 1
            return history.hash_revision(data, collision_count)
        tail = self._tails.get(key)
        if tail is None:
            self.misses += 1
            sep = b"," if head_members else b""
            tail_bytes = sep + b'"spec":' + history.raw_data(spec) + b"}}}" + str(collision_count).encode()
            tail = _Tail(tail_bytes)
            self._tails[key] = tail
            if len(self._tails) > self.capacity:
                self._tails.popitem(last=False)
        else:
            self.hits += 1
            self._tails.move_to_end(key)
        # _PREFIX, then the members before "spec" (sorted) without their braces: the state there
        members = go_json(head_members)[1:-1]
        if members.startswith(_PATCHED):
            h = _fnv1_from(_PATCHED_STATE, members[len(_PATCHED) :])
        else:
            h = _fnv1_from(_PREFIX_STATE, members)
        return history.safe_encode(str(tail.finish(h)))


def _template_of(data: Any) -> dict[str, Any] | None:
    """``data["spec"]["template"]`` when ``data`` is exactly that shape with a pod spec, else None."""
    if not isinstance(data, dict) or len(data) != 1:
        return None
    outer = data.get("spec")
    if not isinstance(outer, dict) or len(outer) != 1:
        return None
    template = outer.get("template")
    if not isinstance(template, dict) or "spec" not in template:
        return None
    return template
