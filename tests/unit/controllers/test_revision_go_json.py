"""``revisionhash.go_json`` writes exactly the bytes of ``history.raw_data`` (Go's ``json.Marshal``
of a decoded map), the orjson path and the general path alike.

Randomized: nested dicts and lists of strings drawn from the control characters, the
HTML-escaped ones, U+2028/U+2029, non-BMP characters and lone surrogates, with ints at the edges
of orjson's range, floats, bools, None, tuples and non-str keys.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from controllers import history
from controllers.revisionhash import _orjson_exact, go_json

_CHARS = [chr(i) for i in range(0, 0x80)] + [
    "\u2028",
    "\u2029",
    "\u00e9",
    "\uffff",
    "\ud800",  # a lone surrogate: orjson refuses it
    "\U0001f600",
    "<",
    ">",
    "&",
]
_INTS = [0, 1, -1, 2**63 - 1, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**30]


def _text(rnd: random.Random) -> str:
    return "".join(rnd.choice(_CHARS) for _ in range(rnd.randint(0, 6)))


def _value(rnd: random.Random, depth: int) -> Any:
    roll = rnd.random()
    if depth > 3 or roll < 0.35:
        return _text(rnd)
    if roll < 0.45:
        return rnd.choice([*_INTS, True, False, None])
    if roll < 0.48:
        return rnd.choice([0.5, 1e16, 1e-7, 3.0])  # floats: the general path
    if roll < 0.5:
        return (_text(rnd),)  # a tuple: the general path
    if roll < 0.75:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    out: dict[Any, Any] = {_text(rnd): _value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))}
    if rnd.random() < 0.03:
        out[7] = "x"  # a non-str key: the general path
    return out


@pytest.mark.parametrize("seed", range(5))
def test_go_json_writes_the_bytes_raw_data_writes(seed: int) -> None:
    rnd = random.Random(seed)
    fast = 0
    for _ in range(3000):
        value = {"$patch": "replace", "metadata": _value(rnd, 0)}
        try:
            want = history.raw_data(value)
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)):
                go_json(value)
            continue
        assert go_json(value) == want
        fast += _orjson_exact(value)
    assert fast > 1000  # most values took the orjson path


def test_a_template_head_takes_the_orjson_path() -> None:
    head = {"$patch": "replace", "metadata": {"labels": {"app": "g<1>&", "x": "\u2028"}}}
    assert _orjson_exact(head)
    assert go_json(head) == history.raw_data(head)
