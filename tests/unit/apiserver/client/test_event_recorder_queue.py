"""The recorder's queue: an event's fields as consecutive deque items instead of one tuple.

Why the layout matters: a tuple holding the reference dict stays tracked by the cyclic collector
for as long as the event waits (a 5,000-pod gang queues 5,000 ``Scheduled`` Events that are
written only when the scheduler's loop is idle), and every collector pass meanwhile traversed
them. Checked here: each queued event is written with exactly its own fields, in queue order
(random references, types, reasons, messages, related objects and times), and queueing adds no
object for the collector to track.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, WARNING, EventRecorder, object_reference
from apiserver.meta import FakeClock, rfc3339


class _Capture:
    """The two client calls a recorder makes, recorded (a create answers nothing, as ``answer=False``)."""

    def __init__(self) -> None:
        self.created: list[tuple[Obj, str]] = []

    async def create(self, gvr: Any, body: Obj, namespace: str, **kw: Any) -> None:
        self.created.append((body, namespace))

    async def patch(self, *a: Any, **kw: Any) -> None:  # pragma: no cover - no repeats here
        raise AssertionError("no event repeats another")


def _random_ref(rnd: random.Random, i: int) -> Obj:
    obj: Obj = {"metadata": {"name": f"obj-{i}", "uid": f"u-{i}"}}
    if rnd.random() < 0.8:
        obj["metadata"]["namespace"] = rnd.choice(["default", "team-a", "bench"])
    if rnd.random() < 0.5:
        obj["metadata"]["resourceVersion"] = str(rnd.randrange(1, 10**6))
    kind, api = rnd.choice(
        [("Pod", "v1"), ("StatefulSet", "apps/v1"), ("PodGroup", "scheduling.k8s.io/v1beta1")]
    )
    return object_reference(obj, api, kind)


def _expected(ref: Obj, etype: str, reason: str, message: str, related: Obj | None, ts: float) -> Obj:
    ns = ref.get("namespace") or "default"
    body: Obj = {
        "apiVersion": "v1",
        "kind": "Event",
        "namespace": ns,
        "involvedObject": ref,
        "reason": reason,
        "message": message[:1024],
        "type": etype,
        "source": {"component": "default-scheduler"},
        "firstTimestamp": rfc3339(ts),
        "lastTimestamp": rfc3339(ts),
        "count": 1,
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler",
    }
    if related:
        body["related"] = related
    return body


def _written(body: Obj) -> Obj:
    out = {k: v for k, v in body.items() if k != "metadata"}
    out["namespace"] = body["metadata"]["namespace"]
    return out


async def _queue_and_write(rnd: random.Random, rec: EventRecorder, clock: FakeClock) -> list[Obj]:
    """Queue a random run of events (the writer running between some of them); their expected bodies."""
    expected: list[Obj] = []
    for i in range(rnd.randrange(1, 300)):
        ref = _random_ref(rnd, i)
        etype = rnd.choice([NORMAL, WARNING])
        reason = rnd.choice(["Scheduled", "FailedScheduling", "SuccessfulCreate"])
        message = f"m{i} " + "x" * rnd.choice([0, 10, 1100])
        related = _random_ref(rnd, 10_000 + i) if rnd.random() < 0.3 else None
        clock.step(rnd.choice([0.0, 0.4, 1.7]))
        expected.append(_expected(dict(ref), etype, reason, message, related, clock.now()))
        rec.event_ref(ref, etype, reason, message, related)
        if rnd.random() < 0.2:
            await asyncio.sleep(0)
    await rec.flush()
    await rec.stop()
    return expected


@pytest.mark.parametrize("seed", range(6))
def test_every_queued_event_is_written_with_its_own_fields_in_order(seed: int) -> None:
    client = _Capture()
    clock = FakeClock()
    rec = EventRecorder(client, "default-scheduler", clock=clock, correlate=False)  # type: ignore[arg-type]
    expected = asyncio.run(_queue_and_write(random.Random(seed), rec, clock))
    assert [_written(b) for b, _ in client.created] == expected
    assert [ns for _, ns in client.created] == [e["namespace"] for e in expected]
    assert len({b["metadata"]["name"] for b, _ in client.created}) == len(expected)


def test_a_queued_event_adds_no_object_for_the_collector() -> None:
    refs = [_random_ref(random.Random(i), i) for i in range(2_000)]
    rec = EventRecorder(_Capture(), "default-scheduler", clock=FakeClock(), correlate=False)  # type: ignore[arg-type]
    counts: list[int] = []

    async def run() -> None:
        rec.event_ref(refs[0], NORMAL, "Scheduled", "first")  # the writer task exists from here on
        gc.collect()
        counts.append(len(gc.get_objects()))
        for ref in refs[1:]:
            rec.event_ref(ref, NORMAL, "Scheduled", "Successfully assigned")
        counts.append(len(gc.get_objects()))
        await rec.flush()
        await rec.stop()

    was = gc.isenabled()
    gc.disable()
    try:
        asyncio.run(run())
    finally:
        if was:
            gc.enable()
    assert counts[1] - counts[0] < 20  # was one tuple per event: 1,999


@pytest.mark.parametrize("how", ["stop", "cancel"])
@pytest.mark.parametrize("via", ["event", "event_ref"])
def test_an_event_after_the_writer_task_ended_starts_a_new_one(how: str, via: str) -> None:
    """A queued event wakes a waiting writer task and returns (session 18); one whose task ended
    while it waited (stopped, or cancelled from outside: its wait is cancelled too) starts a new
    task, and every event is written."""
    client = _Capture()
    rec = EventRecorder(client, "default-scheduler", clock=FakeClock(), correlate=False)  # type: ignore[arg-type]
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}

    def record(message: str) -> None:
        if via == "event":
            rec.event(pod, NORMAL, "Scheduled", message)
        else:
            rec.event_ref(object_reference(pod), NORMAL, "Scheduled", message)

    async def run() -> None:
        record("one")
        await rec.flush()
        record("two")  # the task waits: woken
        await rec.flush()
        task = rec._task
        assert task is not None and not task.done()
        if how == "stop":
            await rec.stop()
        else:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        record("three")
        # a new task, asserted before waiting for it (a flush with none would never end)
        assert rec._task is not None and rec._task is not task and not rec._task.done()
        await rec.flush()
        await rec.stop()

    asyncio.run(run())
    assert [b["message"] for b, _ in client.created] == ["one", "two", "three"]
