"""The server half of a SPDY/3.1 connection, as kubelet's streaming server runs one.

kubelet's port-forward and remote-command (exec/attach) servers share this behaviour (through
apimachinery's ``httpstream/spdy`` and spdystream): the client opens every stream; each is
accepted with an empty SYN_REPLY or refused with RST_STREAM; pings from the client are echoed;
DATA goes both ways with FIN half-closing a direction; GOAWAY ends the connection. What a
stream *means* is the protocol's: subclasses implement :meth:`accept` and :meth:`on_stream_data`.

Transport-independent: :meth:`feed` takes bytes from the client (a WebSocket message, a socket
read), ``send`` writes bytes back. Flow control is kept as :mod:`apiserver.server.spdy` explains;
outgoing data only waits for the peer's window once the peer has shown it does flow control
(Go's spdystream, kubectl's implementation, never sends WINDOW_UPDATE).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from apiserver.server import spdy

#: largest DATA payload sent in one frame (spdystream's reads are this size too)
CHUNK = 16 * 1024


@dataclass
class Stream:
    """One client-opened stream: its headers, windows, and which directions are closed."""

    sid: int
    headers: spdy.Headers
    send_window: spdy.Window
    recv_window: spdy.Window = field(default_factory=spdy.Window)
    pending: bytearray = field(default_factory=bytearray)
    pending_fin: bool = False
    local_closed: bool = False
    remote_closed: bool = False

    def header(self, name: str) -> str:
        return (self.headers.get(name.lower()) or [""])[0]


class SpdyServerConnection(ABC):
    """Frame handling common to kubelet's SPDY servers; see the module docstring."""

    def __init__(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        self._send = send
        self.reader = spdy.FrameReader(spdy.HeaderCodec())
        self.codec_out = spdy.HeaderCodec()
        self.streams: dict[int, Stream] = {}
        self.last_stream = 0
        self.initial_window = spdy.DEFAULT_WINDOW
        self.session_send = spdy.Window()
        self.session_recv = spdy.Window()
        #: whether the peer does SPDY/3.1 flow control (spdystream does not)
        self.peer_flow_control = False
        self.closed = False

    # ------------------------------------------------------------------ protocol hooks
    @abstractmethod
    async def accept(self, st: Stream) -> bool:
        """A new stream: keep it (True; SYN_REPLY is sent) or refuse it (False; RST_STREAM)."""

    @abstractmethod
    async def on_stream_data(self, st: Stream, data: bytes, fin: bool) -> None:
        """Bytes the client sent on ``st`` (possibly empty), and whether it half-closed it."""

    def on_stream_gone(self, sid: int) -> None:
        """``sid`` is finished (closed both ways, or reset): drop what the protocol kept for it."""
        return None  # a protocol that keeps nothing per stream has nothing to drop

    # ------------------------------------------------------------------ out
    async def frame(self, frame: spdy.Frame) -> None:
        await self._send(spdy.encode(frame, self.codec_out))

    async def write(self, st: Stream, payload: bytes, fin: bool = False) -> None:
        """Data out on ``st`` (FIN after it when ``fin``); nothing once that side is closed."""
        if st.local_closed or st.pending_fin:
            return
        st.pending += payload
        st.pending_fin = fin
        await self._flush(st)

    async def close_stream(self, st: Stream) -> None:
        """Half-close the server's side of ``st``."""
        await self.write(st, b"", fin=True)

    async def _flush(self, st: Stream) -> None:
        while st.pending:
            n = min(len(st.pending), CHUNK)
            if self.peer_flow_control:
                n = min(n, st.send_window.available, self.session_send.available)
                if n <= 0:
                    return
                st.send_window.take(n)
                self.session_send.take(n)
            chunk = bytes(st.pending[:n])
            del st.pending[:n]
            last = st.pending_fin and not st.pending
            await self.frame(spdy.data(st.sid, chunk, fin=last))
            st.local_closed = st.local_closed or last
        if st.pending_fin and not st.local_closed:
            await self.frame(spdy.data(st.sid, fin=True))
            st.local_closed = True
        self._forget_if_done(st)

    def _forget_if_done(self, st: Stream) -> None:
        if st.local_closed and st.remote_closed:
            self.streams.pop(st.sid, None)
            self.on_stream_gone(st.sid)

    async def goaway(self) -> None:
        """End the connection: no new streams."""
        if not self.closed:
            self.closed = True
            await self.frame(spdy.Frame(spdy.GOAWAY, self.last_stream, status=spdy.GOAWAY_OK))

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
            self.on_stream_gone(frame.stream_id)
        elif frame.kind == spdy.PING:
            if frame.ping_id % 2 == 1:  # the client's (odd) ping: answer it; ours would be even
                await self.frame(spdy.Frame(spdy.PING, ping_id=frame.ping_id))
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
        st = Stream(sid, frame.headers, spdy.Window(self.initial_window), remote_closed=frame.fin)
        self.streams[sid] = st
        if not await self.accept(st):
            self.streams.pop(sid, None)
            await self.frame(spdy.Frame(spdy.RST_STREAM, sid, status=spdy.REFUSED_STREAM))
            return
        await self.frame(spdy.Frame(spdy.SYN_REPLY, sid))

    async def _on_data(self, frame: spdy.Frame) -> None:
        st = self.streams.get(frame.stream_id)
        if st is None or st.remote_closed:
            await self.frame(spdy.Frame(spdy.RST_STREAM, frame.stream_id, status=spdy.INVALID_STREAM))
            return
        if frame.data:
            for window, sid in ((st.recv_window, st.sid), (self.session_recv, 0)):
                delta = window.consumed(len(frame.data))
                if delta:
                    await self.frame(spdy.Frame(spdy.WINDOW_UPDATE, sid, delta=delta))
        if frame.fin:
            st.remote_closed = True
        await self.on_stream_data(st, frame.data, frame.fin)
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


__all__ = ["SpdyServerConnection", "Stream"]
