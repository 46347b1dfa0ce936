"""client-go's ``EventCorrelator`` (``tools/record/events_cache.go``): what a recorder writes, if anything.

Every component that records through ``tools/record`` (the controller manager, the kubelet)
passes each event through three steps before it reaches the API, in this order:

1. **Aggregation** — events that differ only in their message (same source, involved object,
   type and reason) are *similar*. Once 10 distinct messages were seen within 10 minutes, the
   next one becomes a new event whose message is ``"(combined from similar events): " + message``,
   keyed by the group, so every later similar event only counts it up. A StatefulSet of a thousand
   replicas therefore shows nine ``create Pod web-N ... successful`` events and one combined one
   (``x991``), not a thousand.
2. **De-duplication** — an event identical to one already written (same key, message included)
   is a patch of that event's ``count`` and ``lastTimestamp`` instead of a new object.
3. **Spam filter** — a token bucket per (source, involved object): a burst of 25 events, then one
   more every 5 minutes. A filtered event writes nothing, but steps 1-2 have already counted it,
   so the next write that gets through carries the full count.

Each cache is an LRU of 4096 entries, as upstream. The correlator is pure (no I/O): the recorder
asks :meth:`EventCorrelator.correlate` and writes what it answers, then reports the stored event's
name back with :meth:`EventCorrelator.update_state`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

from apiserver.api.types import Obj

MAX_LRU_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_S = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "
_INF = float("inf")

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """``groupcache/lru``: a read refreshes the entry; the least recently used one goes first.

    An ``OrderedDict`` keeps the recency order (refreshing an entry is re-inserting it at the
    end) and drops the oldest entry in constant time. A plain dict keeps the same order, but
    finding its first live entry walks past every slot deleted since its last resize: once the
    cache is full (a recorder that reported on more than 4096 objects), every write evicts, and
    each eviction scanned hundreds of dead slots (about 2.4 µs, three caches per event).
    """

    def __init__(self, size: int = MAX_LRU_ENTRIES) -> None:
        self.size = size
        self._d: OrderedDict[K, V] = OrderedDict()

    @property
    def entries(self) -> OrderedDict[K, V]:
        """The entries, least recently used first, for a caller that takes the steps of
        :meth:`take` and :meth:`put` on them itself (same order, same size bound)."""
        return self._d

    def get(self, key: K) -> V | None:
        d = self._d
        v = d.get(key)
        if v is not None:
            d.move_to_end(key)
        return v

    def add(self, key: K, value: V) -> None:
        d = self._d
        d.pop(key, None)
        d[key] = value
        if len(d) > self.size:
            d.popitem(last=False)

    def take(self, key: K) -> V | None:
        """Remove and return the entry (None if absent): the first half of a read-then-``put``
        that refreshes and replaces it, in one lookup less than :meth:`get` then :meth:`add`."""
        return self._d.pop(key, None)

    def put(self, key: K, value: V) -> None:
        """:meth:`add` of a key known to be absent (just :meth:`take`-n, or missed)."""
        d = self._d
        d[key] = value
        if len(d) > self.size:
            d.popitem(last=False)

    def newest(self, key: K) -> V | None:
        """The entry of ``key`` if it is the most recently used one (an ``add`` of it would change
        nothing but its value), else None; no refresh."""
        d = self._d
        if d and next(reversed(d)) == key:
            return d[key]
        return None

    def __len__(self) -> int:
        return len(self._d)


def take_token(full_at: float, now: float, qps: float, burst: int) -> float | None:
    """``flowcontrol.NewTokenBucketRateLimiterWithClock(qps, burst).TryAccept()`` on a bucket held
    as one float: the time it would be full again (a new bucket: ``now``, full). Returns the new
    value when a token was taken, None when none is left. One float per involved object instead
    of an object with a count and a time: a recorder keeps one per object it reported on."""
    missing = max(full_at - now, 0.0) * qps  # tokens short of a full bucket
    if burst - missing >= 1.0 - 1e-9:  # the tolerance absorbs the float error of the rate
        return max(full_at, now) + 1.0 / qps
    return None


class _Aggregate:
    """The distinct messages of a group that saw more than one lately: a set of fewer than the
    limit. A group that saw one message is held as a ``(message, last)`` tuple instead (most
    groups never get another: a kubelet's ``Started`` of one container); this class keeps the
    steps of the first design (a string, then a set) so that the set a group grows into is
    built exactly as before."""

    __slots__ = ("keys", "last")

    def __init__(self, message: str, now: float) -> None:
        self.keys: str | set[str] = message
        self.last = now

    def add(self, message: str, limit: int) -> bool:
        """Count ``message`` in; True when the group has ``limit`` distinct messages (the set
        then drops one, so it never grows past the limit)."""
        keys = self.keys
        if isinstance(keys, str):
            if keys == message:
                return limit <= 1
            keys = self.keys = {keys}
        keys.add(message)
        if len(keys) >= limit:
            keys.pop()
            return True
        return False


#: An aggregation entry: ``(message, last seen)`` while its group saw one message, else an
#: :class:`_Aggregate`. A de-duplication entry: ``(count, first seen, Event name)``.
#: Tuples of strings and numbers rather than objects: CPython's cyclic collector stops tracking
#: such a tuple the first time a collection examines it, while an instance of a class stays
#: tracked, and is traversed by every later collection of its generation, for as long as the
#: entry lives. A recorder keeps one of each per Event it wrote (up to 4096 each), and a node
#: agent has a recorder per simulated kubelet.
AggregateEntry = tuple[str, float] | _Aggregate
Observation = tuple[int, float, str]


class Correlated(NamedTuple):
    """What to write: a new Event (``count == 1``) or a patch of ``name`` to ``count`` (read-only).

    A named tuple rather than a dataclass: :meth:`EventCorrelator.correlate` answers one per
    event and builds it with ``tuple.__new__`` (:data:`_correlated`), a C call, where a
    dataclass ran its generated ``__init__`` (half the cost of the answer's object). Its field
    ``count`` hides ``tuple.count``, which nothing asks a ``Correlated`` for."""

    name: str
    message: str
    count: int  # type: ignore[assignment]  # the field, not ``tuple.count`` (see above)
    #: when the event (the aggregate, for a combined one) was first seen
    first_timestamp: float
    #: the cache key the recorder reports the stored name back under
    key: str
    #: a combined event: upstream builds it from the source, object, type, reason and message
    #: only (no reporting controller or instance, no related object)
    aggregate: bool = False


#: ``_correlated(Correlated, (name, message, count, first, key, aggregate))``: every field given,
#: in order (no defaults applied), without the named tuple's Python ``__new__``
_correlated = tuple.__new__


def object_key(ref: Obj) -> str:
    """The involved object as the spam and aggregation keys read it: one string per event, whose
    hash is computed once however many caches it is looked up in (client-go joins the same fields
    into one string key too). NUL cannot occur in the fields, so the join is unambiguous."""
    return "\0".join(
        (
            ref.get("kind", ""),
            ref.get("namespace", ""),
            ref.get("name", ""),
            ref.get("uid", ""),
            ref.get("apiVersion", ""),
        )
    )


class EventCorrelator:
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
        self.size = size
        self._aggregates: LRU[str, AggregateEntry] = LRU(size)
        self._observed: LRU[str, Observation] = LRU(size)
        self._spam: LRU[str, float] = LRU(size)
        # their dicts, for :meth:`correlate`'s inlined steps
        self._aggregate_entries = self._aggregates.entries
        self._observed_entries = self._observed.entries
        self._spam_entries = self._spam.entries
        #: events dropped by the spam filter (their count lives on in the cache)
        self.filtered = 0

    @classmethod
    def dedup_only(cls, component: str, host: str = "") -> EventCorrelator:
        """Exact de-duplication alone: no aggregation, no spam filter."""
        return cls(component, host, max_events=0, burst=0)

    def correlate(
        self, ref: Obj, etype: str, reason: str, message: str, now: float, new_name: Callable[[], str]
    ) -> Correlated | None:
        """The write for this event, or None when the spam filter drops it.

        ``new_name()`` names a new Event (``<object>.<nanoseconds hex>``); it is only called
        when one is made.
        """
        # The three LRUs' steps are taken on their dicts here (a recorder correlates every event
        # it writes): a hit is moved to the recent end and updated in place, a miss inserted
        # there and the oldest entry dropped past the size - what ``take`` then ``put`` does,
        # in one lookup fewer and without a method call per step.
        size = self.size
        obj = "\0".join(
            (
                ref.get("kind", ""),
                ref.get("namespace", ""),
                ref.get("name", ""),
                ref.get("uid", ""),
                ref.get("apiVersion", ""),
            )
        )  # object_key(ref), inline
        group = f"{obj}\0{etype}\0{reason}"
        # 1. aggregation
        aggregate = False
        max_events = self.max_events
        if max_events > 0:
            aggregates = self._aggregate_entries
            agg = aggregates.get(group)
            if agg is None:
                aggregates[group] = (message, now)
                if len(aggregates) > size:
                    aggregates.popitem(last=False)
                aggregate = max_events <= 1
            else:
                aggregates.move_to_end(group)
                if isinstance(agg, tuple):
                    seen_message, last = agg
                    if now - last > self.interval or seen_message == message:
                        # a new group (its messages forgotten), or the one message again
                        aggregates[group] = (message, now)
                        aggregate = max_events <= 1
                    else:  # a second message: the group's messages become a set
                        grown = _Aggregate(seen_message, now)
                        aggregate = grown.add(message, max_events)
                        aggregates[group] = grown
                elif now - agg.last > self.interval:
                    aggregates[group] = (message, now)
                    aggregate = max_events <= 1
                else:
                    aggregate = agg.add(message, max_events)
                    agg.last = now
        if aggregate:
            key = group
            message = AGGREGATE_PREFIX + message
        else:
            key = f"{group}\0{ref.get('fieldPath', '')}\0{message}"
        # 2. de-duplication
        observed = self._observed_entries
        seen = observed.get(key)
        if seen is not None:
            observed.move_to_end(key)
            count, first, name = seen
            if count > 0:
                count += 1
                observed[key] = (count, first, name)  # in place: the position stays
                out = _correlated(Correlated, (name, message, count, first, key, aggregate))
            else:
                name = new_name()
                out = _correlated(Correlated, (name, message, 1, now, key, aggregate))
                observed[key] = (1, now, name)
        else:
            name = new_name()
            out = _correlated(Correlated, (name, message, 1, now, key, aggregate))
            observed[key] = (1, now, name)
            if len(observed) > size:
                observed.popitem(last=False)
        # 3. spam filter
        if self.burst <= 0:
            return out
        spam = self._spam_entries
        full_at = spam.get(obj)
        if full_at is None:
            # a new bucket, full: ``take_token(now, now, ...)``. For a finite time and rate
            # nothing is missing from it, so its answer is the burst's verdict alone and the
            # refill time, the same floats: inline, a call fewer per Event about a new object
            qps = self.qps
            if 0.0 < qps < _INF and now - now == 0.0:
                taken = now + 1.0 / qps if self.burst >= 1.0 - 1e-9 else None
            else:
                taken = take_token(now, now, qps, self.burst)
            spam[obj] = now if taken is None else taken
            if len(spam) > size:
                spam.popitem(last=False)
        else:
            spam.move_to_end(obj)  # refreshed, taken or not (upstream's Add)
            # ``take_token(full_at, now, self.qps, self.burst)``, its lines inline (the same
            # float operations in the same order; ``max(a, b)`` as ``b if b > a else a``, what
            # the builtin answers for two floats, NaN and signed zeros included): every repeat
            # about an object takes one
            qps = self.qps
            ahead = full_at - now
            if self.burst - (0.0 if ahead < 0.0 else ahead) * qps >= 1.0 - 1e-9:
                taken = spam[obj] = (now if now > full_at else full_at) + 1.0 / qps
            else:
                taken = None
        if taken is None:
            self.filtered += 1
            return None
        return out

    def update_state(self, written: Correlated, name: str, count: int) -> None:
        """``UpdateState``: what the server stored (its name may differ after a clash).

        Upstream adds a new entry; when the key's entry is still the most recent one (nothing was
        correlated meanwhile, the usual case) it is updated in place, which leaves the same
        entries in the same order."""
        observed = self._observed_entries
        key = written.key
        entry = (count, written.first_timestamp, name)
        if observed and next(reversed(observed)) == key:  # ``newest``: replaced where it is
            observed[key] = entry
        else:
            self._observed.add(key, entry)
