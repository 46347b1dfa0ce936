"""The pure parts of the event correlator: its LRU caches and the spam filter's token bucket."""

from __future__ import annotations

from apiserver.client.eventcorrelator import LRU, EventCorrelator, TokenBucket

REF = {"kind": "Pod", "namespace": "default", "name": "web-0", "uid": "u-1", "apiVersion": "v1"}


def test_lru_drops_the_least_recently_used_entry() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.add("a", 1)
    lru.add("b", 2)
    assert lru.get("a") == 1  # "a" is now the most recent
    lru.add("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3
    assert len(lru) == 2


def test_token_bucket_starts_full_and_refills_at_its_rate() -> None:
    bucket = TokenBucket(qps=0.5, burst=2, now=0.0)
    assert [bucket.try_accept(0.0) for _ in range(3)] == [True, True, False]
    assert not bucket.try_accept(1.0)  # half a token
    assert bucket.try_accept(2.0)
    assert bucket.try_accept(100.0) and bucket.try_accept(100.0) and not bucket.try_accept(100.0)


def test_a_forgotten_event_is_a_new_one() -> None:
    """Entries past the LRU size are forgotten: the next repeat is written as a new Event."""
    c = EventCorrelator("kubelet", size=2)
    names = iter(f"e{i}" for i in range(10))
    first = c.correlate(REF, "Normal", "A", "a", 0.0, lambda: next(names))
    c.correlate(REF, "Normal", "B", "b", 0.0, lambda: next(names))
    c.correlate(REF, "Normal", "C", "c", 0.0, lambda: next(names))
    again = c.correlate(REF, "Normal", "A", "a", 0.0, lambda: next(names))
    assert first is not None and again is not None
    assert (first.name, first.count) == ("e0", 1)
    assert (again.name, again.count) == ("e3", 1)
