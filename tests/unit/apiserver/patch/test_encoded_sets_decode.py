"""A field set's own encoding decodes to that set (:func:`apiserver.patch.fieldpath._decodes_to_itself`).

Every write encodes its managers' sets into ``fieldsV1`` and the next write of the object decodes
that text; the set that was encoded answers the decoding directly. That is only sound where a
parse of the text gives the very same set, so every decoding here is checked against a fresh
parse that bypasses the tables.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.openapi import schema
from apiserver.patch import fieldpath
from apiserver.patch.fieldpath import (
    INDEX,
    KEY,
    VALUE,
    FieldSet,
    PathElement,
    key,
    make_path,
    value,
)

from .test_tracker import random_pod_field_sets

POD = schema.for_gvk("", "v1", "Pod")


def _fresh_parse(doc: Any) -> FieldSet:
    out: set[Any] = set()
    FieldSet._parse_into(doc, (), out)
    return FieldSet._wrap(frozenset(out))


def _roundtrip(fs: FieldSet) -> FieldSet:
    text = fs.fields_v1_json()
    assert text is not None
    got = FieldSet.from_fields_v1(orjson.loads(text))
    assert got == _fresh_parse(orjson.loads(text))
    return got


@pytest.mark.parametrize("seed", range(4))
def test_the_decoding_of_an_encoded_set_is_that_set_and_equals_a_fresh_parse(seed: int) -> None:
    rnd = random.Random(seed)
    for _, fs in random_pod_field_sets(rnd, 150):
        fieldpath._ENCODED.clear()  # encoded afresh, as a set a write makes
        if not fs:
            continue
        fs = FieldSet._wrap(frozenset(fs.paths))
        assert _roundtrip(fs) is fs


@pytest.mark.parametrize(
    "odd",
    [
        # texts no write makes (the canonical forms have no blank, no leading zero): they
        # parse to the canonical elements
        make_path("a", PathElement(KEY, '{"k": 1}')),
        make_path("a", PathElement(VALUE, "1.50")),
        make_path("a", PathElement(INDEX, "01")),
    ],
)
def test_a_set_whose_text_parses_to_another_set_is_decoded_by_parsing(odd: Any) -> None:
    fs = FieldSet([make_path("a", "b"), odd])
    fieldpath._ENCODED.clear()
    got = _roundtrip(fs)
    assert got is not fs


def test_elements_that_write_as_they_parse_are_decoded_to_the_set_itself() -> None:
    fs = FieldSet(
        [make_path("a", key({"k": -0.0}), "x"), make_path("a", value("\u2028<&>")), make_path("b", 3)]
    )
    fieldpath._ENCODED.clear()
    assert _roundtrip(fs) is fs


def test_the_empty_path_is_not_encoded_so_a_set_holding_it_is_parsed_back_without_it() -> None:
    fs = FieldSet([(), make_path("a")])
    fieldpath._ENCODED.clear()
    got = _roundtrip(fs)
    assert got == FieldSet([make_path("a")])
