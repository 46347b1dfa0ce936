"""Micro-benchmarks of the HTTP request path (front door + ASGI app), without sockets or TLS.

    python -m pytest bench/micro/test_http_path.py --benchmark-only

What the HTTP layer adds to a write over the registry call itself (header and path parsing,
authentication, body decoding and the duplicate-field check, negotiation, metrics, the
response), and a watch fan-out: one write delivered to 100 watch streams served by the app.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import orjson
import pytest

from apiserver.server.app import APIApp, status_response
from apiserver.server.frontdoor import ADMIN, FrontDoor, FrontDoorPolicy, static_tokens
from apiserver.server.instance import build_api, new_metrics_registry
from apiserver.storage.memory import MemoryStorage

pytestmark = pytest.mark.benchmark

HEADERS = [
    (b"host", b"127.0.0.1:6443"),
    (b"user-agent", b"kubectl/v1.37.0 (linux/amd64) kubernetes/abcdef"),
    (b"accept", b"application/json"),
    (b"authorization", b"Bearer token"),
]
BASE = "/api/v1/namespaces/default/configmaps"


def _app(**store_options: Any) -> tuple[Any, Any]:
    reg, metrics = new_metrics_registry()
    api = build_api(store=MemoryStorage(**store_options))
    policy = FrontDoorPolicy([static_tokens({"token": ADMIN})], authorization=api.authorization)
    return api, FrontDoor(APIApp(api, metrics, reg, bookmark_interval=3600).asgi(), policy, status_response)


def _scope(method: str, path: str, query: bytes, body: bytes, ctype: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [*HEADERS, (b"content-type", ctype), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 6443),
    }


async def _call(
    app: Any, method: str, path: str, body: bytes = b"", ctype: bytes = b"application/json"
) -> int:
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    async def send(msg: dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            status.append(msg["status"])

    await app(_scope(method, path, b"", body, ctype), receive, send)
    return status[0]


def _configmap(i: int) -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i}", "labels": {"shard": str(i % 10)}},
            "data": {"k": "v" * 64},
        }
    )


def test_http_create_configmap_through_the_app(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    _, app = _app()
    n = itertools.count()

    def create() -> None:
        assert loop.run_until_complete(_call(app, "POST", BASE, _configmap(next(n)))) == 201

    benchmark(create)


def test_http_merge_patch_configmap_through_the_app(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    _, app = _app()
    assert loop.run_until_complete(_call(app, "POST", BASE, _configmap(0))) == 201
    n = itertools.count()

    def patch() -> None:
        body = b'{"metadata":{"labels":{"rev":"%d"}}}' % next(n)
        got = loop.run_until_complete(
            _call(app, "PATCH", f"{BASE}/cm-0", body, b"application/merge-patch+json")
        )
        assert got == 200

    benchmark(patch)


def test_http_watch_fanout_10_writes_to_100_streams(benchmark: Any, loop: asyncio.AbstractEventLoop) -> None:
    """10 creates, then every one of 100 watch streams (no selector) has their 10 event lines.

    The streams are woken together once the writes are in (a batch, as under a steady stream of
    writes); the batching interval is 0 here so that the time is the work, not the wait.
    """
    _, app = _app(watch_batch_interval=0.0)
    received = [0]
    gone = loop.create_future()

    async def stream() -> None:
        async def receive() -> dict[str, Any]:
            await gone
            return {"type": "http.disconnect"}

        async def send(msg: dict[str, Any]) -> None:
            received[0] += msg.get("body", b"").count(b"\n")

        await app(_scope("GET", BASE, b"watch=true", b"", b""), receive, send)

    tasks = [loop.create_task(stream()) for _ in range(100)]
    loop.run_until_complete(asyncio.sleep(0.05))
    n = itertools.count()

    async def write_and_deliver() -> None:
        target = received[0] + 1000
        for _ in range(10):
            assert await _call(app, "POST", BASE, _configmap(next(n))) == 201
        while received[0] < target:
            await asyncio.sleep(0.001)

    benchmark(lambda: loop.run_until_complete(write_and_deliver()))
    gone.set_result(None)
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
