"""The recorder's write of an event, checked against its straightforward form.

``_ReferenceRecorder`` below is ``EventRecorder._write`` as it was before its steps were cut
(``rfc3339`` called for every time, the correlator's answer read field by field, its new-name
step a ``functools.partial``, ``update_state`` reported after every write), correlating with the
plain ``ReferenceCorrelator`` of ``test_eventcorrelator_reference``. Random streams of events
(few objects, reasons and messages, so that aggregation, de-duplication and the spam filter all
act; clocks that stand still, step within a second and across seconds, and go back; creates that
clash with an existing name and patches of a deleted Event) must make the same client calls with
the same bodies, in the same order, and leave the same correlator entries in the same LRU order.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import math
import random
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import EventRecorder, event_name
from apiserver.meta import FakeClock, rfc3339
from tests.unit.apiserver.client.test_eventcorrelator_reference import (
    ReferenceCorrelator,
    _aggregate_values,
)


class _ReferenceRecorder(EventRecorder):
    """``_write`` in its plain form (see the module docstring), over the plain correlator."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.correlator = ReferenceCorrelator(self.component, self.host)  # type: ignore[assignment]

    def _plain_name(self, object_name: str, ts: float) -> str:
        whole = int(ts)
        stamp = max(whole * 1_000_000_000 + round((ts - whole) * 1_000_000_000), self._last_stamp + 1)
        self._last_stamp = stamp
        return event_name(object_name, stamp)

    async def _write(
        self, ref: Obj, etype: str, reason: str, message: str, related: Obj | None, ts: float
    ) -> bool:
        name_of_object = ref.get("name", "unknown")
        c = self.correlator.correlate(
            ref, etype, reason, message, ts, functools.partial(self._plain_name, name_of_object, ts)
        )
        if c is None:
            return False
        ns = ref.get("namespace") or "default"
        now = rfc3339(ts)
        if c.count > 1:
            try:
                await self.client.patch(
                    "events",
                    c.name,
                    {"count": c.count, "lastTimestamp": now, "message": c.message, "series": None},
                    ns,
                )
                self.correlator.update_state(c, c.name, c.count)
                return True
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        first = rfc3339(c.first_timestamp)
        name = c.name
        while True:
            ev: Obj = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": dict(ref),
                "reason": reason,
                "message": c.message,
                "type": etype,
                "source": {"component": self.component, "host": self.host}
                if self.host
                else {"component": self.component},
                "firstTimestamp": first,
                "lastTimestamp": now,
                "count": c.count,
            }
            if not c.aggregate:
                ev["reportingComponent"] = self.component
                ev["reportingInstance"] = self.host or self.component
                if related:
                    ev["related"] = dict(related)
            try:
                await self.client.create("events", ev, ns, handoff=True, answer=False)
                break
            except errors.StatusError as e:
                if not errors.is_already_exists(e):
                    raise
                self._last_stamp += 1
                name = event_name(name_of_object, self._last_stamp)
        self.correlator.update_state(c, name, c.count)
        return True


class _Client:
    """Records every call; the ``i``-th call fails as ``outcomes[i]`` says (the same for both
    recorders while they make the same calls)."""

    def __init__(self, outcomes: list[str]) -> None:
        self.outcomes = outcomes
        self.calls: list[tuple[Any, ...]] = []

    def _outcome(self) -> str:
        i = len(self.calls)
        return self.outcomes[i] if i < len(self.outcomes) else "ok"

    async def create(self, gvr: Any, body: Obj, namespace: str, **kw: Any) -> None:
        outcome = self._outcome()
        self.calls.append(("create", copy.deepcopy(body), namespace, sorted(kw.items())))
        if outcome == "clash":
            raise errors.already_exists("events", body["metadata"]["name"])
        if outcome == "forbidden":
            raise errors.forbidden("events", body["metadata"]["name"], "", "namespace terminating")

    async def patch(self, gvr: Any, name: str, body: Obj, namespace: str, **kw: Any) -> None:
        outcome = self._outcome()
        self.calls.append(("patch", name, copy.deepcopy(body), namespace, sorted(kw.items())))
        if outcome in ("gone", "clash"):
            raise errors.not_found("events", name)


def _stream(rnd: random.Random) -> list[tuple[Any, ...]]:
    kinds = [("Pod", "v1"), ("StatefulSet", "apps/v1")]
    refs: list[Obj] = []
    for i in range(rnd.choice([1, 3, 12])):
        kind, api = rnd.choice(kinds)
        ref: Obj = {"kind": kind, "name": f"o{i}", "uid": f"u{i}", "apiVersion": api}
        if rnd.random() < 0.8:
            ref["namespace"] = rnd.choice(["default", "team-a"])
        if rnd.random() < 0.3:
            ref["fieldPath"] = "spec.containers{c}"
        refs.append(ref)
    out: list[tuple[Any, ...]] = []
    for _ in range(rnd.choice([40, 200])):
        step = rnd.choice([0.0, 0.0, 1e-9, 0.25, 0.999999, 1.0, 3.5, 301.0, 700.0, -2.0])
        if rnd.random() < 0.002:
            step = math.inf  # a time rfc3339 cannot format: every later write fails alike
        ref = rnd.choice(refs)
        etype = rnd.choice(["Normal", "Warning"])
        reason = rnd.choice(["Scheduled", "SuccessfulCreate", "Failed"])
        message = rnd.choice(["m1", "m2", f"m{rnd.randint(0, 30)}", "x" * 1030])
        related = rnd.choice([None, None, {"kind": "Node", "name": "n1"}])
        out.append((step, dict(ref), etype, reason, message, related))
    return out


async def _run(rec: EventRecorder, clock: FakeClock, stream: list[tuple[Any, ...]]) -> None:
    for step, ref, etype, reason, message, related in stream:
        clock.step(step)
        rec.event_ref(dict(ref), etype, reason, message, related)
        if step:  # sometimes a backlog, sometimes one write per event
            await rec.flush()
    await rec.flush()
    await rec.stop()


@pytest.mark.parametrize("seed", range(24))
def test_every_call_and_every_correlator_entry_equals_the_plain_recorder(seed: int) -> None:
    rnd = random.Random(seed)
    stream = _stream(rnd)
    outcomes = [rnd.choice(["ok"] * 6 + ["clash", "gone", "forbidden"]) for _ in range(len(stream) * 3)]
    host = rnd.choice(["", "node-1"])
    start = rnd.choice([1_800_000_000.0, 1_800_000_000.75, 5.5, 0.5, -3.5, -1.75])
    got_client, want_client = _Client(outcomes), _Client(outcomes)
    got = EventRecorder(got_client, "kubelet", host=host, clock=FakeClock(start))  # type: ignore[arg-type]
    want = _ReferenceRecorder(want_client, "kubelet", host=host, clock=FakeClock(start))  # type: ignore[arg-type]

    async def both() -> None:
        await _run(got, got.clock, stream)  # type: ignore[arg-type]
        await _run(want, want.clock, stream)  # type: ignore[arg-type]

    asyncio.run(both())
    assert got_client.calls == want_client.calls
    assert got.written == want.written
    assert got._last_stamp == want._last_stamp
    new, ref = got.correlator, want.correlator
    assert new.filtered == ref.filtered
    assert list(new._observed.entries.values()) == [
        (o.count, o.first_timestamp, o.name) for o in ref._observed._d.values()
    ]
    assert list(new._spam.entries.values()) == list(ref._spam._d.values())
    assert [_aggregate_values(a) for a in new._aggregates.entries.values()] == [
        (a.keys, a.last) for a in ref._aggregates._d.values()
    ]
