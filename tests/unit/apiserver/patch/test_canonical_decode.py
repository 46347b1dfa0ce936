"""A decoded ``fieldsV1`` that is its set's own encoding keeps that text as the set's encoding.

Every update decodes the stored object's entries and encodes them again; an entry the write
leaves alone (the create's, under a status write) comes back unchanged. When the parse finds
the document in the encoder's exact form (:meth:`FieldSet._parse_into`'s answer), the set
answers its encoding with the decoded text instead of encoding itself again. Checked here
against the encoder: whenever a decoding keeps a text, that text is byte for byte what the
encoder writes for the set, over encodings of random sets and over every way of writing a
document the encoder would not (key order, ``.`` placement, element texts not in canonical
form, ties in the order).
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.openapi import schema
from apiserver.patch import fieldpath
from apiserver.patch.fieldpath import FieldSet, fields_of

from .test_tracker import _mutate, _random_pod

POD = schema.for_gvk("", "v1", "Pod")


def _encoder_text(fs: FieldSet) -> bytes:
    """What the encoder writes for ``fs``, made without any table."""
    return orjson.dumps(fieldpath._emit(fs.tree(), include_self=False))


def _decode_fresh(doc: Any) -> FieldSet:
    fieldpath._DECODED.clear()
    fieldpath._ENCODED.clear()
    return FieldSet.from_fields_v1(doc)


def _check(doc: Any) -> FieldSet:
    """Decode ``doc`` afresh; a kept text must be the encoder's, and the set a fresh parse's."""
    fs = _decode_fresh(doc)
    out: set[Any] = set()
    FieldSet._parse_into(doc, (), out)
    assert fs.paths == frozenset(out)
    if fs._encoded is not None:
        assert fs._encoded == _encoder_text(fs) == orjson.dumps(doc)
    assert fs.fields_v1_json() == _encoder_text(fs)
    return fs


@pytest.mark.parametrize("seed", range(4))
def test_the_encoding_of_a_set_decodes_to_a_set_that_keeps_it(seed: int) -> None:
    rnd = random.Random(seed)
    kept = 0
    for _ in range(120):
        obj = _mutate(rnd, _random_pod(rnd))
        try:
            fs = fields_of(obj, POD)
        except fieldpath.FieldPathError:
            continue
        text = _encoder_text(fs)
        got = _check(orjson.loads(text))
        if fs and all(p for p in fs.paths) and got == fs:
            kept += got._encoded is not None
            assert got._encoded == text  # the fast path is taken for the encoder's own texts
    assert kept > 50


def _reordered(doc: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    items = [(k, _reordered(v, rnd) if isinstance(v, dict) else v) for k, v in doc.items()]
    rnd.shuffle(items)
    return dict(items)


@pytest.mark.parametrize("seed", range(4))
def test_documents_in_another_order_are_never_taken_for_the_encoding(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(80):
        obj = _mutate(rnd, _random_pod(rnd))
        try:
            fs = fields_of(obj, POD)
        except fieldpath.FieldPathError:
            continue
        doc = _reordered(orjson.loads(_encoder_text(fs)), rnd)
        _check(doc)


@pytest.mark.parametrize(
    "doc",
    [
        {".": {}},  # the root's own member: not written
        {"f:a": {".": {}}},  # a member without children is written as {}
        {"f:a": {"f:x": {}, ".": {}}},  # "." comes first
        {"f:a": {".": {"f:y": {}}, "f:x": {}}},  # "." is empty
        {"f:b": {}, "f:a": {}},  # fields by name
        {"f:a": {'k:{"name":"b"}': {}, 'k:{"name":"a"}': {}}},  # keys by their values
        {"f:a": {'k:{"name": "a"}': {}}},  # a key's text with a blank
        {"f:a": {'k:{"b":"1","a":"2"}': {}}},  # key fields not sorted
        {"f:a": {"v:1.50": {}}},  # a value not in its shortest form
        {"f:a": {"i:01": {}}},  # an index with a leading zero
        {"f:a": {"v:1": {}, "v:1.0": {}}},  # two values of one sort key: no canonical order
        {"f:a": {'k:{"n":1}': {}, 'k:{"n":1.0}': {}}},
        {"f:a": {"v:1": {}, 'v:"1"': {}, "v:true": {}, "i:0": {}, "f:z": {}}},  # mixed kinds
        {"f:a": {"f:z": {}, "v:1": {}}},
    ],
)
def test_odd_documents_decode_like_a_parse_and_keep_only_the_encoders_text(doc: Any) -> None:
    _check(doc)


def test_the_encoders_texts_of_mixed_and_keyed_children_are_kept() -> None:
    for doc in (
        {"f:a": {".": {}, 'k:{"name":"a"}': {".": {}, "f:x": {}}, 'k:{"name":"b"}': {}}},
        {"f:a": {"f:z": {}, "v:1": {}, 'v:"1"': {}, "v:true": {}}},
        {"f:a": {"i:0": {}, "i:2": {}, "i:10": {}}},
    ):
        assert orjson.dumps(doc) == _encoder_text(_decode_fresh(doc)), doc
        assert _check(doc)._encoded == orjson.dumps(doc)


def _shared(doc: Any) -> Any:
    """``doc`` as the informers' sharing leaves a stored object's: equal subtrees one object."""
    from apiserver.storage.compact import canonical_fields

    return canonical_fields(doc)


@pytest.mark.parametrize("seed", range(4))
def test_a_stored_documents_subtrees_parse_by_identity_to_what_a_parse_gives(seed: int) -> None:
    """The decoding of stored documents (``stored=True``) remembers their subtrees' parses by
    identity: over random documents sharing subtrees (canonical and not), every decoding
    equals a fresh parse, keeps a text exactly where the plain decoding does, and the memo is
    used (the subtrees recur)."""
    rnd = random.Random(seed)
    fieldpath._STORED_PARSES.clear()
    docs: list[Any] = []
    for _ in range(60):
        obj = _mutate(rnd, _random_pod(rnd))
        try:
            fs = fields_of(obj, POD)
        except fieldpath.FieldPathError:
            continue
        doc = orjson.loads(_encoder_text(fs))
        if rnd.random() < 0.3:
            doc = _reordered(doc, rnd)
        docs.append(_shared(doc))
    remembered = []
    for _ in range(2):  # the second round finds every subtree remembered
        for doc in docs:
            plain = _decode_fresh(doc)
            fieldpath._DECODED.clear()
            got = FieldSet.from_fields_v1(doc, stored=True)
            assert got == plain and got is not plain
            assert got._encoded == plain._encoded
            out: set[Any] = set()
            FieldSet._parse_into(doc, (), out)
            assert got.paths == frozenset(out)
        remembered.append(len(fieldpath._STORED_PARSES))
    assert 0 < remembered[0] == remembered[1]


def test_only_the_stored_objects_decoding_remembers_subtrees() -> None:
    fieldpath._STORED_PARSES.clear()
    doc = {"f:a": {"f:b": {}, "f:c": {"f:d": {}}}, "f:e": {}}
    _decode_fresh(doc)
    assert not fieldpath._STORED_PARSES  # a request's document may be modified: no memo
    fieldpath._DECODED.clear()
    fs = FieldSet.from_fields_v1(doc, stored=True)
    assert fieldpath._STORED_PARSES[id(doc["f:a"])][0] is doc["f:a"]
    assert fs._encoded == orjson.dumps(doc)
