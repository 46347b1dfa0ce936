"""kubelet's v4 remote-command streams over SPDY, as kubectl opens them: which streams are
waited for, stdin into the process, output on the right stream, the Status last."""

from __future__ import annotations

import asyncio
import json

from apiserver.server import spdy
from apiserver.server.remotecommand import RemoteCommandConnection


def syn(sid: int, kind: str) -> spdy.Frame:
    return spdy.Frame(spdy.SYN_STREAM, sid, headers={"streamType": [kind]})


class Client:
    def __init__(self, **wanted: bool) -> None:
        self.out = spdy.HeaderCodec()
        self.reader = spdy.FrameReader(spdy.HeaderCodec())
        self.received: list[spdy.Frame] = []
        flags = {"stdin": False, "stdout": True, "stderr": True, "tty": False, **wanted}
        self.conn = RemoteCommandConnection(self._from_server, flags)

    async def _from_server(self, raw: bytes) -> None:
        self.received += self.reader.feed(raw)

    async def send(self, *frames: spdy.Frame) -> None:
        await self.conn.feed(b"".join(spdy.encode(f, self.out) for f in frames))


def test_the_process_waits_for_every_stream_asked_for() -> None:
    async def go() -> None:
        c = Client(stdin=True)
        await c.send(syn(1, "error"), syn(3, "stdin"), syn(5, "stdout"))
        assert not c.conn.ready.is_set()  # stderr was asked for and is not there yet
        await c.send(syn(7, "stderr"))
        assert c.conn.ready.is_set()
        assert [(f.kind, f.stream_id) for f in c.received] == [(spdy.SYN_REPLY, s) for s in (1, 3, 5, 7)]

    asyncio.run(go())


def test_a_tty_has_a_resize_stream_and_no_stderr() -> None:
    async def go() -> None:
        c = Client(stdin=True, tty=True)
        await c.send(syn(1, "error"), syn(3, "stdin"), syn(5, "stdout"), syn(7, "resize"))
        assert c.conn.ready.is_set()
        await c.send(spdy.data(7, b'{"Width":80,"Height":24}'), spdy.data(3, b"ls\r"))
        assert await c.conn.stdin.get() == b"ls\n"
        c.conn.out(2)(b"oops\n")  # with a TTY, stderr goes to the terminal
        c.conn.output.put_nowait(None)
        await c.conn.drain_output()
        assert [(f.stream_id, f.data) for f in c.received if f.kind == 0] == [
            (5, b"ls\r\n"),
            (5, b"oops\r\n"),
        ]

    asyncio.run(go())


def test_stdin_closed_by_the_client_ends_the_input() -> None:
    async def go() -> None:
        c = Client(stdin=True)
        await c.send(syn(1, "error"), syn(3, "stdin"), spdy.data(3, b"echo hi\n", fin=True))
        assert await c.conn.stdin.get() == b"echo hi\n"
        assert await c.conn.stdin.get() is None

    asyncio.run(go())


def test_unknown_and_repeated_stream_types_are_refused() -> None:
    async def go() -> None:
        c = Client()
        await c.send(syn(1, "error"), syn(3, "error"), syn(5, "video"))
        assert [(f.kind, f.stream_id) for f in c.received] == [
            (spdy.SYN_REPLY, 1),
            (spdy.RST_STREAM, 3),
            (spdy.RST_STREAM, 5),
        ]

    asyncio.run(go())


def test_the_status_goes_on_the_error_stream_then_everything_closes() -> None:
    async def go() -> None:
        c = Client()
        await c.send(syn(1, "error"), syn(3, "stdout"), syn(5, "stderr"))
        c.conn.out(1)(b"out\n")
        c.conn.out(2)(b"err\n")
        c.conn.output.put_nowait(None)
        await c.conn.drain_output()
        await c.conn.finish({"metadata": {}, "status": "Success"})
        data = [(f.stream_id, f.data, f.fin) for f in c.received if f.kind == 0]
        assert data[:3] == [
            (3, b"out\n", False),
            (5, b"err\n", False),
            (1, b'{"metadata": {}, "status": "Success"}', False),
        ]
        assert json.loads(data[2][1])["status"] == "Success"
        assert {(sid, fin) for sid, _, fin in data[3:]} == {(1, True), (3, True), (5, True)}
        assert c.received[-1].kind == spdy.GOAWAY

    asyncio.run(go())
