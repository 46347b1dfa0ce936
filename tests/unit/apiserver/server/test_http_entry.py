"""The ASGI entry and body pre-checks: what a client sees of them."""

from __future__ import annotations

import asyncio

import httpx
import orjson
import pytest

from apiserver.server.app import APIApp
from apiserver.server.bodies import decode_async, json_has_no_duplicates
from apiserver.server.instance import build_api, new_metrics_registry


def _client() -> httpx.AsyncClient:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.mark.parametrize("method", ["OPTIONS", "TRACE", "CONNECT"])
def test_an_unserved_method_is_405_with_allow(method: str) -> None:
    async def go() -> httpx.Response:
        async with _client() as c:
            return await c.request(method, "/api/v1/namespaces")

    r = asyncio.run(go())
    assert r.status_code == 405
    assert r.headers["allow"] == "PATCH, PUT, HEAD, GET, POST, DELETE"
    assert r.text == "Method Not Allowed"


def test_a_repeated_key_still_warns_with_its_path() -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","name":"d"},"data":{"a":"1"}}'

    async def go() -> httpx.Response:
        async with _client() as c:
            return await c.post(
                "/api/v1/namespaces/default/configmaps",
                content=body,
                headers={"Content-Type": "application/json"},
            )

    r = asyncio.run(go())
    assert r.status_code == 201
    assert r.headers["warning"] == '299 - "duplicate field \\"metadata.name\\""'


@pytest.mark.parametrize(
    ("raw", "unique"),
    [
        (b'{"a":1,"b":{"c":[{"d":1},{"d":2}]}}', True),
        (b'{"a":"x:y\\":z","b":"::"}', True),
        (b'{"a":1,"a":2}', False),
        (b'{"a":{"b":1,"b":1}}', False),
        (b'{"a":1,"\\u0061":2}', False),
        (b'[{"op":"add","path":"/a","value":1}]', True),
        (b"5", True),
    ],
)
def test_json_duplicate_precheck(raw: bytes, unique: bool) -> None:
    assert json_has_no_duplicates(raw, orjson.loads(raw)) is unique


def test_decode_async_marks_bodies_without_repeats() -> None:
    value, kept = asyncio.run(decode_async(b'{"a":{"b":1}}', "application/json"))
    assert value == {"a": {"b": 1}}
    assert kept.duplicates == []  # type: ignore[attr-defined]
    _, kept = asyncio.run(decode_async(b'{"a":1,"a":2}', "application/json"))
    assert getattr(kept, "duplicates", None) is None  # left to the exact (path-naming) check
