"""A raw HTTP/1.1 client: sends exactly the bytes it is given, reports exactly what came back.

httpx and h11 refuse to send a NUL in a header or two Content-Length headers, and hide a
dropped connection behind a retry; a fuzzer needs all of that. A response is read up to its
end (Content-Length or chunked); a watch (a chunked answer to a GET) only up to its head, then
the connection is closed, which is how a client stops watching, unless the caller asks for the
whole stream (a watch bounded by ``timeoutSeconds``).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field

#: how long one request may take before the server counts as stalled (a hang guard, not a
#: performance bound: a loaded CI machine answers a hostile request in well under a second)
STALL_SECONDS = 60.0


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    seconds: float = 0.0
    #: why no (complete) answer came: "dropped", "stalled", "refused" (a large request the
    #: server stopped reading, its answer lost with the reset); empty when ``status`` is real
    failure: str = ""

    def header(self, name: str) -> str:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), "")


#: a request head larger than this is not read whole (uvicorn/h11 refuse heads above 16 KB, Go
#: above 1 MB with a 431), a body larger than :data:`MAX_BODY` neither (413)
MAX_HEAD = 16 * 1024
MAX_BODY = 3 * 1024 * 1024


_TCHAR = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def well_formed_head(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether every header is one an HTTP/1.1 server must accept (RFC 9110: the name a token,
    the value without control characters but tab). A server refuses any other head with a 400
    before it reads the body, and closing then resets the connection: its answer may be lost."""
    for name, value in headers:
        if not name or any(b not in _TCHAR for b in name):
            return False
        if any((b < 0x20 and b != 0x09) or b == 0x7F for b in value):
            return False
    return True


class _Closed(Exception):
    pass


class _Refused(Exception):
    """The server closed the connection while the request was still being sent, and no
    answer could be read."""


class RawConnection:
    """One keep-alive connection to ``host:port``, reopened as needed."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._sock: socket.socket | None = None
        self._buf = b""

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._buf = b""

    def _connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=STALL_SECONDS)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._buf = b""
        return sock

    def send(
        self,
        raw: bytes,
        *,
        method: str = "GET",
        refusable: bool = False,
        stream: bool = False,
        last: bool = False,
    ) -> Response:
        """Send one request's bytes; a drop on a reused connection is retried once on a new one
        (the server may have closed it while idle), a drop on a fresh one is reported.

        ``refusable``: the server may stop reading this request (a head above 16 KB, a body
        above the size limit, a malformed head); if the connection then ends without an answer,
        the server refused it and the reset swallowed its 4xx: "refused", not "dropped".
        ``stream``: read a watch to its end (the request bounds it with ``timeoutSeconds``),
        so an error event or a stream that breaks off shows. ``last``: close the connection
        after this answer (a request whose framing is ambiguous, a CR or LF inside a header,
        may leave bytes the server reads as another request; their answers must not be taken
        for the next request's).
        """
        for attempt in (0, 1):
            reused = self._sock is not None
            started = time.perf_counter()
            try:
                resp = self._exchange(raw, method, started, stream)
                if last:
                    self.close()
                return resp
            except (_Refused, _Closed, ConnectionError):
                self.close()
                if not reused or attempt:
                    failure = "refused" if refusable else "dropped"
                    return Response(0, seconds=time.perf_counter() - started, failure=failure)
            except TimeoutError:
                self.close()
                return Response(0, seconds=time.perf_counter() - started, failure="stalled")
        raise AssertionError("unreachable")

    def _exchange(self, raw: bytes, method: str, started: float, stream: bool = False) -> Response:
        sock = self._sock or self._connect()
        try:
            sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            # the server stopped reading: its answer may still be in our receive buffer
            try:
                status, headers = self._read_head()
            except (_Closed, ConnectionError) as e:
                raise _Refused from e
            self.close()
            return Response(status, headers, seconds=time.perf_counter() - started)
        while True:
            status, headers = self._read_head()
            if not 100 <= status < 200 or status == 101:
                break
        resp = Response(status, headers)
        te = resp.header("transfer-encoding").lower()
        if method == "HEAD" or status in (204, 304):
            pass
        elif "chunked" in te:
            if method == "GET" and status == 200 and not stream:
                self.close()  # a watch: its head is the answer; closing stops it
                resp.seconds = time.perf_counter() - started
                return resp
            resp.body = self._read_chunked()
        elif resp.header("content-length"):
            resp.body = self._read_exact(int(resp.header("content-length")))
        else:
            resp.body = self._read_to_close()
        if resp.header("connection").lower() == "close":
            self.close()
        resp.seconds = time.perf_counter() - started
        return resp

    # ---------------------------------------------------------------- reading
    def _fill(self) -> None:
        assert self._sock is not None
        chunk = self._sock.recv(65536)
        if not chunk:
            raise _Closed
        self._buf += chunk

    def _read_line(self) -> bytes:
        while b"\r\n" not in self._buf:
            self._fill()
        line, _, self._buf = self._buf.partition(b"\r\n")
        return line

    def _read_exact(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _read_to_close(self) -> bytes:
        try:
            while True:
                self._fill()
        except _Closed:
            out = self._buf
            self.close()
            return out

    def _read_head(self) -> tuple[int, list[tuple[str, str]]]:
        status_line = self._read_line()
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise _Closed  # not HTTP: as good as no answer
        status = int(parts[1])
        headers: list[tuple[str, str]] = []
        while True:
            line = self._read_line()
            if not line:
                return status, headers
            k, _, v = line.partition(b":")
            headers.append((k.decode("latin-1").strip(), v.decode("latin-1").strip()))

    def _read_chunked(self) -> bytes:
        out = bytearray()
        while True:
            size = int(self._read_line().split(b";", 1)[0], 16)
            if size == 0:
                while self._read_line():
                    pass
                return bytes(out)
            out += self._read_exact(size)
            self._read_line()
