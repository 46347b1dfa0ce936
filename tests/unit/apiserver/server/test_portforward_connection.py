"""The server side of kubelet's SPDY port-forward protocol, driven as kubectl drives it: a stream
pair per connection, the echo on the data stream, half-closes, pings, refusals, flow control."""

from __future__ import annotations

import asyncio

from apiserver.server import spdy
from apiserver.server.portforward import PortForwardConnection


class Client:
    """kubectl's side: encodes with its own header context, decodes what the server sent."""

    def __init__(self) -> None:
        self.out = spdy.HeaderCodec()
        self.reader = spdy.FrameReader(spdy.HeaderCodec())
        self.received: list[spdy.Frame] = []
        self.conn = PortForwardConnection(self._from_server, "ns/web")

    async def _from_server(self, raw: bytes) -> None:
        self.received += self.reader.feed(raw)

    def send(self, *frames: spdy.Frame) -> list[spdy.Frame]:
        self.received = []
        raw = b"".join(spdy.encode(f, self.out) for f in frames)
        asyncio.run(self.conn.feed(raw))
        return self.received

    def pair(self, error_sid: int, request_id: str, port: int = 8080) -> list[spdy.Frame]:
        def syn(sid: int, kind: str) -> spdy.Frame:
            return spdy.Frame(
                spdy.SYN_STREAM,
                sid,
                headers={"streamType": [kind], "port": [str(port)], "requestID": [request_id]},
            )

        return self.send(syn(error_sid, "error"), spdy.data(error_sid, fin=True), syn(error_sid + 2, "data"))


def kinds(frames: list[spdy.Frame]) -> list[tuple[int, int, bytes, bool]]:
    return [(f.kind, f.stream_id, f.data, f.fin) for f in frames]


def test_each_stream_is_accepted_and_the_data_stream_echoes() -> None:
    c = Client()
    assert kinds(c.pair(1, "0")) == [(spdy.SYN_REPLY, 1, b"", False), (spdy.SYN_REPLY, 3, b"", False)]
    assert kinds(c.send(spdy.data(3, b"GET / HTTP/1.1\r\n\r\n"))) == [
        (0, 3, b"GET / HTTP/1.1\r\n\r\n", False)
    ]
    assert c.conn.forwarded == 1


def test_the_client_half_closing_ends_both_streams_of_that_connection_only() -> None:
    c = Client()
    c.pair(1, "0")
    c.pair(5, "1")
    got = c.send(spdy.data(3, b"bye", fin=True))
    assert kinds(got) == [(0, 3, b"bye", False), (0, 3, b"", True), (0, 1, b"", True)]
    assert set(c.conn.streams) == {5, 7}
    assert kinds(c.send(spdy.data(7, b"still here"))) == [(0, 7, b"still here", False)]


def test_pings_from_the_client_are_answered() -> None:
    c = Client()
    got = c.send(spdy.Frame(spdy.PING, ping_id=1))
    assert [(f.kind, f.ping_id) for f in got] == [(spdy.PING, 1)]


def test_bad_streams_are_refused_and_unknown_streams_reset() -> None:
    c = Client()
    got = c.send(spdy.Frame(spdy.SYN_STREAM, 1, headers={"streamType": ["data"], "port": ["http"]}))
    assert [(f.kind, f.stream_id, f.status) for f in got] == [(spdy.RST_STREAM, 1, spdy.REFUSED_STREAM)]
    got = c.send(spdy.data(9, b"x"))
    assert [(f.kind, f.stream_id, f.status) for f in got] == [(spdy.RST_STREAM, 9, spdy.INVALID_STREAM)]


def test_a_peer_doing_flow_control_is_sent_no_more_than_its_window() -> None:
    c = Client()
    c.send(spdy.Frame(spdy.SETTINGS, settings={spdy.SETTINGS_INITIAL_WINDOW_SIZE: 10}))
    c.pair(1, "0")
    got = c.send(spdy.data(3, b"0123456789abcdef"))
    assert b"".join(f.data for f in got if f.kind == 0) == b"0123456789"
    # the server's receive window asks for no update yet (16 bytes of 64 KiB)
    assert not [f for f in got if f.kind == spdy.WINDOW_UPDATE]
    got = c.send(spdy.Frame(spdy.WINDOW_UPDATE, 3, delta=100))
    assert kinds(got) == [(0, 3, b"abcdef", False)]


def test_the_server_replenishes_the_clients_send_window() -> None:
    c = Client()
    c.pair(1, "0")
    got = c.send(spdy.data(3, b"x" * (40 * 1024)))
    updates = {(f.stream_id, f.delta) for f in got if f.kind == spdy.WINDOW_UPDATE}
    assert updates == {(3, 40 * 1024), (0, 40 * 1024)}


def test_goaway_ends_the_connection() -> None:
    c = Client()
    c.pair(1, "0")
    c.received = []
    asyncio.run(c.conn.goaway())
    assert [(f.kind, f.stream_id) for f in c.received] == [(spdy.GOAWAY, 3)]
    assert c.conn.closed


def test_nothing_is_kept_for_finished_or_reset_connections() -> None:
    c = Client()
    c.pair(1, "0")
    c.pair(5, "1")
    c.send(spdy.data(3, b"x", fin=True))  # connection 0 closed both ways by the client
    c.send(
        spdy.Frame(spdy.RST_STREAM, 5, status=spdy.CANCEL), spdy.Frame(spdy.RST_STREAM, 7, status=spdy.CANCEL)
    )
    assert c.conn.streams == {}
    assert c.conn.responders == {}
