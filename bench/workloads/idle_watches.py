"""Memory per idle watch connection (issue 25, R1): ``watches`` watches held open, over TLS or not.

A ``gangplane serve`` child (TLS with its bearer token by default; ``tls: false`` for plain HTTP)
gets ``watches`` connections, each one watch of ConfigMaps that then stays idle. The server's
resident set (``VmRSS`` of the child) is read before, once every watch has its response headers,
after half of them are closed and after all are closed. ``kb_per_watch`` is the growth per open
watch; ``released_pct`` how much of it came back once they closed (memory that returns after a
close is what a long-running server needs). Also reported: the server's CPU seconds
(``/proc/<pid>/stat``) over the whole run.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import urllib.parse
from pathlib import Path
from typing import Any

import yaml

from bench.results import Metric
from bench.workloads.common import Env
from bench.workloads.serve import gangplane_serve

METRICS = {
    "kb_per_watch": Metric("KB", False),
    "rss_before_mb": Metric("MB", False),
    "rss_open_mb": Metric("MB", False),
    "rss_half_closed_mb": Metric("MB", False),
    "rss_closed_mb": Metric("MB", False),
    "released_pct": Metric("%", True),
    "server_cpu_s": Metric("s", False),
}
PARAMS = {"watches": 1000, "tls": True}
#: longer than the server's heap-trim period
HEAP_TRIM_WAIT = 3.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _settled_rss(pid: int) -> float:
    """The server's RSS once it stopped moving (its event loop has handled what we sent)."""
    last = -1.0
    for _ in range(50):
        await asyncio.sleep(0.2)
        now = _rss_mb(pid)
        if abs(now - last) < 0.1:
            return now
        last = now
    return last


async def _watchers(host: str, port: int, ctx: ssl.SSLContext | None, token: str) -> int:
    """The server's ``apiserver_registered_watchers`` for ConfigMaps (its own count of open watches)."""
    reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(f"GET /metrics HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n".encode())
    body = (await reader.read()).decode("latin-1")
    writer.close()
    for line in body.splitlines():
        if line.startswith("apiserver_registered_watchers{") and 'resource="configmaps"' in line:
            return int(float(line.rsplit(" ", 1)[1]))
    return 0


async def _until_watchers(host: str, port: int, ctx: ssl.SSLContext | None, token: str, n: int) -> None:
    """Until the server has noticed the closes, and then past its heap trimmer's next look
    (``apiserver.server.heaptrim``, every 2 s)."""
    for _ in range(600):
        if await _watchers(host, port, ctx, token) <= n:
            await asyncio.sleep(HEAP_TRIM_WAIT)
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"the server still counts more than {n} watches")


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    n = int(params.get("watches", 1000))
    tls = bool(params.get("tls", True))
    flags = [] if tls else ["--no-tls", "--anonymous"]
    async with gangplane_serve(None, *flags) as served:
        pid = served.proc.pid
        cfg = yaml.safe_load(served.kubeconfig.read_text())
        token = cfg["users"][0]["user"].get("token", "")
        ctx: ssl.SSLContext | None = None
        if tls:
            import base64

            ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
            ctx = ssl.create_default_context(cadata=ca)
        u = urllib.parse.urlsplit(served.url)
        host, port = u.hostname or "127.0.0.1", u.port or 443
        request = (
            f"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: {u.netloc}\r\n"
            + (f"Authorization: Bearer {token}\r\n" if token else "")
            + "Accept: application/json\r\n\r\n"
        ).encode()
        cpu0 = _cpu_s(pid)
        before = await _settled_rss(pid)
        conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        for i in range(n):
            reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"watch {i}: {head[:200]!r}")
            conns.append((reader, writer))
            if i % 200 == 0:
                env.progress(f"{i}/{n} watches open")
        opened = await _settled_rss(pid)
        for _, writer in conns[: n // 2]:
            writer.close()
        await _until_watchers(host, port, ctx, token, n - n // 2)
        half = await _settled_rss(pid)
        for _, writer in conns[n // 2 :]:
            writer.close()
        await _until_watchers(host, port, ctx, token, 0)
        closed = await _settled_rss(pid)
        grown = opened - before
        return {
            "kb_per_watch": grown * 1024 / max(1, n),
            "rss_before_mb": before,
            "rss_open_mb": opened,
            "rss_half_closed_mb": half,
            "rss_closed_mb": closed,
            "released_pct": 100.0 * (opened - closed) / grown if grown > 0 else 100.0,
            "server_cpu_s": _cpu_s(pid) - cpu0,
        }
