"""Superseded revisions in the watch history keep only their bytes (RELEASE_LAG writes later),
and every reader still sees the same objects."""

from __future__ import annotations

import orjson

from apiserver.storage import cache
from apiserver.storage.interface import DELETED, MODIFIED, Record
from apiserver.storage.memory import MemoryStorage

R = ("", "configmaps")


def cm(name: str, v: int) -> dict:
    return {"metadata": {"name": name, "namespace": "d"}, "data": {"v": str(v)}}


def test_a_released_record_decodes_its_bytes() -> None:
    rec = Record({"a": 1}, orjson.dumps({"a": 1}), 5)
    rec.release()
    assert rec.obj == {"a": 1} and rec.copy() == {"a": 1} and rec.rv == 5


def test_superseded_revisions_are_released_after_the_lag_and_still_replay(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(cache, "RELEASE_LAG", 2)
    s = MemoryStorage(initial_rv=0)
    s.create(R, ("d", "a"), cm("a", 0))
    start = s.rv
    for v in range(1, 6):
        s.update(R, ("d", "a"), cm("a", v))
    s.delete(R, ("d", "a"))
    w, events = s.watch(R, "d", None, start, False)
    w.close()
    assert [t for t, _ in events] == [MODIFIED] * 5 + [DELETED]
    # what a resumed watch replays is unchanged, released or not
    assert [r.obj["data"]["v"] for _, r in events] == ["1", "2", "3", "4", "5", "5"]
    # of the 7 superseded records (v0..v5 and the tombstone) the two newest keep their dicts
    history = [r for _, r in events]  # v1..v5, tombstone
    assert [r._obj is None for r in history] == [True, True, True, True, False, False]


def test_a_current_record_nobody_shares_keeps_only_its_bytes_after_the_lag(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(cache, "RELEASE_LAG", 2)
    s = MemoryStorage(initial_rv=0)
    for name in ("a", "b", "c", "d"):
        s.create(R, ("d", name), cm(name, 0))
    recs, _, _ = s.list(R, "d")
    # an Event-like object no informer of this process holds: its decoded dict is gone
    assert [r._obj is None for r in recs] == [True, True, False, False]
    assert [(r.obj["metadata"]["name"], r.obj["data"]) for r in recs] == [(n, {"v": "0"}) for n in "abcd"]
    assert [orjson.loads(r.raw)["metadata"]["resourceVersion"] for r in recs] == ["1", "2", "3", "4"]


def test_a_shared_record_keeps_one_dict_while_current_and_drops_it_once_replaced(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(cache, "RELEASE_LAG", 2)
    s = MemoryStorage(initial_rv=0)
    rec = s.create(R, ("d", "a"), cm("a", 0))
    shared = rec.shared()
    assert rec.shared() is shared and orjson.loads(rec.raw) == shared
    for name in ("b", "c", "d"):
        s.create(R, ("d", name), cm(name, 0))
    assert s.get(R, ("d", "a")) is rec and rec.shared() is shared  # still the informers' object
    s.update(R, ("d", "a"), cm("a", 1))
    assert rec._obj is not None  # replaced only now: kept for the watchers a little behind
    for name in ("e", "f"):
        s.create(R, ("d", name), cm(name, 0))
    assert rec._obj is None and rec.obj == shared  # history keeps the bytes; decoding gives the same
    assert rec.shared() == shared and rec._obj is None  # a late sharer of a replaced revision gets a copy


def test_a_released_current_record_shared_later_is_decoded_once_for_every_sharer(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(cache, "RELEASE_LAG", 1)
    s = MemoryStorage(initial_rv=0)
    rec = s.create(R, ("d", "a"), cm("a", 0))
    s.create(R, ("d", "b"), cm("b", 0))
    assert rec._obj is None
    first = rec.shared()
    assert rec.shared() is first and first == orjson.loads(rec.raw)


def test_stored_bytes_take_only_their_size() -> None:
    # orjson returns its whole write buffer (4 KB or more); kept as is, 200 small objects pin 800 KB
    import tracemalloc

    s = MemoryStorage(initial_rv=0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        recs = [s.create(R, ("d", f"o{i}"), cm(f"o{i}", i)) for i in range(200)]
        for r in recs:
            r.release()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert all(len(r.raw) < 150 for r in recs)
    assert held < 200 * 1500  # bytes, Record, Event, key and history entries: well under 4 KB each
