"""YAML numbers and explicit scalar tags decode as go-yaml decodes them, never as a 500.

Found by the fuzz (tests/e2e/test_fuzz.py): PyYAML raises ``ValueError``/``KeyError``/
``OverflowError`` for ``!!int x``, ``!!bool x``, a 5,000-digit integer (Python's int-string
limit) or a 400-digit one (too big for a float), which reached the client as 500s.
"""

from __future__ import annotations

import pytest

from apiserver.errors import StatusError
from apiserver.server.bodies import decode_yaml


@pytest.mark.parametrize(
    ("doc", "tag", "rtag"),
    [
        (b"a: !!int x", "!!int", "!!str"),
        (b"a: !!float x", "!!float", "!!str"),
        (b"a: !!bool x", "!!bool", "!!str"),
        (b"a: !!int 1.5", "!!int", "!!float"),
    ],
)
def test_an_explicit_tag_on_text_of_another_kind_is_go_yamls_400(doc: bytes, tag: str, rtag: str) -> None:
    with pytest.raises(StatusError) as e:
        decode_yaml(doc)
    assert e.value.code == 400
    text = doc.split(b" ")[-1].decode()
    assert e.value.message == f"error converting YAML to JSON: yaml: cannot decode {rtag} `{text}` as a {tag}"


def test_an_integer_too_long_for_python_stays_the_string_it_was_written_as() -> None:
    digits = "1" * 5000
    assert decode_yaml(f"a: {digits}".encode()) == {"a": digits}


def test_an_integer_beyond_a_float_stays_a_string_one_within_becomes_a_float() -> None:
    huge = "1" + "0" * 400
    assert decode_yaml(f"a: {huge}\nb: 1{'0' * 100}".encode()) == {"a": huge, "b": 1e100}


def test_ordinary_scalars_are_unchanged() -> None:
    assert decode_yaml(b"a: 5\nb: !!float 5\nc: yes\nd: 1_000\ne: 0x1F\nf: -1.5") == {
        "a": 5,
        "b": 5.0,
        "c": True,
        "d": 1000,
        "e": 31,
        "f": -1.5,
    }
