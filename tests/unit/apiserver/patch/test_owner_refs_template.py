"""A new owner's first object: the ``f:ownerReferences`` subtree of a single reference made
from the template of the reference without its uid (:mod:`apiserver.patch.ownerrefs`).

Every owner here is new (a uid never seen), so the exact-text table never answers: the subtree
comes from the template or from the walk, and must equal the unoptimized reference encoding
byte for byte (key order included), stored or dry run, including uids the template must not
write itself (escaped by the Go JSON encoding) and references of other types.
"""

from __future__ import annotations

import itertools
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
_counter = itertools.count()

ODD_UIDS = ['a"b', "a\\b", "<x>", "a&b", "é", "\u2028", "a b", "", "x" * 300, "a/b", "a\tb"]


def _shared(fs: FieldSet) -> Any:
    return fs.to_fields_v1()


def _uid(rnd: random.Random) -> Any:
    r = rnd.random()
    if r < 0.75:
        return f"{next(_counter):08x}-0000-4000-8000-{rnd.getrandbits(48):012x}"
    if r < 0.9:
        return rnd.choice(ODD_UIDS) + str(next(_counter))
    return rnd.choice([7, True, 1.5, ["a"], {"a": 1}])


def _ref(rnd: random.Random) -> dict[str, Any]:
    ref: dict[str, Any] = {
        "apiVersion": rnd.choice(["apps/v1", "batch/v1", "v1"]),
        "kind": rnd.choice(["StatefulSet", "Job", 3]),
        "name": rnd.choice([f"s{rnd.randint(0, 999)}", "", 5, True]),
    }
    if rnd.random() < 0.95:
        ref["uid"] = _uid(rnd)
    if rnd.random() < 0.7:
        ref["controller"] = rnd.choice([True, False, 1, "yes"])
    if rnd.random() < 0.3:
        ref["blockOwnerDeletion"] = True
    if rnd.random() < 0.1:
        ref["extra"] = rnd.choice([{"a": "b"}, [1, 2], "x"])  # unknown to the schema
    return ref


@pytest.mark.parametrize("seed", range(4))
def test_new_owners_subtrees_equal_the_full_encoding(seed: int) -> None:
    rnd = random.Random(seed)
    apply_mod._OWNER_REFS.clear()
    for i in range(400):
        obj = pod(f"p{i}")
        n = 1 if rnd.random() < 0.85 else rnd.randint(2, 3)
        obj["metadata"]["ownerReferences"] = [_ref(rnd) for _ in range(n)]
        if n > 1 and rnd.random() < 0.5:  # a duplicated reference
            obj["metadata"]["ownerReferences"].append(dict(obj["metadata"]["ownerReferences"][0]))
        want = orjson.dumps(_reference_entries(obj, POD))
        stored = rnd.random() < 0.7
        got = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared if stored else None)
        assert orjson.dumps(got) == want, obj["metadata"]["ownerReferences"]
    # the plain single references were answered by a few templates
    assert (
        0 < len(apply_mod._OWNER_REFS._templates) <= 3 * 4 * 5 * 2 * 4
    )  # value types of kind/name, controllers, bOD, extras


def test_a_template_serves_every_new_owner_and_a_dry_run_gets_its_own_tree() -> None:
    apply_mod._OWNER_REFS.clear()
    calls: list[Any] = []

    def created(uid: str, stored: bool, name: str = "w") -> Any:
        obj = pod("p")
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": uid, "controller": True}
        ]
        entries = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared if stored else None)
        assert orjson.dumps(entries) == orjson.dumps(_reference_entries(obj, POD))
        return entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]

    real_build = apply_mod._owner_refs_tree

    def counting(refs: Any, node: Any) -> Any:
        calls.append(refs)
        return real_build(refs, node)

    apply_mod._owner_refs_tree = counting  # type: ignore[assignment]
    try:
        a = created("u-1", True)
        b = created("u-2", True, "other-owner")
        dry = created("u-3", False)
    finally:
        apply_mod._owner_refs_tree = real_build  # type: ignore[assignment]
    assert len(calls) == 1 and calls[0][0]["uid"] == "uid"  # one walk, of the placeholder
    assert a == {".": {}, 'k:{"uid":"u-1"}': {}} and b == {".": {}, 'k:{"uid":"u-2"}': {}}
    dry['k:{"uid":"u-3"}']["f:extra"] = {}  # a dry run's response is its client's to modify
    assert created("u-4", True)['k:{"uid":"u-4"}'] == {}
    assert created("u-5", False)['k:{"uid":"u-5"}'] == {}


@pytest.mark.parametrize("seed", range(4))
def test_several_references_equal_the_full_encoding(seed: int) -> None:
    # each reference from its own template, in uid order; repeated uids are left to the walk
    rnd = random.Random(1000 + seed)
    apply_mod._OWNER_REFS.clear()
    for i in range(300):
        obj = pod(f"p{i}")
        refs = [_ref(rnd) for _ in range(rnd.randint(2, 4))]
        if rnd.random() < 0.15:  # a repeated uid, with other fields
            refs.append({**_ref(rnd), "uid": refs[0].get("uid", "u")})
        rnd.shuffle(refs)
        obj["metadata"]["ownerReferences"] = refs
        want = orjson.dumps(_reference_entries(obj, POD))
        for stored in rnd.sample([True, False], 2):
            got = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared if stored else None)
            assert orjson.dumps(got) == want, refs
            if not stored:  # a dry run's response is its client's: changing it changes nothing kept
                for v in got[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"].values():
                    v["f:x"] = {}


def test_a_pod_groups_two_references_are_served_by_templates() -> None:
    apply_mod._OWNER_REFS.clear()
    calls: list[Any] = []
    real_build = apply_mod._owner_refs_tree

    def counting(refs: Any, node: Any) -> Any:
        calls.append(refs)
        return real_build(refs, node)

    def created(i: int) -> Any:
        obj = pod(f"pg-{i}")
        obj["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": f"s{i}",
                "uid": f"z-{i}",
                "controller": True,
            },
            {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "name": f"w{i}", "uid": f"a-{i}"},
        ]
        entries = updated_managed_fields(None, obj, "m", POD, T0, "v1", fields_v1=_shared)
        assert orjson.dumps(entries) == orjson.dumps(_reference_entries(obj, POD))
        return entries[0]["fieldsV1"]["f:metadata"]["f:ownerReferences"]

    apply_mod._owner_refs_tree = counting  # type: ignore[assignment]
    try:
        trees = [created(i) for i in range(20)]
    finally:
        apply_mod._owner_refs_tree = real_build  # type: ignore[assignment]
    assert len(calls) == 2  # one walk per template (the two kinds of reference), none per object
    assert list(trees[7]) == [".", 'k:{"uid":"a-7"}', 'k:{"uid":"z-7"}']  # uid order, not list order


@pytest.mark.parametrize(
    "name, value", [("uid", "u-1"), ("name", "gang-0"), ("uid", "A.b_c-9" * 30), ("uid", "0")]
)
def test_key_texts_the_server_wrote_decode_as_a_parse_would(name: str, value: str) -> None:
    from apiserver.patch import fieldpath

    text = fieldpath.plain_string_key(name, value)
    remembered = fieldpath.parse_path_element(text)  # decoded, then kept by the element tables
    remembered_order = remembered.sort_key()
    fieldpath._SORT_KEYS.clear()
    fieldpath._KEY_ELEMENTS.clear()
    parsed = fieldpath.parse_path_element(text)  # a JSON decode
    assert parsed == remembered and parsed.serialize() == text
    assert parsed.sort_key() == remembered_order
    assert parsed == fieldpath.key({name: value})
