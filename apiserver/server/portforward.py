"""kubectl's ``port-forward``: kubelet's SPDY port-forward protocol, answered for a simulated pod.

kubectl (client-go ``tools/portforward``) opens one SPDY/3.1 connection per ``port-forward``
command; since KEP-4006 (kubectl ≥ 1.31) it tunnels it inside a WebSocket whose subprotocol is
``SPDY/3.1+portforward.k8s.io``, each binary message carrying raw SPDY bytes. For every local
connection it accepts it creates two streams sharing a ``requestID`` header and the remote
``port`` header: ``streamType: error`` (which it half-closes at once and reads to the end: any
text there is a forwarding failure kubectl prints) and ``streamType: data`` (the connection's
bytes both ways). As kubelet's server does, every stream is accepted with an empty SYN_REPLY;
when the client half-closes a data stream, the server's side of both streams of that
connection is closed too, which ends kubectl's copy loop for that connection.

Nothing listens in a simulated container: the data stream reaches
:class:`apiserver.kubeletsim.responder.EchoResponder`. When the pod is deleted (or stops
running) the connection ends with GOAWAY and the tunnel closes, so kubectl reports
``lost connection to pod`` and exits, as it does when a real pod goes away.

Flow control: SPDY/3.1 windows are kept for both directions, and WINDOW_UPDATE is sent as data
is consumed. Go's spdystream (kubectl's and kubelet's implementation) neither sends nor honours
WINDOW_UPDATE, so outgoing data is only held back by the peer's window once the peer has shown
it does flow control (a WINDOW_UPDATE or an initial-window SETTINGS) — otherwise an echo over
64 KiB would wait forever for an update that never comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from apiserver import errors
from apiserver.api.types import Obj, as_dict
from apiserver.kubeletsim.responder import EchoResponder
from apiserver.registry.generic import GenericStore
from apiserver.rest.resources import ResourceDef
from apiserver.server import spdy
from apiserver.server.requestinfo import RequestInfo
from apiserver.server.spdyserver import SpdyServerConnection, Stream

log = logging.getLogger("gangplane.portforward")

#: the subprotocol kubectl ≥ 1.31 offers for port-forward tunnelled over WebSocket
TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"


class PortForwardConnection(SpdyServerConnection):
    """kubelet's port-forward protocol on one SPDY connection (see the module docstring)."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]], pod: str) -> None:
        super().__init__(send)
        self.pod = pod
        self.responders: dict[int, EchoResponder] = {}
        #: connections served so far (each a data stream), for logs and tests
        self.forwarded = 0

    async def accept(self, st: Stream) -> bool:
        kind = st.header("streamType")
        try:
            port = int(st.header("port"))
        except ValueError:
            port = 0
        if kind not in ("data", "error") or not 0 < port < 65536:
            # kubelet refuses such streams; nothing would read an error written to them
            log.info("port-forward to %s: refusing stream %d %s", self.pod, st.sid, st.headers)
            return False
        if kind == "data":
            self.responders[st.sid] = EchoResponder(port)
            self.forwarded += 1
        return True

    def on_stream_gone(self, sid: int) -> None:
        self.responders.pop(sid, None)

    async def on_stream_data(self, st: Stream, data: bytes, fin: bool) -> None:
        responder = self.responders.get(st.sid)
        if responder is None:
            return  # the error stream: kubectl only ever half-closes it
        if data:
            answer = responder.receive(data)
            if answer:
                await self.write(st, answer)
        if fin:
            # the client is done sending on this connection: so is the "container", and kubelet
            # then closes both streams of the pair (data first: kubectl reads the error last)
            await self.close_stream(st)
            for other in list(self.streams.values()):
                if other.header("requestID") == st.header("requestID") and other.header("port") == st.header(
                    "port"
                ):
                    await self.close_stream(other)


def _running(pod: Obj | None) -> bool:
    return pod is not None and as_dict(pod.get("status")).get("phase") == "Running"


async def _until_pod_stops(api: GenericStore, rd: ResourceDef, ns: str, name: str) -> None:
    """Returns once the pod is deleted or no longer running (a level-triggered watch)."""
    watcher, initial, _ = api.watch(rd, ns, field_selector=f"metadata.name={name}")
    try:
        current: Obj | None = None
        for _typ, rec in initial:
            current = rec.obj
        while _running(current):
            if not await watcher.wait(30.0):
                continue
            for typ, rec in watcher.drain():
                current = None if typ == "DELETED" else rec.obj
            if watcher.closed and not watcher.buffer:
                return
    finally:
        watcher.close()


def check_running(api: GenericStore, rd: ResourceDef, info: RequestInfo) -> None:
    """The checks before any upgrade: the pod exists (404) and runs (400)."""
    pod = api.get(rd, info.namespace, info.name).obj
    if not _running(pod):
        phase = as_dict(pod.get("status")).get("phase") or "Pending"
        raise errors.bad_request(
            f"unable to upgrade connection: pod {info.name} is not running; current phase is {phase}"
        )


async def forward(
    api: GenericStore,
    rd: ResourceDef,
    info: RequestInfo,
    send: Callable[[bytes], Awaitable[None]],
    read: Callable[[], Awaitable[bytes | None]],
) -> bool:
    """Serve one port-forward connection over any byte transport (``read`` returns None at the
    client's end) until the client leaves or the pod stops. Returns whether the server ended it
    (GOAWAY sent: the caller closes the transport, normally or for a protocol error)."""
    conn = PortForwardConnection(send, f"{info.namespace}/{info.name}")

    async def pump() -> None:
        while not conn.closed:
            chunk = await read()
            if chunk is None:
                return
            await conn.feed(chunk)

    reader = asyncio.create_task(pump())
    stopped = asyncio.create_task(_until_pod_stops(api, rd, info.namespace, info.name))
    try:
        done, _ = await asyncio.wait({reader, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if reader in done:
            exc = reader.exception()
            if isinstance(exc, spdy.ProtocolError):
                log.info("port-forward to %s: %s", conn.pod, exc)
                await conn.goaway()
                return True
            return False
        log.info("port-forward to %s: the pod stopped; closing the connection", conn.pod)
        await conn.goaway()
        return True
    finally:
        for task in (reader, stopped):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def serve_tunnel(
    api: GenericStore,
    ws: WebSocket,
    info: RequestInfo,
    rd: ResourceDef,
    deny: Callable[[errors.StatusError], Awaitable[None]],
) -> None:
    """``pods/portforward`` upgraded to WebSocket with :data:`TUNNEL_PROTOCOL`."""
    try:
        check_running(api, rd, info)
    except errors.StatusError as e:
        await deny(e)
        return
    await ws.accept(subprotocol=TUNNEL_PROTOCOL)

    async def read() -> bytes | None:
        msg = await ws.receive()
        if msg["type"] == "websocket.disconnect":
            return None
        chunk = msg.get("bytes")
        if chunk is None:
            raise spdy.ProtocolError("the SPDY tunnel carries binary messages only")
        return chunk

    try:
        if await forward(api, rd, info, ws.send_bytes, read):
            await ws.close(1000)
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the client went away


def is_tunnel(offered: list[Any]) -> bool:
    return TUNNEL_PROTOCOL in offered


__all__ = ["TUNNEL_PROTOCOL", "PortForwardConnection", "is_tunnel", "serve_tunnel"]
