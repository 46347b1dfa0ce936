"""The plain ``Upgrade: SPDY/3.1`` request: exec/attach (``v4.channel.k8s.io``) and port-forward
(``portforward.k8s.io``) for clients that do not, or cannot, use WebSocket.

kubectl falls back to it when the WebSocket upgrade fails, or always for exec/attach with
``KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false`` (port-forward: ``KUBECTL_PORT_FORWARD_WEBSOCKETS=false``).
The request is a POST with ``Connection: Upgrade``, ``Upgrade: SPDY/3.1`` and the protocols it
speaks in ``X-Stream-Protocol-Version``; kube validates it like the WebSocket upgrade, picks the
first protocol both sides speak (``403 unable to upgrade: unable to negotiate protocol`` if
none), answers ``101 Switching Protocols`` naming it, and the connection becomes SPDY/3.1
(:mod:`apiserver.server.hijack` hands it over).

Remote command, as kubelet's ``v4`` server: the client opens an ``error`` stream, then
``stdin``/``stdout``/``stderr`` as asked (no ``stderr`` with a TTY, and a ``resize`` stream
then), each tagged by its ``streamType`` header. Once all arrived the simulated process runs
(:func:`apiserver.server.streams.execute`, the same as over WebSocket); its output goes out as
DATA on ``stdout``/``stderr``, and at the end the error stream carries the ``metav1.Status``
(``Success``, or ``NonZeroExitCode`` with the code) before every stream is half-closed and the
connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from apiserver import errors
from apiserver.kubeletsim.container import Containers
from apiserver.registry.generic import GenericStore
from apiserver.rest.resources import ResourceDef
from apiserver.server import portforward, spdy, streams
from apiserver.server.hijack import HijackedConnection
from apiserver.server.requestinfo import RequestInfo
from apiserver.server.spdyserver import SpdyServerConnection, Stream

log = logging.getLogger("gangplane.remotecommand")

REMOTE_COMMAND_PROTOCOLS = ("v4.channel.k8s.io",)
PORT_FORWARD_PROTOCOLS = ("portforward.k8s.io",)
STREAM_TYPES = ("error", "stdin", "stdout", "stderr", "resize")
#: how long kubelet waits for a client to open every stream it asked for
STREAM_CREATION_TIMEOUT = 30.0


class RemoteCommandConnection(SpdyServerConnection):
    """One exec/attach over SPDY: the streams by type, stdin into a queue, output out."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]], wanted: dict[str, bool]) -> None:
        super().__init__(send)
        self.wanted = wanted
        tty = wanted["tty"]
        self.expected = {"error"} | {
            name
            for name, on in (
                ("stdin", wanted["stdin"]),
                ("stdout", wanted["stdout"]),
                ("stderr", wanted["stderr"] and not tty),
                ("resize", tty),
            )
            if on
        }
        self.by_type: dict[str, Stream] = {}
        self.ready = asyncio.Event()
        self.stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.output: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue()

    async def accept(self, st: Stream) -> bool:
        kind = st.header("streamType")
        if kind not in STREAM_TYPES or kind in self.by_type:
            log.info("exec: refusing stream %d %s", st.sid, st.headers)
            return False
        self.by_type[kind] = st
        if self.expected <= set(self.by_type):
            self.ready.set()
        return True

    async def on_stream_data(self, st: Stream, data: bytes, fin: bool) -> None:
        if st is not self.by_type.get("stdin"):
            return  # resize events change nothing in a simulated terminal; error is write-only
        if data:
            if self.wanted["tty"]:
                data = data.replace(b"\r", b"\n")
                self.out(streams.STDOUT)(data)  # a terminal echoes what is typed
            self.stdin.put_nowait(data)
        if fin:
            self.stdin.put_nowait(None)

    def out(self, channel: int) -> Callable[[bytes], None]:
        """The process's writer for ``channel`` (1 stdout, 2 stderr), as the shell expects."""
        tty = self.wanted["tty"]
        kind = "stdout" if tty or channel == streams.STDOUT else "stderr"

        def write(data: bytes) -> None:
            if tty:
                data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            if data and kind in self.by_type:
                self.output.put_nowait((kind, data))

        return write

    async def drain_output(self) -> None:
        while (item := await self.output.get()) is not None:
            kind, data = item
            await self.write(self.by_type[kind], data)

    async def finish(self, status: dict[str, Any]) -> None:
        """The error stream's Status, then every stream closed and the connection ended."""
        await self.write(self.by_type["error"], json.dumps(status).encode())
        for st in list(self.by_type.values()):
            await self.close_stream(st)
        await self.goaway()


