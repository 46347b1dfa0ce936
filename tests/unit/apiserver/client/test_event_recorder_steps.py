"""The recorder's per-Event steps written inline, checked against the plain forms they replace.

* :func:`object_reference` builds the reference field by field; the reference below is the
  former two-step form (every field, then a copy without the empty ones).
* ``EventRecorder._new_name`` computes :func:`event_name` of :func:`event_stamp` inline.
* ``EventCorrelator.correlate`` answers a new spam bucket without calling :func:`take_token`
  when the time and the rate are finite.

Each is compared on random and edge-case inputs: same values, same keys in the same order.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.eventcorrelator import EventCorrelator, object_key, take_token
from apiserver.client.events import EventRecorder, event_name, event_stamp, object_reference
from apiserver.meta import FakeClock, rfc3339

_VALUES: tuple[Any, ...] = ("", "x", "gang-0-0", "bench", "v1", "apps/v1", None, 0, 1, False, [], {})


def _reference_object_reference(obj: Obj, api_version: str = "", kind: str = "") -> Obj:
    md = obj.get("metadata") or {}
    ref: Obj = {
        "kind": kind or obj.get("kind", ""),
        "apiVersion": api_version or obj.get("apiVersion", ""),
        "name": md.get("name", ""),
        "uid": md.get("uid", ""),
        "resourceVersion": md.get("resourceVersion", ""),
    }
    if md.get("namespace"):
        ref["namespace"] = md["namespace"]
    return {k: v for k, v in ref.items() if v}


def _random_object(rnd: random.Random) -> Obj:
    obj: Obj = {}
    for key in ("kind", "apiVersion"):
        if rnd.random() < 0.8:
            obj[key] = rnd.choice(_VALUES)
    if rnd.random() < 0.9:
        md: Obj = {}
        keys = ["name", "uid", "resourceVersion", "namespace", "labels"]
        rnd.shuffle(keys)  # the reference's order is its own, whatever the object's
        for key in keys:
            if rnd.random() < 0.8:
                md[key] = rnd.choice(_VALUES)
        obj["metadata"] = md if md or rnd.random() < 0.5 else None
    return obj


@pytest.mark.parametrize("seed", range(8))
def test_object_reference_equals_the_two_step_form(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(400):
        obj = _random_object(rnd)
        api_version = rnd.choice(("", "v1", "apps/v1"))
        kind = rnd.choice(("", "Pod", "StatefulSet"))
        got = object_reference(obj, api_version, kind)
        want = _reference_object_reference(obj, api_version, kind)
        assert list(got.items()) == list(want.items()), obj
        assert list(object_reference(obj).items()) == list(_reference_object_reference(obj).items())


def test_new_names_equal_event_name_of_event_stamp() -> None:
    rnd = random.Random(7)
    clock = FakeClock()
    rec = EventRecorder(None, "kubelet", clock=clock)  # type: ignore[arg-type]
    last = 0
    times = [0.0, 0.5, 1.0, 1e-9, 1_800_000_000.0, 1_800_000_000.999999999, 1_800_000_000.9999999999]
    times += [rnd.uniform(1.7e9, 1.9e9) for _ in range(2000)]
    times += [1_800_000_000.25] * 5  # a frozen clock: the stamp moves on
    times += [rnd.uniform(0, 1e6) for _ in range(200)]  # earlier than the last stamp
    for ts in times:
        want_stamp = event_stamp(ts, last)
        assert rec._new_name("gang-0-1", ts) == event_name("gang-0-1", want_stamp)
        assert rec._last_stamp == want_stamp
        last = want_stamp


@pytest.mark.parametrize("seed", range(4))
def test_new_names_within_a_remembered_second_equal_event_name_of_event_stamp(seed: int) -> None:
    """The name's whole nanoseconds taken from the second ``_write`` entered (session 18): times
    inside, at the edges of and outside that second, before 1970 too, against the plain form."""
    rnd = random.Random(seed)
    rec = EventRecorder(None, "kubelet")  # type: ignore[arg-type]
    last = 0
    for _ in range(3000):
        second = rnd.choice(
            [0.0, 1.0, 59.0, 1_800_000_000.0, -3.0, -2.0, -1.0, float(rnd.randint(0, 2_000_000_000))]
        )
        if rnd.random() < 0.3:
            entered = second + rnd.choice([0.0, 0.5, 0.999999999])
            assert rec._enter_second(entered) == rfc3339(entered)
        edge = rnd.choice([0.0, 1e-9, 0.5, 0.999999999, 0.9999999999, 1.0, 1.000000001, -1e-9, -0.5])
        ts = second + edge + (rnd.random() if rnd.random() < 0.3 else 0.0)
        if rnd.random() < 0.3:  # about the last second entered, on either side
            ts = rec._second_from + rnd.uniform(-1.5, 1.5)
        want_stamp = event_stamp(ts, last)
        assert rec._new_name("gang-0-1", ts) == event_name("gang-0-1", want_stamp), (second, ts)
        assert rec._last_stamp == want_stamp
        last = want_stamp
        if rec._second_from <= ts < rec._second_to:  # what ``_write`` then takes for ``rfc3339(ts)``
            assert (rec._second_text, rec._second_ns) == (rfc3339(ts), int(ts) * 1_000_000_000), ts


_RATES = (1.0 / 300.0, 0.5, 1.0, 3.0, 1e-300, 1e300, 5e-324, 0.0, -1.0, math.inf, math.nan)
_BURSTS = (1, 2, 4, 25, 0.999999999, 0.9999999995, 1.5)
_TIMES = (0.0, -0.0, 1.0, 1_800_000_000.123456, 1e308, -1e308, math.inf, -math.inf, math.nan)


def _same_float(a: float, b: float) -> bool:
    """Equal as floats are stored: both NaN, or equal with the same sign (``-0.0`` is not ``0.0``)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _first_spam_entry(qps: float, burst: float, now: float) -> tuple[bool, float]:
    """Whether a new correlator writes an event about a new object at ``now``, and its bucket."""
    c = EventCorrelator("kubelet", "node-0", burst=burst, qps=qps)  # type: ignore[arg-type]
    ref = {"kind": "Pod", "namespace": "bench", "name": "p", "uid": "u", "apiVersion": "v1"}
    out = c.correlate(ref, "Normal", "Pulled", "m", now, lambda: "p.1")
    return out is not None, next(iter(c._spam.entries.values()))


