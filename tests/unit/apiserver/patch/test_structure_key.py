"""The structure key (:mod:`apiserver.patch.structkey`) stands for exactly the create shape's text.

The entry templates answer a create from what was learnt for an object of equal key; that is
only sound if an equal key means an equal shape (:func:`apiserver.patch.createmem.shape_key`,
whose field set :mod:`.createmem` and the templates rest on) for any object that was
:func:`rememberable`. These tests make random objects and variants of them (scalars rewritten
with any type, lists that write alike or nearly alike: ``1``/``1.0``/``true``, NaN/``null``,
tuples, subclasses of ``str``, keys moved or added) and check, per key, that every object
sharing a rememberable object's key has that object's shape text; and that objects of one
shape share one key (so the key is not finer than the shape: Events of one writer hit).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.patch.createmem import blanked, key_of_blanked, shape_key
from apiserver.patch.structkey import Key, kept, listed_key, owned_key, rememberable, structure_key

from .test_create_entry_template import _random_event
from .test_create_fields_memo import _reblank
from .test_tracker import _maps_in, _mutate, _random_pod


class _Str(str):
    pass


#: Values that write alike, or nearly, in a list or in a map.
_ODD: list[Any] = [
    [1],
    [1.0],
    [True],
    [None],
    [float("nan")],
    [float("inf")],
    (1,),
    (None,),
    _Str("a"),
    [_Str("a")],
    ["a"],
    [{"a": 1}],
    [{"a": "1"}],
    [],
    {},
    {"x": 1},
    {"x": [1]},
    {"x": (1,)},
    "null",
    ["null"],
    2**70,
    float("nan"),
]


def _odd(rnd: random.Random, obj: Obj) -> Obj:
    """``obj`` (copied) with one to three of its maps given an odd value, a key moved to the
    end, or a key dropped."""
    out = copy.deepcopy(obj)
    maps: list[dict[str, Any]] = []
    _maps_in(out, maps)
    for _ in range(rnd.randint(1, 3)):
        m = rnd.choice(maps)
        roll = rnd.random()
        if roll < 0.6 or not m:
            m[rnd.choice([*m, "extra", "n"]) if m else "extra"] = copy.deepcopy(rnd.choice(_ODD))
        elif roll < 0.8:
            k = rnd.choice(list(m))
            m[k] = m.pop(k)  # moved to the end: a shape of its own
        else:
            del m[rnd.choice(list(m))]
    return out


def _variants(rnd: random.Random, base: Obj) -> list[Obj]:
    out = [base]
    for _ in range(6):
        v = _reblank(rnd, base) if rnd.random() < 0.5 else _odd(rnd, base)
        if rnd.random() < 0.3:
            v = _odd(rnd, v)
        out.append(v)
    return out


def _objects(rnd: random.Random, n: int) -> list[Obj]:
    out: list[Obj] = []
    for i in range(n):
        base = _random_event(rnd, i) if rnd.random() < 0.4 else _mutate(rnd, _random_pod(rnd))
        out.extend(_variants(rnd, base))
    return out


def _check(keyed: list[tuple[Key | None, bool, bytes | None]]) -> int:
    """Every object with a rememberable object's key has its shape text; objects of one shape
    text have one key. Returns how many objects shared a rememberable object's key."""
    learnt: dict[Key, bytes] = {}
    for key, ok, text in keyed:
        if key is not None and ok:
            assert text is not None
            assert learnt.setdefault(key, text) == text
    shared = 0
    by_text: dict[bytes, Key | None] = {}
    for key, _, text in keyed:
        if key is not None and key in learnt:
            assert text == learnt[key]
            shared += 1
        if text is not None and key is not None and learnt.get(key) == text:
            assert by_text.setdefault(text, key) == key
    return shared


@pytest.mark.parametrize("seed", range(4))
def test_objects_of_one_structure_key_have_one_shape(seed: int) -> None:
    rnd = random.Random(seed)
    keyed: list[tuple[Key | None, bool, bytes | None]] = []
    for obj in _objects(rnd, 150):
        key = structure_key(obj)
        keyed.append((key, key is not None and rememberable(obj, key), shape_key(obj)))
    assert _check(keyed) > 300


def _refs(rnd: random.Random) -> list[tuple[str, dict[str, Any]]]:
    refs = []
    for j in range(rnd.randint(1, 3)):
        ref: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": f"s{j}",
            "uid": f"u{j}",
        }
        for k in ("controller", "blockOwnerDeletion"):
            if rnd.random() < 0.5:
                ref[k] = rnd.choice([True, False])
        if rnd.random() < 0.2:
            ref[rnd.choice(list(ref))] = copy.deepcopy(rnd.choice(_ODD))
        refs.append((f"u{j}", ref))
    return refs