def _offered(request: Request) -> list[str]:
    """Every ``X-Stream-Protocol-Version`` value, in order (repeated headers and lists)."""
    return [
        v.strip()
        for k, h in request.scope.get("headers", ())
        if k.lower() == b"x-stream-protocol-version"
        for v in h.decode("latin-1").split(",")
        if v.strip()
    ]


def _negotiate(offered: list[str], supported: tuple[str, ...]) -> str:
    """The first of the client's protocols the server speaks (kube's ``httpstream.Handshake``)."""
    for p in offered:
        if p in supported:
            return p
    raise errors.StatusError(
        403,
        "Forbidden",
        f"unable to upgrade: unable to negotiate protocol: client supports [{' '.join(offered)}], "
        f"server accepts [{' '.join(supported)}]",
    )


async def serve_upgrade(
    api: GenericStore,
    containers: Containers,
    request: Request,
    info: RequestInfo,
    rd: ResourceDef,
    hijack: Callable[[], HijackedConnection],
    stop: asyncio.Event,
) -> Response:
    """Validate, take the connection over, speak SPDY on it until done or ``stop`` is set (the
    server is shutting down: the connection is closed). Validation errors are raised (the usual
    Status answer); once upgraded, the returned response goes nowhere."""
    sub = info.subresource
    if sub == "portforward":
        protocol = _negotiate(_offered(request), PORT_FORWARD_PROTOCOLS)
        portforward.check_running(api, rd, info)
    else:
        pod = streams.pod_or_404(api, rd, info.namespace, info.name)
        container, command, wanted = streams.validate_connect(pod, sub, request.query_params)
        protocol = _negotiate(_offered(request), REMOTE_COMMAND_PROTOCOLS)
    conn = hijack()
    await conn.write(
        b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"
        b"X-Stream-Protocol-Version: " + protocol.encode() + b"\r\n\r\n"
    )

    async def read() -> bytes | None:
        return (await conn.read()) or None

    if sub == "portforward":
        session = asyncio.ensure_future(portforward.forward(api, rd, info, conn.write, read))
    else:
        session = asyncio.ensure_future(
            _exec(api, containers, pod, sub, container, command, wanted, conn, read)
        )
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({session, stopped}, return_when=asyncio.FIRST_COMPLETED)
        exc = session.exception() if session.done() else None
        if isinstance(exc, OSError | RuntimeError | spdy.ProtocolError):
            log.info("SPDY %s on %s/%s ended: %s", sub, info.namespace, info.name, exc)
        elif exc is not None:  # never die from a request; say what went wrong
            log.error("internal error serving SPDY %s on %s/%s", sub, info.namespace, info.name, exc_info=exc)
    finally:
        for task in (session, stopped):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        conn.close()
    return Response(status_code=101)


async def _exec(
    api: GenericStore,
    containers: Containers,
    pod: Any,
    sub: str,
    container: str,
    command: list[str],
    wanted: dict[str, bool],
    transport: HijackedConnection,
    read: Callable[[], Awaitable[bytes | None]],
) -> None:
    conn = RemoteCommandConnection(transport.write, wanted)

    async def pump() -> None:
        while (chunk := await read()) is not None:
            await conn.feed(chunk)

    reader = asyncio.create_task(pump())
    writer = asyncio.create_task(conn.drain_output())
    try:
        ready = asyncio.create_task(conn.ready.wait())
        await asyncio.wait(
            {ready, reader}, timeout=STREAM_CREATION_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        ready.cancel()
        if not conn.ready.is_set():
            if "error" in conn.by_type:  # kubelet's message when streams never came
                await conn.finish(
                    {
                        "metadata": {},
                        "status": "Failure",
                        "message": "timed out waiting for client to create streams",
                        "reason": "InternalError",
                        "code": 500,
                    }
                )
            return
        status = await streams.execute(
            api, containers, pod, sub, container, command, wanted, conn.stdin, conn.out, reader
        )
        if status is None:
            return  # the client left: the simulated process went with it
        conn.output.put_nowait(None)
        await writer
        await conn.finish(status)
    finally:
        for task in (reader, writer):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


__all__ = ["RemoteCommandConnection", "serve_upgrade"]
