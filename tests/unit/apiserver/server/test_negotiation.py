"""The one content-negotiation module: Content-Type media types and the JSON-acceptable check."""

from __future__ import annotations

import pytest

from apiserver.server.negotiation import accepts_json, media_type, parse_accept


@pytest.mark.parametrize(
    ("header", "want"),
    [
        (None, ""),
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        ("application/apply-patch+yaml", "application/apply-patch+yaml"),
    ],
)
def test_media_type_drops_parameters_and_case(header: str | None, want: str) -> None:
    assert media_type(header) == want


@pytest.mark.parametrize(
    ("accept", "want"),
    [
        ("", True),
        ("application/json", True),
        ("*/*", True),
        ("application/*;q=0.5", True),
        ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", False),
        ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", False),
        ("application/vnd.kubernetes.protobuf, application/json;q=0", False),
    ],
)
def test_accepts_json(accept: str, want: bool) -> None:
    assert accepts_json(accept) is want


def test_parse_accept_orders_by_quality_then_header_order() -> None:
    got = parse_accept(
        'text/plain;q=0.2, application/yaml, application/json;as=Table;v="v1";g=meta.k8s.io;q=0.9'
    )
    assert [(m.mime, m.q) for m in got] == [
        ("application/yaml", 1.0),
        ("application/json", 0.9),
        ("text/plain", 0.2),
    ]
    assert got[1].params == {"as": "Table", "v": "v1", "g": "meta.k8s.io"}
