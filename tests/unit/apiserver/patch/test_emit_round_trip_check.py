"""The encoder's check that a new set's text decodes to the set itself, made while emitting
(top two levels per set, the levels below once per remembered subtree), answers as the
element-by-element check :func:`apiserver.patch.fieldpath._decodes_to_itself` does.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.patch import fieldpath
from apiserver.patch.fieldpath import INDEX, KEY, VALUE, FieldSet, PathElement, key, make_path

from .test_tracker import random_pod_field_sets

#: element texts no write makes: they parse to other (canonical) elements
ODD = [PathElement(KEY, '{"k": 1}'), PathElement(VALUE, "1.50"), PathElement(INDEX, "01")]


@pytest.mark.parametrize("seed", range(4))
def test_random_pod_sets_are_checked_as_element_by_element(seed: int) -> None:
    rnd = random.Random(seed)
    for i, fs in random_pod_field_sets(rnd, 150):
        if i % 2:
            fieldpath._SUBTREES.clear()  # every group checked afresh, or found from earlier sets
        paths = fs.paths
        if rnd.random() < 0.3:  # an odd element somewhere: first level, second, or below
            depth = rnd.randint(0, 3)
            prefix = ("status", "conditions", key({"type": "Ready"}))[:depth]
            paths = paths | {make_path(*prefix, rnd.choice(ODD))}
        if rnd.random() < 0.05:
            paths = paths | {()}
        emitted, round_trips = fieldpath._emit_and_check(paths)
        assert round_trips == fieldpath._decodes_to_itself(paths)
        assert emitted == fieldpath._emit(FieldSet._wrap(paths).tree(), include_self=False)


@pytest.mark.parametrize("depth", range(4))
@pytest.mark.parametrize("odd", ODD)
def test_an_odd_element_at_any_depth_keeps_the_set_from_answering_its_own_decoding(
    depth: int, odd: Any
) -> None:
    prefix = ("a", "b", "c")[:depth]
    fs = FieldSet([make_path("a", "b", "c", "d"), make_path(*prefix, odd)])
    for _ in range(2):  # the second time the groups are remembered
        fieldpath._ENCODED.clear()
        fieldpath._DECODED.clear()
        assert fieldpath._emit_and_check(fs.paths)[1] is False
        text = FieldSet._wrap(fs.paths).fields_v1_json()
        assert text is not None
        assert fieldpath._DECODED.get(text) is None  # decoded by parsing, not answered by the set
