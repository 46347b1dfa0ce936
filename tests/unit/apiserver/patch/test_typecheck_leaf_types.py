"""The type check's shortcut for a property of its usual leaf type gives what the general walk
gives: the same 400 message (first mismatch and its path) or none, and the same null filling,
on random bodies of several kinds with values of every JSON type put anywhere."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import apiserver.patch.typecheck as tc
from apiserver import errors
from bench.micro.create_cpu import event, pod, workload

KINDS = {
    "pod": (("", "v1", "Pod"), pod),
    "event": (("", "v1", "Event"), event),
    "workload": (("scheduling.k8s.io", "v1beta1", "Workload"), workload),
}
VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    7,
    -1,
    1.0,
    2.5,
    "",
    "x",
    "3",
    [],
    [1],
    ["a"],
    {},
    {"a": 1},
    [None],
]


def _places(v: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _places(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _places(x, (*path, i))
    return out


def _put(v: Any, path: tuple[Any, ...], new: Any) -> None:
    for step in path[:-1]:
        v = v[step]
    v[path[-1]] = new


def _outcome(gvk: tuple[str, str, str], body: Any) -> tuple[str, Any]:
    try:
        tc.check_kind_types(*gvk, body)
    except errors.StatusError as e:
        return e.message, body
    return "", body


def _general(gvk: tuple[str, str, str], body: Any) -> tuple[str, Any]:
    """The walk with no shortcut (every compiled object shape's table emptied meanwhile)."""
    kept = {id(s): (s, s.leaf_types) for s in tc._cache.values()}
    try:
        for s, _ in kept.values():
            s.leaf_types = {}
        return _outcome(gvk, body)
    finally:
        for s, lt in kept.values():
            s.leaf_types = lt


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("seed", range(3))
def test_shortcut_equals_the_general_walk(kind: str, seed: int) -> None:
    rnd = random.Random(seed)
    gvk, make = KINDS[kind]
    mismatches = 0
    for i in range(400):
        body = make(i)
        for _ in range(rnd.randint(0, 3)):
            places = _places(body)
            _put(body, rnd.choice(places), copy.deepcopy(rnd.choice(VALUES)))
        if rnd.random() < 0.2 and isinstance(body.get("spec"), dict):
            body["spec"]["unknownField"] = copy.deepcopy(rnd.choice(VALUES))
        fast = _outcome(gvk, copy.deepcopy(body))
        general = _general(gvk, copy.deepcopy(body))
        assert fast == general, body
        mismatches += bool(fast[0])
    assert 40 < mismatches < 400  # both valid and invalid bodies were checked
