"""``go_json`` of a map of strings (list-map keys) takes orjson's path: the very same text."""

from __future__ import annotations

import json

from apiserver.patch.fieldpath import _plain_strings_json, go_json


def _reference(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for a, b in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(a, b)
    return text


def test_every_character_is_written_as_the_standard_library_writes_it() -> None:
    for cp in [*range(0x3000), 0xFEFF, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        value = {"uid": f"a{chr(cp)}b", chr(cp): "x"}
        assert _plain_strings_json(value) is not None
        assert go_json(value) == _reference(value), hex(cp)


def test_other_values_and_lone_surrogates_take_the_standard_path() -> None:
    for value in ({"port": 80, "protocol": "TCP"}, {"k": True}, ["a"], "s", {"k": "\ud800"}):
        assert _plain_strings_json(value) is None
    assert go_json({"port": 80, "protocol": "TCP"}) == '{"port":80,"protocol":"TCP"}'
