"""Taking over an HTTP/1.1 connection for a protocol ASGI cannot express: ``Upgrade: SPDY/3.1``.

kubectl falls back to upgrading a plain POST to SPDY/3.1 (exec/attach with
``KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false``, port-forward when the WebSocket tunnel is refused),
as Go's ``http.Hijacker`` lets kube-apiserver do. ASGI only knows WebSocket upgrades, so the
server's HTTP protocol (:mod:`apiserver.server.transport`) offers such requests a
:data:`HIJACK` scope extension: once the request passed the front door and validation, the app
calls it and gets the raw connection as a :class:`HijackedConnection`; the ASGI response that
follows is discarded. Nothing else in the request path changes.
"""

from __future__ import annotations

import asyncio

#: the scope extension holding ``() -> HijackedConnection`` for a ``SPDY/3.1`` upgrade request
HIJACK = "gangplane.hijack"


class HijackedConnection(asyncio.Protocol):
    """The raw connection after the HTTP request head: reads through :meth:`read`, writes
    straight to the transport."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def data_received(self, data: bytes) -> None:
        self._chunks.put_nowait(data)

    def eof_received(self) -> bool | None:
        self._chunks.put_nowait(b"")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._chunks.put_nowait(b"")

    async def read(self) -> bytes:
        """The next bytes from the client; ``b""`` once it closed the connection."""
        chunk = await self._chunks.get()
        if not chunk:
            self._chunks.put_nowait(b"")  # stays at EOF for every later read
        return chunk

    async def write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        self.transport.close()


__all__ = ["HIJACK", "HijackedConnection"]
