"""TLS connections share one read buffer and closed connections give memory back (issue 25, R1).

asyncio gives each TLS connection a 256 KiB read buffer; gangplane points every connection of a
server at one shared buffer once the connection is made. That is only safe because a read's bytes
leave the buffer within the same event-loop step: many clients uploading and reading back large
bodies at once over TLS must each get exactly their own bytes. The memory figures themselves
(``gangplane bench idle-watches``) are in docs/bench.md.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from apiserver.server.heaptrim import HeapTrimmer
from apiserver.server.tlsgen import serving_files
from apiserver.server.transport import TLS_BUFFER_KEY
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio
CMS = "/api/v1/namespaces/default/configmaps"


async def test_concurrent_large_bodies_over_tls_each_read_back_intact(
    cp: ControlPlane, tmp_path: Path
) -> None:
    files = serving_files(tmp_path / "pki", "127.0.0.1")
    url = await cp.serve_http("127.0.0.1", 0, tls=files)
    ctx = ssl.create_default_context(cafile=str(files.ca_cert))

    clients = [httpx.AsyncClient(base_url=url, verify=ctx, timeout=60) for _ in range(16)]

    async def one(i: int, c: httpx.AsyncClient) -> tuple[int, bool]:
        value = chr(ord("a") + i % 26) * (400_000 + i * 1_001)
        r = await c.post(CMS, json={"metadata": {"name": f"big-{i}"}, "data": {"v": value}})
        assert r.status_code == 201, r.text
        got = (await c.get(f"{CMS}/big-{i}")).json()["data"]["v"]
        return len(got), got == value

    try:
        results = await asyncio.gather(*(one(i, c) for i, c in enumerate(clients)))
        assert all(ok for _, ok in results)
        assert [n for n, _ in results] == [400_000 + i * 1_001 for i in range(16)]
        # the 16 keep-alive connections are open: all read into the server's one buffer
        assert cp._server is not None
        conns = list(cp._server.server_state.connections)
        assert len(conns) >= 16
        buffers = {id(p.transport._transport._ssl_protocol._ssl_buffer) for p in conns}
        assert buffers == {id(conns[0].app_state[TLS_BUFFER_KEY])}
    finally:
        for c in clients:
            await c.aclose()


def test_the_heap_is_trimmed_only_when_many_connections_went_away() -> None:
    open_now = [0]
    trimmer = HeapTrimmer(lambda: open_now[0], threshold=64)
    calls: list[Any] = []
    trimmer._trim = lambda: calls.append(1) or 1  # count the C allocator's trims
    for n in (5, 40, 2, 30, 1):  # a few kubectl runs: churn, no trim
        open_now[0] = n
        assert not trimmer.check()
    open_now[0] = 1000
    assert not trimmer.check()
    open_now[0] = 900  # a tenth went away: not yet
    assert not trimmer.check()
    open_now[0] = 500
    assert trimmer.check() and len(calls) == 1
    open_now[0] = 0
    assert trimmer.check() and trimmer.trims == 2
