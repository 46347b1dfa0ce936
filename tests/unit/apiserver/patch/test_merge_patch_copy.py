"""A merge patch's values are copied into the result as ``copy.deepcopy`` copies them."""

from __future__ import annotations

import copy
import datetime
import random
from typing import Any

import pytest

from apiserver.patch.jsonpatch_merge import _copy_value, merge_patch


def _random_value(rnd: random.Random, depth: int = 0) -> Any:
    r = rnd.random()
    if depth > 4 or r < 0.4:
        return rnd.choice(["s", "", 0, -1, 2**70, 1.5, -0.0, float("nan"), True, False, None])
    if r < 0.7:
        return {rnd.choice("abcd"): _random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}
    return [_random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]


def _same(a: Any, b: Any) -> bool:
    """Equal with exact types, NaN equal to NaN, and no container shared."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a is not b and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return a is not b and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


def _reference_merge(target: Any, patch: Any) -> Any:
    """RFC 7386 as it was written with ``copy.deepcopy`` of every replacing value."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            out[k] = _reference_merge(out.get(k), v)
        else:
            out[k] = copy.deepcopy(v)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_copy_of_a_value_and_the_merge_are_what_deepcopy_makes(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(300):
        v = _random_value(rnd)
        copied = _copy_value(v)
        assert _same(copied, copy.deepcopy(v))
        target = _random_value(rnd) if rnd.random() < 0.5 else {"a": {"b": 1}, "e": [1]}
        patch = {"a": v, "c": {"d": v, "e": None}, "f": [v]}
        got = merge_patch(copy.deepcopy(target), patch)
        want = _reference_merge(copy.deepcopy(target), patch)
        assert _same(got, want)


def test_aliases_and_other_values_go_to_deepcopy_and_keep_their_shape() -> None:
    shared: dict[str, Any] = {"x": [1]}
    v = {"a": shared, "b": shared, "t": 1}
    out = _copy_value(v)
    assert out == v and out["a"] is out["b"] and out["a"] is not shared  # deepcopy's aliasing
    when = datetime.datetime(2026, 1, 1)
    w = {"at": when, "s": {1, 2}}
    out = _copy_value(w)
    assert out == w and out["s"] is not w["s"]
    deep: Any = 0
    for _ in range(5000):  # no recursion: nesting cannot exhaust the stack
        deep = [deep]
    copied = _copy_value(deep)
    assert copied is not deep