@pytest.mark.parametrize("qps", _RATES)
def test_a_new_bucket_is_answered_as_take_token_answers(qps: float) -> None:
    rnd = random.Random(hash(str(qps)) & 0xFFFF)
    times = list(_TIMES) + [rnd.uniform(-1e10, 1e10) for _ in range(50)]
    for burst in _BURSTS:
        for now in times:
            try:
                want = take_token(now, now, qps, burst)  # type: ignore[arg-type]
            except ZeroDivisionError:
                with pytest.raises(ZeroDivisionError):
                    _first_spam_entry(qps, burst, now)
                continue
            written, entry = _first_spam_entry(qps, burst, now)
            assert written == (want is not None), (qps, burst, now)
            expected = now if want is None else want
            assert _same_float(entry, expected), (qps, burst, now, entry, expected)


def _later_spam_entry(qps: float, burst: float, full_at: float, now: float) -> tuple[bool, float]:
    """Whether a correlator whose bucket for the object is ``full_at`` writes an event at ``now``,
    and the bucket after it."""
    c = EventCorrelator("kubelet", "node-0", burst=burst, qps=qps)  # type: ignore[arg-type]
    ref = {"kind": "Pod", "namespace": "bench", "name": "p", "uid": "u", "apiVersion": "v1"}
    key = object_key(ref)
    c._spam.entries[key] = full_at
    out = c.correlate(ref, "Normal", "Pulled", "m", now, lambda: "p.1")
    return out is not None, c._spam.entries[key]


@pytest.mark.parametrize("qps", _RATES)
def test_a_known_bucket_is_answered_as_take_token_answers(qps: float) -> None:
    """``take_token`` inline for an object seen before (session 18), ``max`` written out."""
    rnd = random.Random(hash(str(qps)) & 0xFFFF)
    times = list(_TIMES) + [rnd.uniform(-1e10, 1e10) for _ in range(12)]
    for burst in _BURSTS:
        for full_at in times:
            for now in (*times[:9], full_at, full_at + 1.0, full_at - 1.0, full_at - 300.0, full_at - 1e4):
                try:
                    want = take_token(full_at, now, qps, burst)  # type: ignore[arg-type]
                except ZeroDivisionError:
                    with pytest.raises(ZeroDivisionError):
                        _later_spam_entry(qps, burst, full_at, now)
                    continue
                written, entry = _later_spam_entry(qps, burst, full_at, now)
                assert written == (want is not None), (qps, burst, full_at, now)
                expected = full_at if want is None else want
                assert _same_float(entry, expected), (qps, burst, full_at, now, entry, expected)
