"""A create's field set remembered by the object's shape (:mod:`apiserver.patch.createmem`).

The memo is only sound if the field set really is a function of the shape: these tests make
random objects, rewrite the scalars the shape blanks, and compare the memoized answer with a
plain structured-merge-diff walk (the reference of ``test_tracker``) of every variant.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

import apiserver.patch.apply as apply_mod
from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch.apply import (
    STRIP_FIELDS,
    ManagerId,
    VersionedSet,
    _empty_object,
    default_reset_fields,
    encode_managed_fields,
    updated_managed_fields,
)
from apiserver.patch.createmem import shape_key
from apiserver.patch.fieldpath import FieldSet

from .test_tracker import _mutate, _random_pod, pod, reference

POD = schema.for_gvk("", "v1", "Pod")
EVENT = schema.for_gvk("", "v1", "Event")
T0 = "2030-01-01T00:00:00Z"
SCALARS = ["a", "b", "", 0, 7, -1, True, False, None, 2.5, -0.0]


def _reference_entries(obj: Obj, node: Any, subresource: str = "") -> list[Obj]:
    """What a create records, computed by the unoptimized reference walk."""
    ignored = default_reset_fields(subresource)
    want = reference(_empty_object(node), obj, node, ignored)
    taken = (want["added"] | want["modified"]) - want["removed"] - STRIP_FIELDS
    if not taken:
        return []
    mid = ManagerId("m", "Update", "v1", subresource)
    return encode_managed_fields({mid: VersionedSet(taken, "v1", False, T0)})


def _reblank(rnd: random.Random, v: Any) -> Any:
    """``v`` with the scalars the shape blanks (plain values of maps not inside a list)
    replaced by random scalars of any type; lists untouched."""
    if not isinstance(v, dict):
        return v
    out: dict[str, Any] = {}
    for k, x in v.items():
        if type(x) in (str, int, float, bool, type(None)):
            out[k] = rnd.choice(SCALARS)
        elif isinstance(x, dict):
            out[k] = _reblank(rnd, x)
        else:
            out[k] = x
    return out


@pytest.mark.parametrize("seed", range(4))
def test_objects_of_one_shape_record_the_same_fields_as_a_full_walk(seed: int) -> None:
    rnd = random.Random(seed)
    apply_mod._CREATED.clear()
    for _ in range(120):
        a = _mutate(rnd, _random_pod(rnd))
        if not isinstance(a.get("metadata"), dict):
            continue  # no managed fields at all (the tracker leaves such an object alone)
        variants = [a] + [_reblank(rnd, a) for _ in range(3)]
        for subresource in ("", "status"):
            for obj in variants:
                assert shape_key(obj) == shape_key(a)
                got = updated_managed_fields(None, obj, "m", POD, T0, "v1", subresource=subresource)
                assert got == _reference_entries(obj, POD, subresource)
    assert len(apply_mod._CREATED._table) > 50  # most shapes were remembered, and answered the variants


def test_lists_and_deep_values_are_part_of_the_shape() -> None:
    base = pod()
    assert shape_key(base) is not None
    other = copy.deepcopy(base)
    other["metadata"]["finalizers"] = ["x/y"]  # list items are named by their values
    assert shape_key(base) != shape_key(other)
    deep = copy.deepcopy(base)
    deep["spec"]["containers"][0]["name"] = "other"  # inside a list: a different item
    assert shape_key(base) != shape_key(deep)
    typed = copy.deepcopy(base)
    typed["metadata"]["finalizers"] = [1]
    typed2 = copy.deepcopy(base)
    typed2["metadata"]["finalizers"] = [True]  # true and 1 name different items
    assert shape_key(typed) != shape_key(typed2)
    floaty = copy.deepcopy(base)
    floaty["metadata"]["finalizers"] = [1.0]  # and 1.0 another
    assert shape_key(floaty) not in (shape_key(typed), None)


@pytest.mark.parametrize("odd", [None, float("nan"), float("inf")])
def test_a_null_or_a_non_finite_number_in_a_list_keeps_the_object_out_of_the_memo(odd: Any) -> None:
    # orjson writes NaN and infinities as null, which would confuse them with null (and a NaN in
    # a list item's key fails the walk where null does not)
    obj = pod()
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": odd}]
    assert shape_key(obj) is None
    blanked = pod()
    blanked["spec"]["hostname"] = odd  # a blanked scalar: any value is the same shape
    assert shape_key(blanked) is not None


def test_events_that_differ_in_scalars_share_one_entry_and_keep_their_fields() -> None:
    apply_mod._CREATED.clear()
    first = None
    for i in range(50):
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"p{i}.{i:x}", "namespace": "default", "uid": f"u-{i}"},
            "involvedObject": {"kind": "Pod", "name": f"p{i}", "uid": f"uid-{i}"},
            "source": {"component": "default-scheduler", "host": f"n{i}"},
            "reason": "Scheduled",
            "message": f"Successfully assigned default/p{i} to n{i}",
            "count": 1,
        }
        got = updated_managed_fields(None, ev, "m", EVENT, T0, "v1")
        assert got == _reference_entries(ev, EVENT)
        first = first or got
        assert got == first
    assert len(apply_mod._CREATED._table) == 1


def test_a_value_orjson_refuses_is_walked_every_time() -> None:
    class Name(str):
        pass

    obj = _random_pod(random.Random(2))
    obj["metadata"]["name"] = Name("p")
    assert shape_key(obj) is None
    apply_mod._CREATED.clear()
    got = updated_managed_fields(None, obj, "m", POD, T0, "v1")
    assert got == _reference_entries(obj, POD)
    assert not apply_mod._CREATED._table


def test_a_create_carrying_managed_fields_takes_the_general_path() -> None:
    obj = _random_pod(random.Random(3))
    owned = FieldSet.from_fields_v1({"f:metadata": {"f:name": {}}})
    obj["metadata"]["managedFields"] = encode_managed_fields(
        {ManagerId("other", "Update", "v1"): VersionedSet(owned, "v1", False, T0)}
    )
    got = updated_managed_fields(None, obj, "m", POD, T0, "v1")
    assert [e["manager"] for e in got] == ["m"]  # the creator takes what it wrote


def _owner(rnd: random.Random) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": f"s{rnd.randint(0, 9)}"}
    if rnd.random() < 0.9:
        ref["uid"] = rnd.choice(["u-1", "u-2", "u-3", f"u-{rnd.random()}"])
    if rnd.random() < 0.7:
        ref["controller"] = True
    if rnd.random() < 0.5:
        ref["blockOwnerDeletion"] = rnd.choice([True, False])
    return ref


@pytest.mark.parametrize("seed", range(3))
def test_owner_references_are_joined_into_the_entry_exactly_where_the_full_encoding_puts_them(
    seed: int,
) -> None:
    rnd = random.Random(seed)
    apply_mod._CREATED.clear()
    for _ in range(150):
        obj = _random_pod(rnd)
        md = obj["metadata"]
        md["ownerReferences"] = [_owner(rnd) for _ in range(rnd.randint(1, 3))]
        if rnd.random() < 0.3:
            for k in ("labels", "finalizers"):
                md.pop(k, None)  # f:ownerReferences may be the first or the only metadata field
        if rnd.random() < 0.1:
            md["annotations"] = {"z": "1"}
        for _ in range(2):  # the second create of the shape is answered from memory
            got = updated_managed_fields(None, obj, "m", POD, T0, "v1")
            want = _reference_entries(obj, POD)
            assert orjson.dumps(got) == orjson.dumps(want)  # key order included


def test_joining_never_modifies_the_shared_tree_of_the_shape() -> None:
    apply_mod._CREATED.clear()
    a = pod("a")
    a["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1"}]
    b = copy.deepcopy(a)
    b["metadata"]["ownerReferences"][0]["uid"] = "2"
    trees: dict[Any, Any] = {}

    def shared(fs: FieldSet) -> Any:  # one tree per field set, like the tracker's canonical trees
        return trees.setdefault(fs, fs.to_fields_v1())

    first = updated_managed_fields(None, a, "m", POD, T0, "v1", fields_v1=shared)
    second = updated_managed_fields(None, b, "m", POD, T0, "v1", fields_v1=shared)
    assert len(trees) == 1
    (tree,) = trees.values()
    assert "f:ownerReferences" not in tree["f:metadata"]
    assert 'k:{"uid":"1"}' in first[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
    assert 'k:{"uid":"2"}' in second[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]
    assert 'k:{"uid":"1"}' not in second[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]


def test_a_deeply_nested_object_is_simply_not_remembered() -> None:
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(5000):
        cur["x"] = {}
        cur = cur["x"]
    obj = pod()
    obj["unknown"] = deep
    assert shape_key(obj) is None
