"""The versioned store: revisions, conflicts, history roll-back, pagination snapshots, watch replay."""

from __future__ import annotations

import pytest

from apiserver.storage.interface import ADDED, DELETED, MODIFIED, StoreError
from apiserver.storage.memory import MemoryStorage

R = ("", "configmaps")


def obj(name: str, ns: str = "default", labels: dict[str, str] | None = None, v: int = 0) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "data": {"v": str(v)}}


def test_revisions_are_global_and_strictly_increasing() -> None:
    s = MemoryStorage(initial_rv=0)
    a = s.create(R, ("default", "a"), obj("a"))
    b = s.create(("", "secrets"), ("default", "b"), obj("b"))
    c = s.update(R, ("default", "a"), obj("a", v=1))
    assert (a.rv, b.rv, c.rv) == (1, 2, 3)
    assert c.obj["metadata"]["resourceVersion"] == "3"


def test_create_existing_update_missing_and_stale_rv() -> None:
    s = MemoryStorage(initial_rv=0)
    s.create(R, ("default", "a"), obj("a"))
    with pytest.raises(StoreError) as e:
        s.create(R, ("default", "a"), obj("a"))
    assert e.value.reason == "AlreadyExists"
    with pytest.raises(StoreError) as e:
        s.update(R, ("default", "zz"), obj("zz"))
    assert e.value.reason == "NotFound"
    with pytest.raises(StoreError) as e:
        s.update(R, ("default", "a"), obj("a", v=2), expected_rv=99)
    assert e.value.reason == "Conflict"
    # nothing stored changed
    assert s.get(R, ("default", "a")).obj["data"] == {"v": "0"}


def test_records_hand_out_independent_copies() -> None:
    s = MemoryStorage(initial_rv=0)
    rec = s.create(R, ("default", "a"), obj("a"))
    c = rec.copy()
    c["data"]["v"] = "mutated"
    assert s.get(R, ("default", "a")).copy()["data"]["v"] == "0"


def test_list_namespace_range_and_pagination() -> None:
    s = MemoryStorage(initial_rv=0)
    for ns in ("a", "b"):
        for i in range(5):
            s.create(R, (ns, f"o{i}"), obj(f"o{i}", ns))
    items, rv, last = s.list(R, "b", limit=2)
    assert [r.obj["metadata"]["name"] for r in items] == ["o0", "o1"]
    assert last == ("b", "o1") and rv == 10
    items, _, last = s.list(R, "b", limit=10, start=last)
    assert [r.obj["metadata"]["name"] for r in items] == ["o2", "o3", "o4"] and last is None
    assert len(s.list(R)[0]) == 10


def test_list_at_older_revision_rolls_back_later_writes() -> None:
    s = MemoryStorage(initial_rv=0)
    s.create(R, ("d", "a"), obj("a", "d"))
    s.create(R, ("d", "b"), obj("b", "d"))
    at = s.rv
    s.update(R, ("d", "a"), obj("a", "d", v=9))
    s.delete(R, ("d", "b"))
    s.create(R, ("d", "c"), obj("c", "d"))
    items, rv, _ = s.list(R, "d", at_rv=at)
    assert rv == at
    assert [(r.obj["metadata"]["name"], r.obj["data"]["v"]) for r in items] == [("a", "0"), ("b", "0")]


def test_list_at_compacted_revision_is_expired() -> None:
    s = MemoryStorage(initial_rv=0, history_size=2)
    s.create(R, ("d", "a"), obj("a", "d"))
    s.update(R, ("d", "a"), obj("a", "d", v=1))
    s.update(R, ("d", "a"), obj("a", "d", v=2))
    s.update(R, ("d", "a"), obj("a", "d", v=3))
    with pytest.raises(StoreError) as e:
        list(s.list(R, "d", at_rv=1)[0])
    assert e.value.reason == "Expired"


def test_watch_replays_history_after_rv_without_gap_or_duplicate() -> None:
    s = MemoryStorage(initial_rv=0)
    s.create(R, ("d", "a"), obj("a", "d"))
    since = s.rv
    s.update(R, ("d", "a"), obj("a", "d", v=1))
    s.create(R, ("d", "b"), obj("b", "d"))
    w, initial = s.watch(R, "d", None, since, False)
    assert [(t, r.rv) for t, r in initial] == [(MODIFIED, 2), (ADDED, 3)]
    s.delete(R, ("d", "a"))
    events = w.drain()
    assert [(t, r.rv) for t, r in events] == [(DELETED, 4)]
    assert events[0][1].obj["metadata"]["resourceVersion"] == "4"


def test_watch_from_compacted_rv_raises_expired() -> None:
    s = MemoryStorage(initial_rv=0, history_size=1)
    s.create(R, ("d", "a"), obj("a", "d"))
    s.update(R, ("d", "a"), obj("a", "d", v=1))
    s.update(R, ("d", "a"), obj("a", "d", v=2))
    with pytest.raises(StoreError):
        s.watch(R, "d", None, 1, False)


def test_watch_filter_transitions_become_added_and_deleted() -> None:
    s = MemoryStorage(initial_rv=0)
    s.create(R, ("d", "a"), obj("a", "d", {"app": "x"}))
    w, initial = s.watch(R, "", lambda o: o["metadata"]["labels"].get("app") == "x", None, True)
    assert [t for t, _ in initial] == [ADDED]
    s.update(R, ("d", "a"), obj("a", "d", {"app": "y"}))  # leaves the selection
    s.update(R, ("d", "a"), obj("a", "d", {"app": "x"}))  # comes back
    s.update(R, ("d", "a"), obj("a", "d", {"app": "x"}, v=5))
    got = [(t, r.rv) for t, r in w.drain()]
    assert got == [(DELETED, 2), (ADDED, 3), (MODIFIED, 4)]


def test_slow_watcher_is_closed_without_blocking_writers() -> None:
    s = MemoryStorage(initial_rv=0, watcher_buffer=3)
    slow, _ = s.watch(R, "", None, None, False)
    fast, _ = s.watch(R, "", None, None, False)
    for i in range(5):
        s.create(R, ("d", f"o{i}"), obj(f"o{i}", "d"))
        fast.drain()
    assert slow.closed and slow.error
    assert not fast.closed
    assert s.watcher_count() == 1
