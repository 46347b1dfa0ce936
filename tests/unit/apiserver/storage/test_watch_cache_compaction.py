"""The watch cache's history window: compaction by age and by bytes, 410 after it, and fresh
in-memory revisions that never repeat an earlier run's."""

from __future__ import annotations

import pytest

from apiserver.storage.interface import MODIFIED, StoreError
from apiserver.storage.memory import MemoryStorage, clock_revision
from apiserver.storage.options import StorageOptions, open_storage, parse_duration

R = ("", "configmaps")


class FakeMonotonic:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def cm(name: str, v: int = 0, pad: int = 0) -> dict:
    return {"metadata": {"name": name, "namespace": "d"}, "data": {"v": str(v), "pad": "x" * pad}}


def test_history_older_than_the_window_is_compacted_and_resuming_there_is_expired() -> None:
    clock = FakeMonotonic()
    s = MemoryStorage(initial_rv=0, history_window=300.0, monotonic=clock)
    s.create(R, ("d", "a"), cm("a"))
    old = s.rv
    s.update(R, ("d", "a"), cm("a", 1))
    # within the window a watch resumes from the old revision with exactly the missed event
    w, events = s.watch(R, "d", None, old, False)
    assert [(t, r.rv) for t, r in events] == [(MODIFIED, old + 1)]
    w.close()
    clock.t += 301
    s.update(R, ("d", "a"), cm("a", 2))  # a write after the window moved on compacts the rest
    assert s.history_held()[0] == 1
    with pytest.raises(StoreError) as e:
        s.watch(R, "d", None, old, False)
    assert e.value.reason == "Expired"
    # the newest revision is still resumable
    w, events = s.watch(R, "d", None, s.rv - 1, False)
    assert [r.rv for _, r in events] == [s.rv]


def test_an_idle_cache_compacts_by_age_when_a_client_resumes() -> None:
    clock = FakeMonotonic()
    s = MemoryStorage(initial_rv=0, history_window=60.0, monotonic=clock)
    s.create(R, ("d", "a"), cm("a"))
    s.update(R, ("d", "a"), cm("a", 1))
    clock.t += 61
    with pytest.raises(StoreError):
        s.watch(R, "d", None, 1, False)
    with pytest.raises(StoreError):
        s.list(R, "d", at_rv=1)


def test_history_bytes_bound_the_memory_one_hot_object_can_pin() -> None:
    s = MemoryStorage(initial_rv=0, history_bytes=50_000)
    s.create(R, ("d", "hot"), cm("hot", 0, 1000))
    for i in range(1, 2000):
        s.update(R, ("d", "hot"), cm("hot", i, 1000))
    events, held = s.history_held()
    assert held <= 50_000
    assert 0 < events < 60  # ~1 KB per revision: only the newest ~48 are kept
    with pytest.raises(StoreError):
        s.watch(R, "d", None, 5, False)
    # the object itself is current and intact
    assert s.get(R, ("d", "hot")).obj["data"]["v"] == "1999"


def test_compaction_spans_resources_in_revision_order() -> None:
    s = MemoryStorage(initial_rv=0, history_bytes=3_000)
    other = ("", "secrets")
    s.create(other, ("d", "s"), cm("s", 0, 500))
    first = s.rv
    for i in range(20):
        s.update(R, ("d", "a"), cm("a", i, 500)) if i else s.create(R, ("d", "a"), cm("a", 0, 500))
    # the secret's event is the oldest across resources: it went first
    with pytest.raises(StoreError):
        s.watch(other, "d", None, first - 1, False)
    assert s.get(other, ("d", "s")) is not None


def test_a_fresh_in_memory_server_starts_beyond_an_earlier_runs_revisions() -> None:
    earlier = MemoryStorage()
    for i in range(100):
        earlier.create(R, ("d", f"o{i}"), cm(f"o{i}"))
    later = MemoryStorage()
    assert later.rv > earlier.rv - 100  # started from the clock, not from 0
    rec = later.create(R, ("d", "x"), cm("x"))
    assert rec.rv > clock_revision() - 10_000_000
    # an informer resuming from the earlier run's revision cannot silently resume: it is too old
    with pytest.raises(StoreError) as e:
        later.watch(R, "d", None, 5, False)
    assert e.value.reason == "Expired"


@pytest.mark.parametrize(
    ("text", "seconds"), [("5m", 300.0), ("90s", 90.0), ("1h30m", 5400.0), ("1m0s", 60.0), ("2.5", 2.5)]
)
def test_parse_duration_accepts_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "m5", "-1", "0", "5m garbage"])
def test_parse_duration_refuses_bad_values(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_storage_options_reach_the_watch_cache() -> None:
    store = open_storage(StorageOptions(watch_history=42.0, watch_history_bytes=1234))
    assert store.history_window == 42.0 and store.history_bytes == 1234


def _resumable(s: MemoryStorage, res: tuple[str, str], after: int) -> list[int] | None:
    """The revisions a watch of ``res`` resuming after ``after`` replays, or None when Expired."""
    try:
        w, events = s.watch(res, "d", None, after, False)
    except StoreError as e:
        assert e.reason == "Expired"
        return None
    w.close()
    return [r.rv for _, r in events]


def test_interleaved_resources_compact_each_ones_own_oldest_events() -> None:
    """Writes to several resources interleave in the timeline; compacting by age, then to a
    revision, drops from each resource exactly its events below the horizon, no other's."""
    clock = FakeMonotonic()
    s = MemoryStorage(initial_rv=0, history_window=100.0, monotonic=clock)
    resources = [R, ("", "secrets"), ("", "services")]
    revs: dict[tuple[str, str], list[int]] = {r: [] for r in resources}
    for i in range(30):
        res = resources[i % 3 if i < 15 else (i * i) % 3]  # round-robin, then an uneven mix
        if revs[res]:
            s.update(res, ("d", "o"), cm("o", i))
        else:
            s.create(res, ("d", "o"), cm("o", i))
        revs[res].append(s.rv)
        clock.t += 10.0  # write i happens at 1000 + 10 i
    # a write now (t = 1300) moves the window to t > 1200: writes 0..19 leave, 20..29 stay
    s.update(R, ("d", "o"), cm("o", 99))
    revs[R].append(s.rv)
    assert s.history_held()[0] == 31 - 20
    _assert_history(s, revs, 20)  # write i is revision i + 1
    # an explicit compaction (etcd's) to a revision inside the window: a floor for every resource
    s.compact_to(25)
    assert s.history_held()[0] == 31 - 25
    for res, rvs in revs.items():
        assert _resumable(s, res, 25) == [rv for rv in rvs if rv > 25]
        assert _resumable(s, res, 24) is None


def _assert_history(s: MemoryStorage, revs: dict[tuple[str, str], list[int]], dropped_to: int) -> None:
    """Each resource resumes from its last dropped revision on, with exactly its kept events, and
    is Expired before it."""
    for res, rvs in revs.items():
        kept = [rv for rv in rvs if rv > dropped_to]
        last_dropped = max(rv for rv in rvs if rv <= dropped_to)
        assert _resumable(s, res, last_dropped) == kept  # services: none kept after 20
        assert _resumable(s, res, last_dropped - 1) is None
