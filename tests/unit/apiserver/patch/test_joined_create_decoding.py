"""A stored create's joined entry decoded from its parts (:func:`fieldpath.remember_joined`).

A create with owner references (or lists under ``spec``) gets its entry joined from the rest
of the object's set and the subtrees of those parts; its first update decodes the stored entry
from the rest's paths and a parse of the parts instead of parsing it whole. That is only sound
if the decoding is the whole parse's in everything the decoder keeps: the paths, the encoding
it takes the text for (and so whether a next write re-encodes it) and the stored tree it keeps.
Random pods, with owner references of plain and odd uids, one or several, repeated, and the
random pods' lists, nulls and wrong types, are created as a stored write makes them and their
entries decoded both ways.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.openapi import schema
from apiserver.patch import fieldpath
from apiserver.patch.apply import updated_managed_fields
from apiserver.patch.fieldpath import FieldSet
from apiserver.patch.sharedtrees import shared_fields_v1

from .test_tracker import _mutate, _random_pod

POD = schema.for_gvk("", "v1", "Pod")
UIDS = ["1b4e28ba-2fa1-11d2-883f-0016d3cca427", "u1", "u-2", 'odd"uid', "ü", "", "u1"]


def _owned_pod(rnd: random.Random) -> Obj:
    p = _mutate(rnd, _random_pod(rnd))
    md = p.get("metadata")
    if isinstance(md, dict) and rnd.random() < 0.85:
        refs: list[Any] = []
        for _ in range(rnd.choice([1, 1, 2, 3])):
            ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s"}
            ref["uid"] = rnd.choice([*UIDS, 7, None])
            if rnd.random() < 0.3:
                ref["controller"] = rnd.choice([True, False, 1])
            refs.append(ref)
        md["ownerReferences"] = refs
    return p


def _decode(doc: Any) -> tuple[Any, ...]:
    """What the decoder keeps of ``doc``: paths, the encoding taken, the stored tree kept."""
    try:
        fs = FieldSet.from_fields_v1(doc, stored=True)
    except fieldpath.FieldPathError as e:
        return ("error", str(e))
    return (fs.paths, fs._encoded, fs.stored_tree() is doc, fs._self_decoding, fs.fields_v1_json())


@pytest.mark.parametrize("seed", range(5))
def test_joined_entries_decode_as_the_whole_parse(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    joined = 0
    for _ in range(300):
        obj = _owned_pod(rnd)
        manager = rnd.choice(["kube-controller-manager", "m"])
        monkeypatch.setattr(fieldpath, "_JOINED", {})
        try:
            entries = updated_managed_fields(
                None,
                copy.deepcopy(obj),
                manager,
                POD,
                "2026-12-05T09:00:00Z",
                "v1",
                fields_v1=shared_fields_v1,
            )
        except Exception:  # noqa: BLE001 - refused as by the general path: nothing stored to decode
            continue
        remembered = dict(fieldpath._JOINED)
        for entry in entries or []:
            doc = entry["fieldsV1"]
            monkeypatch.setattr(fieldpath, "_DECODED", {})
            monkeypatch.setattr(fieldpath, "_JOINED", dict(remembered))
            fast = _decode(doc)
            monkeypatch.setattr(fieldpath, "_DECODED", {})
            monkeypatch.setattr(fieldpath, "_JOINED", {})
            general = _decode(doc)
            assert fast == general, obj
            joined += bool(remembered)
    assert joined > 150  # most creates here were joined (the test exercised the new path)


def test_a_joined_text_is_answered_without_parsing_it_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    obj = _random_pod(random.Random(1))
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": "u9"}
    ]
    monkeypatch.setattr(fieldpath, "_JOINED", {})
    monkeypatch.setattr(fieldpath, "_DECODED", {})
    (entry,) = updated_managed_fields(None, obj, "m", POD, "", "v1", fields_v1=shared_fields_v1) or []
    assert len(fieldpath._JOINED) == 1
    parsed: list[Any] = []
    whole = FieldSet._parse_into.__func__  # type: ignore[attr-defined]

    def spy(cls: Any, doc: Any, prefix: Any, out: Any, stored: bool = False) -> bool:
        parsed.append(prefix)
        return bool(whole(cls, doc, prefix, out, stored))

    monkeypatch.setattr(FieldSet, "_parse_into", classmethod(spy))
    fs = FieldSet.from_fields_v1(entry["fieldsV1"], stored=True)
    assert () not in parsed  # the document itself was not walked, only the owner references
    assert parsed[0] == (fieldpath.field("metadata"), fieldpath.field("ownerReferences"))
    # the joined text is the set's own encoding: kept, with the stored tree, as the parse keeps it
    assert fs._encoded == orjson.dumps(entry["fieldsV1"])
    assert fs.stored_tree() is entry["fieldsV1"]


@pytest.mark.parametrize("name", [1.0, -0.0, 10**20, "c", True])
def test_parts_with_odd_keys_decode_as_the_whole_parse(name: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # odd list-map keys (floats, big integers, booleans) in a part: decoded as the whole parse
    obj = _random_pod(random.Random(2))
    obj["spec"]["containers"] = [{"name": name, "image": "x"}, {"name": "d", "image": "y"}]
    obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "s", "uid": "u"}]
    monkeypatch.setattr(fieldpath, "_JOINED", {})
    entries = updated_managed_fields(None, obj, "m", POD, "", "v1", fields_v1=shared_fields_v1) or []
    remembered = dict(fieldpath._JOINED)
    assert remembered
    for entry in entries:
        monkeypatch.setattr(fieldpath, "_DECODED", {})
        monkeypatch.setattr(fieldpath, "_JOINED", dict(remembered))
        fast = _decode(entry["fieldsV1"])
        monkeypatch.setattr(fieldpath, "_DECODED", {})
        monkeypatch.setattr(fieldpath, "_JOINED", {})
        assert fast == _decode(entry["fieldsV1"])
