"""The correlator's keys and LRU updates, checked against the straightforward implementation.

``ReferenceCorrelator`` below is client-go's ``EventCorrelator`` written plainly (tuple keys, an
LRU ``get`` and ``add`` for every step, as the recorder's correlator was before its keys became
strings built once per event and its state updates in place). Random streams of events (few
objects, reasons and messages, so that aggregation, de-duplication, the spam filter and LRU
eviction all happen; clashing names reported back) must get the same answer from both, and
leave the same entries in the same LRU order.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import pytest

from apiserver.api.types import Obj
from apiserver.client.eventcorrelator import (
    AGGREGATE_INTERVAL_S,
    AGGREGATE_MAX_EVENTS,
    AGGREGATE_PREFIX,
    MAX_LRU_ENTRIES,
    SPAM_BURST,
    SPAM_QPS,
    EventCorrelator,
    _Aggregate,  # a group's growing set of messages is unchanged: shared
    take_token,
)

K = TypeVar("K")
V = TypeVar("V")


@dataclass(slots=True)
class _Observation:
    """A de-duplication entry as an object (the correlator keeps a tuple of the same values)."""

    count: int
    first_timestamp: float
    name: str


def _aggregate_values(entry: object) -> tuple[object, float]:
    """``(messages, last)`` of an aggregation entry: a ``(message, last)`` tuple or an ``_Aggregate``."""
    if isinstance(entry, tuple):
        return entry[0], entry[1]
    assert isinstance(entry, _Aggregate)
    return entry.keys, entry.last


class LRU(Generic[K, V]):
    """``groupcache/lru``: a read refreshes the entry; the least recently used one goes first.

    A plain dict keeps insertion order: refreshing an entry is re-inserting it at the end.
    """

    def __init__(self, size: int = MAX_LRU_ENTRIES) -> None:
        self.size = size
        self._d: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        d = self._d
        v = d.pop(key, None)
        if v is not None:
            d[key] = v
        return v

    def add(self, key: K, value: V) -> None:
        d = self._d
        d.pop(key, None)
        d[key] = value
        if len(d) > self.size:
            del d[next(iter(d))]

    def __len__(self) -> int:
        return len(self._d)


@dataclass(slots=True)
class Correlated:
    """What to write: a new Event (``count == 1``) or a patch of ``name`` to ``count`` (read-only)."""

    name: str
    message: str
    count: int
    #: when the event (the aggregate, for a combined one) was first seen
    first_timestamp: float
    #: the cache key the recorder reports the stored name back under
    key: tuple[object, ...]
    #: a combined event: upstream builds it from the source, object, type, reason and message
    #: only (no reporting controller or instance, no related object)
    aggregate: bool = False


def object_key(ref: Obj) -> tuple[str, ...]:
    """The involved object as the spam and aggregation keys read it."""
    return (
        ref.get("kind", ""),
        ref.get("namespace", ""),
        ref.get("name", ""),
        ref.get("uid", ""),
        ref.get("apiVersion", ""),
    )


class ReferenceCorrelator:
    """Aggregation, de-duplication and spam filtering for one recorder (see module docstring).

    ``component`` and ``host`` are the recorder's ``source``: one correlator serves one source
    (and one reporting controller and instance), so the keys leave them out. They nest instead of
    repeating: a group is (object, type, reason), an event (group, fieldPath, message), all
    sharing the object's tuple. ``max_events <= 0`` turns aggregation off, ``burst <= 0`` the
    spam filter.
    """

    def __init__(
        self,
        component: str,
        host: str = "",
        *,
        max_events: int = AGGREGATE_MAX_EVENTS,
        interval: float = AGGREGATE_INTERVAL_S,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
        size: int = MAX_LRU_ENTRIES,
    ) -> None:
        self.source = (component, host)
        self.max_events = max_events
        self.interval = interval
        self.burst = burst
        self.qps = qps
        self._aggregates: LRU[tuple[object, ...], _Aggregate] = LRU(size)
        self._observed: LRU[tuple[object, ...], _Observation] = LRU(size)
        self._spam: LRU[tuple[str, ...], float] = LRU(size)
        #: events dropped by the spam filter (their count lives on in the cache)
        self.filtered = 0

    @classmethod
    def dedup_only(cls, component: str, host: str = "") -> ReferenceCorrelator:
        """Exact de-duplication alone: no aggregation, no spam filter."""
        return cls(component, host, max_events=0, burst=0)

    def correlate(
        self, ref: Obj, etype: str, reason: str, message: str, now: float, new_name: Callable[[], str]
    ) -> Correlated | None:
        """The write for this event, or None when the spam filter drops it.

        ``new_name()`` names a new Event (``<object>.<nanoseconds hex>``); it is only called
        when one is made.
        """
        obj = object_key(ref)
        group = (obj, etype, reason)
        # 1. aggregation
        aggregate = False
        if self.max_events > 0:
            agg = self._aggregates.get(group)  # a hit is refreshed in the LRU and updated in place
            if agg is None or now - agg.last > self.interval:
                agg = _Aggregate(message, now)
                self._aggregates.add(group, agg)
                aggregate = self.max_events <= 1
            else:
                aggregate = agg.add(message, self.max_events)
                agg.last = now
        if aggregate:
            key: tuple[object, ...] = group
            message = AGGREGATE_PREFIX + message
        else:
            key = (group, ref.get("fieldPath", ""), message)
        # 2. de-duplication
        seen = self._observed.get(key)
        if seen is not None and seen.count > 0:
            seen.count += 1
            out = Correlated(seen.name, message, seen.count, seen.first_timestamp, key, aggregate)
        else:
            out = Correlated(new_name(), message, 1, now, key, aggregate)
            self._observed.add(key, _Observation(1, now, out.name))
        # 3. spam filter
        if self.burst <= 0:
            return out
        full_at = self._spam.get(obj)
        taken = take_token(now if full_at is None else full_at, now, self.qps, self.burst)
        if taken is None:
            self.filtered += 1
            return None
        self._spam.add(obj, taken)
        return out

    def update_state(self, written: Correlated, name: str, count: int) -> None:
        """``UpdateState``: what the server stored (its name may differ after a clash)."""
        self._observed.add(written.key, _Observation(count, written.first_timestamp, name))


def _refs(rnd: random.Random, n: int) -> list[Obj]:
    out: list[Obj] = []
    for i in range(n):
        ref: Obj = {"kind": rnd.choice(["Pod", "Node"]), "name": f"o{i}", "uid": f"u{i}", "apiVersion": "v1"}
        if ref["kind"] == "Pod":
            ref["namespace"] = rnd.choice(["a", "b"])
        if rnd.random() < 0.3:
            ref["fieldPath"] = rnd.choice(["spec.containers{c}", "spec.containers{d}"])
        out.append(ref)
    return out


@pytest.mark.parametrize("seed", range(16))
def test_every_answer_and_every_lru_order_equals_the_reference(seed: int) -> None:
    rnd = random.Random(seed)
    size = rnd.choice([3, 8, 64, MAX_LRU_ENTRIES])
    kwargs = rnd.choice(
        [
            {},
            {"max_events": 3, "interval": 5.0, "burst": 4, "qps": 0.5},
            {"max_events": 1},
            {"max_events": 0, "burst": 0},
        ]
    )
    new = EventCorrelator("kubelet", "n1", size=size, **kwargs)  # type: ignore[arg-type]
    ref = ReferenceCorrelator("kubelet", "n1", size=size, **kwargs)  # type: ignore[arg-type]
    refs = _refs(rnd, rnd.choice([2, 5, 20]))
    now = 0.0
    counter = 0
    pending: list[tuple[Correlated, Correlated]] = []
    names: list[str] = []
    for _ in range(600):
        now += rnd.choice([0.0, 0.0, 0.1, 1.0, 7.0, 400.0])
        r = rnd.choice(refs)
        etype = rnd.choice(["Normal", "Warning"])
        reason = rnd.choice(["Pulled", "Started", "Failed"])
        message = rnd.choice(["m1", "m2", "m3", "m4", f"m{rnd.randint(0, 40)}"])
        names.clear()

        def fresh() -> str:
            nonlocal counter
            counter += 1
            names.append(f"e{counter}")
            return names[-1]

        got = new.correlate(r, etype, reason, message, now, fresh)
        want = ref.correlate(r, etype, reason, message, now, lambda: names[-1])
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert (got.name, got.message, got.count, got.first_timestamp, got.aggregate) == (
                want.name,
                want.message,
                want.count,
                want.first_timestamp,
                want.aggregate,
            )
            # the write, sometimes under another name (a clash), sometimes reported only after
            # the next event was correlated (another recorder's task, a slow write)
            for g, w in pending:
                new.update_state(g, g.name + "y", g.count)
                ref.update_state(w, w.name + "y", w.count)
            pending.clear()
            stored = got.name if rnd.random() < 0.9 else got.name + "x"
            roll = rnd.random()
            if roll < 0.7:
                new.update_state(got, stored, got.count)
                ref.update_state(want, stored, want.count)
            elif roll < 0.85:
                pending.append((got, want))
        assert new.filtered == ref.filtered
        # same entries, same order, same values
        assert len(new._aggregates) == len(ref._aggregates)
        assert len(new._observed) == len(ref._observed)
        assert len(new._spam) == len(ref._spam)
        assert list(new._observed.entries.values()) == [
            (o.count, o.first_timestamp, o.name) for o in ref._observed._d.values()
        ]
        assert list(new._spam._d.values()) == list(ref._spam._d.values())
        assert [_aggregate_values(a) for a in new._aggregates.entries.values()] == [
            (a.keys, a.last) for a in ref._aggregates._d.values()
        ]
