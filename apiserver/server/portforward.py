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
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from apiserver import errors
from apiserver.api.types import Obj, as_dict
from apiserver.kubeletsim.responder import EchoResponder
from apiserver.registry.generic import GenericStore
from apiserver.rest.resources import ResourceDef
from apiserver.server import spdy
from apiserver.server.requestinfo import RequestInfo

log = logging.getLogger("gangplane.portforward")

#: the subprotocol kubectl ≥ 1.31 offers for port-forward tunnelled over WebSocket
TUNNEL_PROTOCOL = "SPDY/3.1+portforward.k8s.io"


@dataclass
class _Stream:
    sid: int
    kind: str  # "data" | "error"
    port: int
    request_id: str
    send_window: spdy.Window
    recv_window: spdy.Window = field(default_factory=spdy.Window)
    pending: bytearray = field(default_factory=bytearray)
    pending_fin: bool = False
    local_closed: bool = False
    remote_closed: bool = False
    responder: EchoResponder | None = None


class PortForwardConnection:
    """The server side of one SPDY port-forward connection, independent of its transport:
    :meth:`feed` takes the bytes the client sent, ``send`` writes bytes back."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]], pod: str) -> None:
        self._send = send
        self.pod = pod
        self.codec_in, self.codec_out = spdy.HeaderCodec(), spdy.HeaderCodec()
        self.reader = spdy.FrameReader(self.codec_in)
        self.streams: dict[int, _Stream] = {}
        self.last_stream = 0
        self.initial_window = spdy.DEFAULT_WINDOW
        self.session_send = spdy.Window()
        self.session_recv = spdy.Window()
        #: whether the peer does SPDY/3.1 flow control (spdystream does not; see module doc)
        self.peer_flow_control = False
        self.closed = False
        #: connections served so far (each a data stream), for logs and tests
        self.forwarded = 0

    # ------------------------------------------------------------------ out
    async def _frame(self, frame: spdy.Frame) -> None:
        await self._send(spdy.encode(frame, self.codec_out))

    async def _write(self, st: _Stream, payload: bytes, fin: bool = False) -> None:
        """Data out on ``st``, held back only by the windows of a peer that does flow control."""
        st.pending += payload
        st.pending_fin = st.pending_fin or fin
        await self._flush(st)

    async def _flush(self, st: _Stream) -> None:
        while st.pending:
            n = len(st.pending)
            if self.peer_flow_control:
                n = min(n, st.send_window.available, self.session_send.available)
            n = min(n, 16 * 1024)
            if n <= 0:
                return
            if self.peer_flow_control:
                st.send_window.take(n)
                self.session_send.take(n)
            chunk = bytes(st.pending[:n])
            del st.pending[:n]
            await self._frame(spdy.data(st.sid, chunk, fin=st.pending_fin and not st.pending))
            if st.pending_fin and not st.pending:
                st.local_closed = True
        if st.pending_fin and not st.local_closed:
            await self._frame(spdy.data(st.sid, fin=True))
            st.local_closed = True
        self._forget_if_done(st)

    async def _close_local(self, st: _Stream) -> None:
        if not st.local_closed and not st.pending_fin:
            await self._write(st, b"", fin=True)

    def _forget_if_done(self, st: _Stream) -> None:
        if st.local_closed and st.remote_closed:
            self.streams.pop(st.sid, None)

    # ------------------------------------------------------------------ in
    async def feed(self, chunk: bytes) -> None:
        """Handle what the client sent; raises :class:`spdy.ProtocolError` on garbage."""
        for frame in self.reader.feed(chunk):
            await self._handle(frame)

    async def _handle(self, frame: spdy.Frame) -> None:
        if frame.kind == 0:
            await self._on_data(frame)
        elif frame.kind == spdy.SYN_STREAM:
            await self._on_syn_stream(frame)
        elif frame.kind == spdy.RST_STREAM:
            self.streams.pop(frame.stream_id, None)
        elif frame.kind == spdy.PING:
            if frame.ping_id % 2 == 1:  # the client's (odd) ping: answer it; ours are even
                await self._frame(spdy.Frame(spdy.PING, ping_id=frame.ping_id))
        elif frame.kind == spdy.SETTINGS:
            size = frame.settings.get(spdy.SETTINGS_INITIAL_WINDOW_SIZE)
            if size is not None:
                self.peer_flow_control = True
                self.initial_window = size
                for st in self.streams.values():
                    st.send_window.resize(size)
        elif frame.kind == spdy.WINDOW_UPDATE:
            await self._on_window_update(frame)
        elif frame.kind == spdy.GOAWAY:
            self.closed = True
        # SYN_REPLY and HEADERS: a server never receives replies to streams it did not open

    async def _on_syn_stream(self, frame: spdy.Frame) -> None:
        sid = frame.stream_id
        if sid % 2 == 0 or sid <= self.last_stream:
            raise spdy.ProtocolError(f"stream id {sid} is not a new client stream")
        self.last_stream = sid

        def header(name: str) -> str:
            return (frame.headers.get(name.lower()) or [""])[0]

        kind, raw_port = header("streamType"), header("port")
        try:
            port = int(raw_port)
        except ValueError:
            port = 0
        if kind not in ("data", "error") or not 0 < port < 65536:
            # kubelet refuses such streams; nothing would read an error written to them
            log.info("port-forward to %s: refusing stream %d %s", self.pod, sid, frame.headers)
            await self._frame(spdy.Frame(spdy.RST_STREAM, sid, status=spdy.REFUSED_STREAM))
            return
        st = _Stream(sid, kind, port, header("requestID"), spdy.Window(self.initial_window))
        if frame.fin:
            st.remote_closed = True
        self.streams[sid] = st
        await self._frame(spdy.Frame(spdy.SYN_REPLY, sid))
        if kind == "data":
            st.responder = EchoResponder(port)
            self.forwarded += 1

    async def _on_data(self, frame: spdy.Frame) -> None:
        st = self.streams.get(frame.stream_id)
        if st is None or st.remote_closed:
            await self._frame(spdy.Frame(spdy.RST_STREAM, frame.stream_id, status=spdy.INVALID_STREAM))
            return
        if frame.data:
            for window, sid in ((st.recv_window, st.sid), (self.session_recv, 0)):
                delta = window.consumed(len(frame.data))
                if delta:
                    await self._frame(spdy.Frame(spdy.WINDOW_UPDATE, sid, delta=delta))
            if st.responder is not None:
                answer = st.responder.receive(frame.data)
                if answer and not st.local_closed:
                    await self._write(st, answer)
        if frame.fin:
            st.remote_closed = True
            if st.kind == "data":
                # the client is done sending on this connection: so is the "container", and
                # kubelet then closes both streams of the pair
                await self._close_local(st)
                for other in list(self.streams.values()):
                    if other.request_id == st.request_id and other.port == st.port:
                        await self._close_local(other)
            self._forget_if_done(st)

    async def _on_window_update(self, frame: spdy.Frame) -> None:
        self.peer_flow_control = True
        if frame.stream_id == 0:
            self.session_send.grow(frame.delta)
            for st in list(self.streams.values()):
                await self._flush(st)
            return
        st = self.streams.get(frame.stream_id)
        if st is not None:
            st.send_window.grow(frame.delta)
            await self._flush(st)

    async def goaway(self) -> None:
        """End the connection: no new streams (the pod is gone)."""
        if not self.closed:
            self.closed = True
            await self._frame(spdy.Frame(spdy.GOAWAY, self.last_stream, status=spdy.GOAWAY_OK))


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


async def serve_tunnel(
    api: GenericStore,
    ws: WebSocket,
    info: RequestInfo,
    rd: ResourceDef,
    deny: Callable[[errors.StatusError], Awaitable[None]],
) -> None:
    """``pods/portforward`` upgraded to WebSocket with :data:`TUNNEL_PROTOCOL`."""
    try:
        pod = api.get(rd, info.namespace, info.name).obj
        if not _running(pod):
            phase = as_dict(pod.get("status")).get("phase") or "Pending"
            raise errors.bad_request(
                f"unable to upgrade connection: pod {info.name} is not running; current phase is {phase}"
            )
    except errors.StatusError as e:
        await deny(e)
        return
    await ws.accept(subprotocol=TUNNEL_PROTOCOL)
    conn = PortForwardConnection(ws.send_bytes, f"{info.namespace}/{info.name}")

    async def read() -> None:
        while not conn.closed:
            msg = await ws.receive()
            if msg["type"] == "websocket.disconnect":
                return
            chunk = msg.get("bytes")
            if chunk is None:
                raise spdy.ProtocolError("the SPDY tunnel carries binary messages only")
            await conn.feed(chunk)

    reader = asyncio.create_task(read())
    stopped = asyncio.create_task(_until_pod_stops(api, rd, info.namespace, info.name))
    try:
        done, _ = await asyncio.wait({reader, stopped}, return_when=asyncio.FIRST_COMPLETED)
        if reader in done:
            exc = reader.exception()
            if isinstance(exc, spdy.ProtocolError):
                log.info("port-forward to %s: %s", conn.pod, exc)
                await conn.goaway()
                await ws.close(1002)
        else:
            log.info("port-forward to %s: the pod stopped; closing the tunnel", conn.pod)
            await conn.goaway()
            await ws.close(1000)
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the client went away
    finally:
        for task in (reader, stopped):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def is_tunnel(offered: list[Any]) -> bool:
    return TUNNEL_PROTOCOL in offered


__all__ = ["TUNNEL_PROTOCOL", "PortForwardConnection", "is_tunnel", "serve_tunnel"]