def _owned_text(obj: Obj, refs: list[tuple[str, dict[str, Any]]]) -> bytes | None:
    """The owned shape's text as before session 18 (the references' scalars blanked too: an
    item's fields are owned by name, whatever their values)."""
    shape = blanked(obj)
    if shape is None:
        return None
    shape["metadata"]["ownerReferences"] = [blanked(ref) for _, ref in refs]
    return key_of_blanked(shape)


@pytest.mark.parametrize("seed", range(4))
def test_owned_keys_stand_for_the_owned_shape(seed: int) -> None:
    rnd = random.Random(seed)
    keyed: list[tuple[Key | None, bool, bytes | None]] = []
    for obj in _objects(rnd, 100):
        if type(obj.get("metadata")) is not dict:
            continue
        refs = _refs(rnd)
        obj["metadata"]["ownerReferences"] = [ref for _, ref in refs]
        key = owned_key(obj, refs)
        ok = key is not None and rememberable(obj, key)
        keyed.append((key, ok, _owned_text(obj, refs)))
    assert _check(keyed) > 150


def test_listed_keys_are_apart_from_verbatim_ones_and_keep_the_rest() -> None:
    def workload(name: str, extra: Any = 1) -> Obj:
        return {
            "metadata": {"name": "w", "ownerReferences": [{"uid": "u"}]},
            "spec": {"podGroupTemplates": [{"name": name, "x": extra}], "other": 1},
        }

    lists = [("podGroupTemplates", "name", "a")]
    a, b = workload("a"), workload("b")
    refs_a = [("u", a["metadata"]["ownerReferences"][0])]
    key_a, key_b = owned_key(a, refs_a), owned_key(b, refs_a)
    assert key_a is not None and key_b is not None and key_a != key_b
    assert listed_key(key_a, a, lists) == listed_key(key_b, b, lists)
    blank = workload("")
    key_blank = owned_key(blank, refs_a)
    assert key_blank is not None
    assert listed_key(key_a, a, lists) != key_blank  # "" verbatim is not the blanked template
    other = workload("a", 1.0)  # the item's other fields stay verbatim
    key_other = owned_key(other, refs_a)
    assert key_other is not None
    assert listed_key(key_other, other, lists) != listed_key(key_a, a, lists)


def test_odd_values_are_never_rememberable() -> None:
    for odd in ((1,), _Str("a"), [float("nan")], [None], [_Str("a")], {"x": (1,)}):
        obj = {"metadata": {"name": "n"}, "spec": {"v": odd}}
        key = structure_key(obj)
        assert key is None or not rememberable(obj, key), odd
    # objects that differ only in one such value, at the same place: never one key learnt
    keyed: list[tuple[Key | None, bool, bytes | None]] = []
    for odd in _ODD:
        obj = {"metadata": {"name": "n"}, "spec": {"v": copy.deepcopy(odd), "w": 1}}
        key = structure_key(obj)
        keyed.append((key, key is not None and rememberable(obj, key), shape_key(obj)))
    _check(keyed)


def test_kept_keys_are_equal_copies() -> None:
    obj = {"metadata": {"name": "n"}, "spec": {"l": [1, "a"], "m": {"k": ["x"]}}}
    key = structure_key(obj)
    assert key is not None
    copy_ = kept(key)
    assert copy_ == key and hash(copy_) == hash(key)


def test_a_key_of_a_str_subclass_is_answered_as_the_general_path_answers_it() -> None:
    from apiserver.openapi import schema
    from apiserver.patch.apply import updated_managed_fields
    from apiserver.patch.createentry import CreatedEntryTemplates
    from apiserver.patch.sharedtrees import shared_fields_v1

    pod = schema.for_gvk("", "v1", "Pod")

    def make(key: str) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {key: "x"}}}

    def general(obj: Obj) -> Any:
        return updated_managed_fields(None, obj, "m", pod, "t", "v1", fields_v1=shared_fields_v1)

    templates = CreatedEntryTemplates()
    learnt = make("app")
    templates.entries(learnt, pod, "m", "v1", "t", lambda: general(learnt))
    odd = make(_Str("app"))
    got = templates.entries(odd, pod, "m", "v1", "t", lambda: pytest.fail("a hit was expected"))
    assert orjson.dumps(got) == orjson.dumps(general(make(_Str("app"))))
