"""The HTTP/1.1 protocol ``gangplane serve`` runs under uvicorn: httptools, one write per response.

uvicorn writes a response's status line and headers as soon as the app starts the response and
the body in a second write, so every answer costs two socket sends (two TLS records over HTTPS)
and wakes the client twice. Writes made during one turn of the event loop are joined here and
leave in one transport write at the end of that turn, as Go's ``net/http`` server does with its
buffered writer; a streamed response (a watch) still leaves chunk by chunk, each in the turn it
was produced.

Over TLS, asyncio's SSL protocol gives every connection a 256 KiB read buffer (``max_size``,
allocated and zeroed at accept), so 1,000 idle watches held about 275 KB each. Once the
connection is made, :func:`share_tls_read_buffer` points it at one buffer the whole server shares
(kept in uvicorn's per-server ``app_state``): reads are as large as before, idle connections hold
none.
"""

from __future__ import annotations

import asyncio
from typing import Any

from apiserver.server.hijack import HIJACK, HijackedConnection

try:  # uvicorn's C parser (the httptools dependency); the pure-Python h11 one otherwise
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # pragma: no cover - httptools is a declared dependency
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]


class CoalescingTransport:
    """A transport proxy whose writes within one loop turn are sent as one."""

    __slots__ = ("_transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(bytes(data))

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(p) for p in self._pending)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


#: the key of the server's one shared TLS read buffer in uvicorn's per-server ``app_state``
TLS_BUFFER_KEY = "gangplane.tls_read_buffer"


def share_tls_read_buffer(transport: asyncio.BaseTransport, shared: bytearray) -> bool:
    """Make the asyncio SSL protocol behind ``transport`` read into ``shared`` instead of a
    buffer of its own.

    The buffer only carries bytes from ``recv_into`` to the SSL object's incoming BIO, within one
    synchronous ``get_buffer``/``buffer_updated`` step of the event loop, so every connection of
    one loop can use the same one: an idle connection then holds no read buffer at all, and reads
    keep asyncio's full size. The attributes are CPython's ``asyncio.sslproto.SSLProtocol``
    (``max_size``, ``_ssl_buffer``, ``_ssl_buffer_view``, read by ``get_buffer``); a transport
    without them (plain TCP, another event loop) is left alone. Returns whether it was changed.
    """
    proto = getattr(transport, "_ssl_protocol", None)
    if proto is None or not all(hasattr(proto, a) for a in ("max_size", "_ssl_buffer", "_ssl_buffer_view")):
        return False
    if len(shared) < proto.max_size:
        return False
    proto._ssl_buffer = shared
    proto._ssl_buffer_view = memoryview(shared)
    return True


class HTTPProtocol(_Base):  # type: ignore[misc,valid-type]
    """uvicorn's HTTP/1.1 protocol writing through a :class:`CoalescingTransport`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if getattr(transport, "_ssl_protocol", None) is not None:
            shared = self.app_state.get(TLS_BUFFER_KEY)
            if shared is None:
                shared = self.app_state[TLS_BUFFER_KEY] = bytearray(transport._ssl_protocol.max_size)  # type: ignore[attr-defined]
            share_tls_read_buffer(transport, shared)
        super().connection_made(CoalescingTransport(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.parser.should_upgrade() and (self._get_upgrade() or b"").startswith(b"spdy/"):
            self.scope.setdefault("extensions", {})[HIJACK] = self._hijack

    def _unsupported_upgrade_warning(self) -> None:
        if not (self._get_upgrade() or b"").startswith(b"spdy/"):  # SPDY is answered by the app
            super()._unsupported_upgrade_warning()

    def _hijack(self) -> HijackedConnection:
        """Hand the raw connection to the app (see :mod:`apiserver.server.hijack`): uvicorn no
        longer parses it, and the request's ASGI response goes nowhere."""
        self.connections.discard(self)
        if self.cycle is not None:
            self.cycle.disconnected = True
        transport = self.transport
        if isinstance(transport, CoalescingTransport):
            transport.flush()
            transport = transport._transport
        conn = HijackedConnection(transport)
        transport.set_protocol(conn)
        self.flow.resume_reading()
        return conn
