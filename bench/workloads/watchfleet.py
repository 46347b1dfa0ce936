"""Many HTTP watchers in one process, for the watch fan-out benchmark over HTTP.

``python -m bench.workloads.watchfleet KUBECONFIG PATH N EVENTS`` opens ``N`` keep-alive
connections, sends ``GET PATH`` (a watch) on each, prints ``ready`` once every stream has
answered, and reads until each has seen ``EVENTS`` ADDED events or stdin closes. Then it prints
one JSON line: events seen per watcher and the delivery latencies, in milliseconds.

Each object carries the moment its create was sent (the ``bench/sent`` annotation, the
system-wide monotonic clock), so a latency is the time from the write being sent to the event
arriving at the watcher, as the in-process scenario measures it. The stream is read as raw
chunked HTTP with a regular expression per chunk: a client decoding 1,000,000 events as JSON
would measure itself rather than the server.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import sys
import time
import urllib.parse
from pathlib import Path

import orjson

from bench.workloads.api import _target

SENT = re.compile(rb'"bench/sent":"([0-9.]+)"')


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


async def _watch(
    url: urllib.parse.SplitResult,
    ctx: ssl.SSLContext | None,
    head: bytes,
    events: int,
    lat: list[float],
    seen: list[int],
    i: int,
    ready: asyncio.Event,
    started: list[int],
    n: int,
) -> None:
    reader, writer = await asyncio.open_connection(
        url.hostname, url.port or (443 if ctx else 80), ssl=ctx, limit=1 << 22
    )
    writer.write(head)
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"watch answered {status!r}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    started[0] += 1
    if started[0] == n:
        ready.set()
    partial = b""
    while seen[i] < events:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.strip() or b"0", 16)
        data = await reader.readexactly(size + 2)
        if size == 0:
            return
        t = now()
        data = partial + data[:-2]
        cut = data.rfind(b"\n") + 1
        whole, partial = data[:cut], data[cut:]
        stamps = SENT.findall(whole)
        seen[i] += len(stamps)
        lat.extend((t - float(s)) * 1000 for s in stamps)
    writer.close()


async def main(kubeconfig: Path, path: str, n: int, events: int) -> None:
    target = _target(kubeconfig)
    url = urllib.parse.urlsplit(target.server)
    ctx = target.ssl_context() if url.scheme == "https" else None
    headers = "".join(f"{k}: {v}\r\n" for k, v in target.headers.items() if k != "Content-Type")
    head = (f"GET {url.path.rstrip('/')}{path} HTTP/1.1\r\nHost: {url.netloc}\r\n{headers}\r\n").encode()
    lat: list[float] = []
    seen = [0] * n
    started = [0]
    ready = asyncio.Event()
    tasks = [
        asyncio.create_task(_watch(url, ctx, head, events, lat, seen, i, ready, started, n)) for i in range(n)
    ]
    waiting = asyncio.ensure_future(ready.wait())
    done, _ = await asyncio.wait([waiting, *tasks], return_when=asyncio.FIRST_COMPLETED)
    for t in done:
        if t is not waiting:
            t.result()  # a watch failed before every stream was up
    print("ready", flush=True)
    stdin_closed = asyncio.ensure_future(asyncio.to_thread(sys.stdin.read))
    await asyncio.wait([stdin_closed, asyncio.gather(*tasks)], return_when=asyncio.FIRST_COMPLETED)
    for t in tasks:
        t.cancel()
    print(orjson.dumps({"seen": seen, "latency_ms": lat}).decode(), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
