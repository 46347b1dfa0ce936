"""The SPDY/3.1 codec kubectl's port-forward is answered with: frames, header compression with
the SPDY/3 dictionary, flow-control windows."""

from __future__ import annotations

import struct
import zlib

import pytest

from apiserver.server import spdy


def roundtrip(frames: list[spdy.Frame], piece: int = 0) -> list[spdy.Frame]:
    out_codec, in_codec = spdy.HeaderCodec(), spdy.HeaderCodec()
    raw = b"".join(spdy.encode(f, out_codec) for f in frames)
    reader = spdy.FrameReader(in_codec)
    if not piece:
        return reader.feed(raw)
    got: list[spdy.Frame] = []
    for i in range(0, len(raw), piece):
        got += reader.feed(raw[i : i + piece])
    return got


def test_the_dictionary_is_spdy3s() -> None:
    # the id a zlib stream primed with it carries (SPDY/3 spec, 2.6.10.1), and its size
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2
    assert len(spdy.DICTIONARY) == 1423
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b",*,enq=0.")


def test_every_frame_kind_round_trips_split_byte_by_byte() -> None:
    frames = [
        spdy.Frame(
            spdy.SYN_STREAM, 1, headers={"streamtype": ["error"], "port": ["8080"], "requestid": ["0"]}
        ),
        spdy.Frame(spdy.SYN_STREAM, 3, spdy.FLAG_FIN, {"streamtype": ["data"]}, associated=1, priority=7),
        spdy.Frame(spdy.SYN_REPLY, 1),
        spdy.Frame(spdy.HEADERS, 3, headers={"x": ["a", "b"]}),
        spdy.data(3, b"hello"),
        spdy.data(3, fin=True),
        spdy.Frame(spdy.RST_STREAM, 5, status=spdy.CANCEL),
        spdy.Frame(spdy.SETTINGS, settings={spdy.SETTINGS_INITIAL_WINDOW_SIZE: 1 << 20, 4: 100}),
        spdy.Frame(spdy.PING, ping_id=7),
        spdy.Frame(spdy.WINDOW_UPDATE, 0, delta=12345),
        spdy.Frame(spdy.GOAWAY, 9, status=2),
    ]
    assert roundtrip(frames, piece=1) == frames
    assert roundtrip(frames) == frames


def test_wire_layout_of_control_and_data_frames() -> None:
    codec = spdy.HeaderCodec()
    raw = spdy.encode(spdy.Frame(spdy.PING, ping_id=1), codec)
    assert raw == bytes.fromhex("800300060000000400000001")
    raw = spdy.encode(spdy.data(5, b"ab", fin=True), codec)
    assert raw == bytes.fromhex("0000000501000002") + b"ab"
    raw = spdy.encode(spdy.Frame(spdy.WINDOW_UPDATE, 3, delta=100), codec)
    assert raw == bytes.fromhex("80030009000000080000000300000064")


def test_header_blocks_share_one_compression_context_per_direction() -> None:
    sender, receiver = spdy.HeaderCodec(), spdy.HeaderCodec()
    headers = {"streamtype": ["data"], "port": ["8080"], "requestid": ["12"]}
    first, second = sender.compress(headers), sender.compress(headers)
    # the second block refers back to the first: shorter, and unreadable without it
    assert len(second) < len(first)
    with pytest.raises(spdy.ProtocolError):
        spdy.HeaderCodec().decompress(second)
    assert receiver.decompress(first) == headers
    assert receiver.decompress(second) == headers


def test_a_block_from_a_plain_zlib_peer_using_the_dictionary_decodes() -> None:
    """What another implementation (Go's framer) sends: a zlib stream primed with the dictionary,
    sync-flushed per block; names are matched case-insensitively."""
    peer = zlib.compressobj(zdict=spdy.DICTIONARY)
    raw = struct.pack(">I", 1) + struct.pack(">I", 10) + b"Streamtype" + struct.pack(">I", 5) + b"error"
    block = peer.compress(raw) + peer.flush(zlib.Z_SYNC_FLUSH)
    assert spdy.HeaderCodec().decompress(block) == {"streamtype": ["error"]}


def test_garbage_is_a_protocol_error_not_a_crash() -> None:
    with pytest.raises(spdy.ProtocolError):
        spdy.FrameReader(spdy.HeaderCodec()).feed(bytes.fromhex("800200060000000400000001"))
    with pytest.raises(spdy.ProtocolError):
        spdy.FrameReader(spdy.HeaderCodec()).feed(bytes.fromhex("800300010000000c") + b"\x00" * 12)
    with pytest.raises(spdy.ProtocolError):
        spdy.FrameReader(spdy.HeaderCodec()).feed(bytes.fromhex("8003000600000001") + b"\x00")
    # an unknown control frame type is skipped, as SPDY/3 requires
    assert spdy.FrameReader(spdy.HeaderCodec()).feed(bytes.fromhex("800300ff00000000")) == []


def test_send_window_limits_and_grows() -> None:
    w = spdy.Window()
    assert w.take(100_000) == 64 * 1024
    assert w.take(1) == 0
    w.grow(10)
    assert w.take(100) == 10
    with pytest.raises(spdy.ProtocolError):
        spdy.Window().grow(2**31 - 64 * 1024)  # past 2^31-1: a flow-control error
    with pytest.raises(spdy.ProtocolError):
        w.grow(0)
    w.resize(128 * 1024)  # SETTINGS_INITIAL_WINDOW_SIZE moves an open window by the difference
    assert w.available == 64 * 1024


def test_receive_window_asks_for_more_at_half_and_refuses_overruns() -> None:
    w = spdy.Window()
    assert w.consumed(30 * 1024) == 0
    assert w.consumed(3 * 1024) == 33 * 1024  # past half: top the window back up
    assert w.available == 64 * 1024
    with pytest.raises(spdy.ProtocolError):
        w.consumed(64 * 1024 + 1)
