"""The pure parts of the event correlator: its LRU caches and the spam filter's token bucket."""

from __future__ import annotations

from apiserver.client.eventcorrelator import LRU, EventCorrelator, take_token

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
    def run(times: list[float], qps: float = 0.5, burst: int = 2) -> list[bool]:
        full_at: float | None = None
        out = []
        for now in times:
            taken = take_token(now if full_at is None else full_at, now, qps, burst)
            out.append(taken is not None)
            if taken is not None:
                full_at = taken
        return out

    assert run([0.0, 0.0, 0.0]) == [True, True, False]
    assert run([0.0, 0.0, 1.0, 2.0]) == [True, True, False, True]  # half a token, then a whole one
    assert run([0.0, 0.0, 100.0, 100.0, 100.0]) == [True, True, True, True, False]  # never above burst
    # client-go's defaults: 25 at once, the 26th refused, one more after exactly 300 s
    assert run([0.0] * 26 + [299.0, 300.0], qps=1 / 300, burst=25) == [True] * 25 + [False, False, True]


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
