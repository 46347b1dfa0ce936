"""SPDY/3.1 framing, as kubectl and kubelet speak it (through Go's ``spdystream``).

kubectl's ``port-forward`` (and its exec/attach fallback) multiplexes streams over one
connection with SPDY/3.1: since KEP-4006 the SPDY bytes travel inside WebSocket binary messages
(subprotocol ``SPDY/3.1+portforward.k8s.io``, "tunnelling"), before that over an HTTP connection
upgraded to ``SPDY/3.1``. This module is only the wire format, independent of the transport:

* :func:`encode` / :class:`FrameReader`: the eight control frames kube's peers exchange
  (SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE) and DATA
  frames. A transport is a byte stream, so the reader reassembles frames split over (or packed
  into) several messages.
* :class:`HeaderCodec`: name/value header blocks, compressed with zlib primed with the SPDY/3
  dictionary. Compression is stateful: one compressor per direction per connection, each block
  ended by a sync flush, so every block must go through the same codec in order.
* :class:`Window`: SPDY/3.1 flow control accounting (per stream and per session, 64 KiB
  initially), for deciding when to send WINDOW_UPDATE and how much may be sent.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9

FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02

#: RST_STREAM status codes
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, CANCEL = 1, 2, 3, 5
#: GOAWAY status codes
GOAWAY_OK = 0

#: the SETTINGS id of a peer's initial per-stream receive window
SETTINGS_INITIAL_WINDOW_SIZE = 7
DEFAULT_WINDOW = 64 * 1024
MAX_WINDOW = 2**31 - 1
MAX_DATA_LENGTH = 2**24 - 1
_ID_MASK = 0x7FFFFFFF


def _dictionary() -> bytes:
    """The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): a run
    of length-prefixed header names and values common in HTTP, then a block of status lines,
    dates and media types. Its zlib id (Adler-32) is ``0xE3C6A7C2``."""
    words = [
        "options",
        "head",
        "post",
        "put",
        "delete",
        "trace",
        "accept",
        "accept-charset",
        "accept-encoding",
        "accept-language",
        "accept-ranges",
        "age",
        "allow",
        "authorization",
        "cache-control",
        "connection",
        "content-base",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "date",
        "etag",
        "expect",
        "expires",
        "from",
        "host",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "if-unmodified-since",
        "last-modified",
        "location",
        "max-forwards",
        "pragma",
        "proxy-authenticate",
        "proxy-authorization",
        "range",
        "referer",
        "retry-after",
        "server",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
        "vary",
        "via",
        "warning",
        "www-authenticate",
        "method",
        "get",
        "status",
    ] + ["200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie", "keep-alive", "origin"]
    head = b"".join(struct.pack(">I", len(w)) + w.encode() for w in words)
    tail = (
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
        "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
        "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
        "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 "
        "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
        "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
        "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0."
    )
    return head + tail.encode()


DICTIONARY = _dictionary()

Headers = dict[str, list[str]]


class ProtocolError(Exception):
    """The peer sent bytes that are not SPDY/3: the connection cannot continue."""


# ============================================================================ frames


@dataclass
class Frame:
    """One frame. ``kind`` is a control frame type, or 0 for DATA. Which other fields matter
    depends on the kind: ``stream_id`` (all but SETTINGS/PING), ``headers`` (SYN_STREAM,
    SYN_REPLY, HEADERS), ``data`` (DATA), ``status`` (RST_STREAM, GOAWAY), ``delta``
    (WINDOW_UPDATE), ``ping_id`` (PING), ``settings`` (id → value), ``associated`` and
    ``priority`` (SYN_STREAM)."""

    kind: int
    stream_id: int = 0
    flags: int = 0
    headers: Headers = field(default_factory=dict)
    data: bytes = b""
    status: int = 0
    delta: int = 0
    ping_id: int = 0
    settings: dict[int, int] = field(default_factory=dict)
    associated: int = 0
    priority: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


def data(stream_id: int, payload: bytes = b"", fin: bool = False) -> Frame:
    return Frame(0, stream_id, FLAG_FIN if fin else 0, data=payload)


class HeaderCodec:
    """Header blocks for one direction of one connection: the zlib stream continues across
    frames, so a block can only be decoded by the codec that decoded the ones before it."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def compress(self, headers: Headers) -> bytes:
        raw = [struct.pack(">I", len(headers))]
        for name, values in headers.items():
            key, value = name.lower().encode(), "\x00".join(values).encode()
            raw += [struct.pack(">I", len(key)), key, struct.pack(">I", len(value)), value]
        return self._deflate.compress(b"".join(raw)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    def decompress(self, block: bytes) -> Headers:
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as e:
            raise ProtocolError(f"header block: {e}") from None
        try:
            (count,) = struct.unpack_from(">I", raw, 0)
            pos, out = 4, {}
            for _ in range(count):
                (n,) = struct.unpack_from(">I", raw, pos)
                name = raw[pos + 4 : pos + 4 + n].decode()
                pos += 4 + n
                (n,) = struct.unpack_from(">I", raw, pos)
                value = raw[pos + 4 : pos + 4 + n].decode()
                pos += 4 + n
                if pos > len(raw) or not name:
                    raise ProtocolError("header block: truncated or empty name")
                out.setdefault(name.lower(), []).extend(value.split("\x00"))
        except (struct.error, UnicodeDecodeError) as e:
            raise ProtocolError(f"header block: {e}") from None
        return out


def encode(frame: Frame, codec: HeaderCodec) -> bytes:
    """The frame's bytes; header blocks go through ``codec`` (this direction's compressor)."""
    if frame.kind == 0:
        if len(frame.data) > MAX_DATA_LENGTH:
            raise ValueError("DATA frame payload over 2^24-1 bytes")
        return (
            struct.pack(">II", frame.stream_id & _ID_MASK, frame.flags << 24 | len(frame.data)) + frame.data
        )
    if frame.kind == SYN_STREAM:
        body = struct.pack(
            ">IIH", frame.stream_id & _ID_MASK, frame.associated & _ID_MASK, (frame.priority & 7) << 13
        ) + codec.compress(frame.headers)
    elif frame.kind in (SYN_REPLY, HEADERS):
        body = struct.pack(">I", frame.stream_id & _ID_MASK) + codec.compress(frame.headers)
    elif frame.kind == RST_STREAM:
        body = struct.pack(">II", frame.stream_id & _ID_MASK, frame.status)
    elif frame.kind == SETTINGS:
        body = struct.pack(">I", len(frame.settings)) + b"".join(
            struct.pack(">II", k & 0xFFFFFF, v) for k, v in frame.settings.items()
        )
    elif frame.kind == PING:
        body = struct.pack(">I", frame.ping_id)
    elif frame.kind == GOAWAY:
        body = struct.pack(">II", frame.stream_id & _ID_MASK, frame.status)
    elif frame.kind == WINDOW_UPDATE:
        body = struct.pack(">II", frame.stream_id & _ID_MASK, frame.delta & _ID_MASK)
    else:
        raise ValueError(f"unknown control frame type {frame.kind}")
    return struct.pack(">HHI", 0x8000 | VERSION, frame.kind, frame.flags << 24 | len(body)) + body


class FrameReader:
    """Frames out of a byte stream fed in arbitrary pieces (WebSocket messages, socket reads)."""

    def __init__(self, codec: HeaderCodec) -> None:
        self.codec = codec
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> list[Frame]:
        self._buf += chunk
        frames = []
        while len(self._buf) >= 8:
            word, flags_len = struct.unpack_from(">II", self._buf, 0)
            length = flags_len & 0xFFFFFF
            if len(self._buf) < 8 + length:
                break
            body = bytes(self._buf[8 : 8 + length])
            del self._buf[: 8 + length]
            frame = self._parse(word, flags_len >> 24, body)
            if frame is not None:
                frames.append(frame)
        return frames

    def _parse(self, word: int, flags: int, body: bytes) -> Frame | None:
        if not word & 0x80000000:
            return Frame(0, word & _ID_MASK, flags, data=body)
        version, kind = (word >> 16) & 0x7FFF, word & 0xFFFF
        if version != VERSION:
            raise ProtocolError(f"unsupported SPDY version {version}")
        try:
            if kind == SYN_STREAM:
                sid, assoc, prio = struct.unpack_from(">IIH", body, 0)
                headers = self.codec.decompress(body[10:])
                return Frame(
                    kind, sid & _ID_MASK, flags, headers, associated=assoc & _ID_MASK, priority=prio >> 13
                )
            if kind in (SYN_REPLY, HEADERS):
                (sid,) = struct.unpack_from(">I", body, 0)
                return Frame(kind, sid & _ID_MASK, flags, self.codec.decompress(body[4:]))
            if kind in (RST_STREAM, GOAWAY):
                sid, status = struct.unpack_from(">II", body, 0)
                return Frame(kind, sid & _ID_MASK, flags, status=status)
            if kind == SETTINGS:
                (count,) = struct.unpack_from(">I", body, 0)
                settings = {}
                for i in range(count):
                    key, value = struct.unpack_from(">II", body, 4 + 8 * i)
                    settings[key & 0xFFFFFF] = value
                return Frame(kind, 0, flags, settings=settings)
            if kind == PING:
                (ping_id,) = struct.unpack_from(">I", body, 0)
                return Frame(kind, 0, flags, ping_id=ping_id)
            if kind == WINDOW_UPDATE:
                sid, delta = struct.unpack_from(">II", body, 0)
                return Frame(kind, sid & _ID_MASK, flags, delta=delta & _ID_MASK)
        except struct.error as e:
            raise ProtocolError(f"control frame {kind}: {e}") from None
        return None  # unknown control frame types are ignored, as SPDY/3 requires


# ============================================================================ flow control


class Window:
    """One SPDY/3.1 flow-control window (a stream's, or the session's with stream id 0).

    As a *send* window it says how many DATA bytes may go out before the peer's WINDOW_UPDATE;
    as a *receive* window, :meth:`consumed` says when to send one: once half the window is
    used, so a sender is never stalled while the receiver keeps up."""

    def __init__(self, size: int = DEFAULT_WINDOW) -> None:
        self.initial = size
        self.available = size

    def take(self, wanted: int) -> int:
        """Up to ``wanted`` bytes that may be sent now (the window shrinks by as much)."""
        n = max(0, min(wanted, self.available))
        self.available -= n
        return n

    def grow(self, delta: int) -> None:
        """A WINDOW_UPDATE from the peer; over 2^31-1 is a flow-control error."""
        if delta <= 0 or self.available + delta > MAX_WINDOW:
            raise ProtocolError(f"window update of {delta} overflows the flow-control window")
        self.available += delta

    def resize(self, initial: int) -> None:
        """SETTINGS_INITIAL_WINDOW_SIZE changed: existing windows move by the difference."""
        self.available += initial - self.initial
        self.initial = initial

    def consumed(self, n: int) -> int:
        """``n`` bytes received and handled; returns the WINDOW_UPDATE delta to send (0: none yet)."""
        self.available -= n
        if self.available < 0:
            raise ProtocolError("peer sent more data than the flow-control window allows")
        if self.available <= self.initial // 2:
            delta, self.available = self.initial - self.available, self.initial
            return delta
        return 0


__all__ = [
    "DICTIONARY",
    "Frame",
    "FrameReader",
    "HeaderCodec",
    "ProtocolError",
    "Window",
    "data",
    "encode",
]
