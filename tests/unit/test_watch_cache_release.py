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
