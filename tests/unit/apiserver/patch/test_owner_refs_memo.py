"""The ``f:ownerReferences`` subtree of a create remembered by the references (:mod:`apiserver.patch.ownerrefs`).

The objects an owner creates carry the same references, so their subtree is encoded once. Here
random references (types, duplicates, missing uids, odd values) are created over and over and
every entry, stored (shared trees) or dry run (fresh trees), must equal the unoptimized
reference encoding byte for byte, key order included.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

import apiserver.patch.apply as apply_mod
from apiserver.openapi import schema
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import FieldSet

from .test_create_fields_memo import _reference_entries
from .test_tracker import pod

POD = schema.for_gvk("", "v1", "Pod")
T0 = "2030-01-01T00:00:00Z"


def _shared(fs: FieldSet) -> Any:
    return fs.to_fields_v1()


def _ref(rnd: random.Random) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": f"s{rnd.randint(0, 3)}"}
    r = rnd.random()
    if r < 0.8:
        ref["uid"] = f"u-{rnd.randint(0, 5)}"
    elif r < 0.85:
        ref["uid"] = rnd.choice([1, True, 1.0, None])  # type-exact keys; null is never remembered
    if rnd.random() < 0.7:
        ref["controller"] = rnd.choice([True, False, 1])
    if rnd.random() < 0.3:
        ref["blockOwnerDeletion"] = True
    return ref


@pytest.mark.parametrize("seed", range(4))
def test_remembered_subtrees_equal_the_full_encoding_for_stored_and_dry_run_creates(seed: int) -> None:
    rnd = random.Random(seed)
    apply_mod._OWNER_REFS.clear()
    pool = [[_ref(rnd) for _ in range(rnd.randint(1, 3))] for _ in range(12)]
    for i in range(300):
        obj = pod(f"p{i}")
        obj["metadata"]["ownerReferences"] = orjson.loads(orjson.dumps(rnd.choice(pool)))
        want = orjson.dumps(_reference_entries(obj, POD))
        for stored in rnd.sample([True, False], 2):  # either may meet the references first
            got = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared if stored else None)
            assert orjson.dumps(got) == want
            if not stored:  # a dry run's response is its client's: changing it changes nothing kept
                got[0]["fieldsV1"]["f:metadata"].setdefault("f:ownerReferences", {})["f:x"] = {}
    assert 0 < len(apply_mod._OWNER_REFS._table) <= len(pool)


def test_objects_of_one_owner_share_the_subtree_and_a_dry_run_gets_its_own() -> None:
    apply_mod._OWNER_REFS.clear()
    refs = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w", "uid": "u-1", "controller": True}]

    def created(name: str, stored: bool) -> Any:
        obj = pod(name)
        obj["metadata"]["ownerReferences"] = [dict(r) for r in refs]
        entries = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared if stored else None)
        return entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]

    created("p0", True)  # the first walks and remembers
    a, b = created("p1", True), created("p2", True)
    assert a is b  # stored objects are never modified: one tree for all
    dry = created("p3", False)
    assert dry == a and dry is not a
    dry['k:{"uid":"u-1"}']["f:extra"] = {}  # a dry run's response is its client's to modify
    assert "f:extra" not in created("p4", True)['k:{"uid":"u-1"}']
    assert "f:extra" not in created("p5", False)['k:{"uid":"u-1"}']


def test_references_orjson_refuses_are_walked_every_time() -> None:
    class Uid(str):
        pass

    apply_mod._OWNER_REFS.clear()
    obj = pod()
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": Uid("1")}]
    got = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared)
    assert orjson.dumps(got) == orjson.dumps(_reference_entries(obj, POD))
    assert not apply_mod._OWNER_REFS._table
