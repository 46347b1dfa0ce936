"""A big LIST is streamed in chunks and reads back the same (issue 25, R2).

Above :data:`~apiserver.server.app.LIST_CHUNK_BYTES` the list is written item by item (chunked
transfer, no Content-Length), each chunk handed over before the next is encoded; the client gets
the same document a small list has: kind, metadata, every item in order. Speed and the other
clients' latency are measured by ``gangplane bench big-list`` (docs/bench.md), not here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson

from apiserver.server import app as app_module
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry

CMS = "/api/v1/namespaces/default/configmaps"


def _list_with(n: int, value_bytes: int) -> tuple[httpx.Response, list[bytes]]:
    reg, metrics = new_metrics_registry()
    app = APIApp(build_api(), metrics, reg).asgi()
    chunks: list[bytes] = []

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            for i in range(n):
                body = {"metadata": {"name": f"cm-{i:02d}"}, "data": {"v": "x" * value_bytes}}
                (await c.post(CMS, content=orjson.dumps(body))).raise_for_status()
            async with c.stream("GET", CMS) as r:
                async for chunk in r.aiter_raw():
                    chunks.append(chunk)
                return r

    r = asyncio.run(go())
    return r, chunks


def _check(doc: dict[str, Any], n: int, value_bytes: int) -> None:
    assert doc["kind"] == "ConfigMapList" and doc["apiVersion"] == "v1"
    assert int(doc["metadata"]["resourceVersion"]) > 0
    assert [i["metadata"]["name"] for i in doc["items"]] == [f"cm-{i:02d}" for i in range(n)]
    assert all(len(i["data"]["v"]) == value_bytes for i in doc["items"])


def test_a_list_over_the_chunk_size_streams_the_same_document() -> None:
    size = app_module.LIST_CHUNK_BYTES // 3
    r, chunks = _list_with(12, size)
    assert r.status_code == 200
    assert "content-length" not in r.headers  # streamed
    _check(orjson.loads(b"".join(chunks)), 12, size)


def test_a_small_list_is_one_body() -> None:
    r, chunks = _list_with(3, 10)
    assert r.headers["content-length"] == str(len(b"".join(chunks)))
    _check(orjson.loads(b"".join(chunks)), 3, 10)
