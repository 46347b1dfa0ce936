"""The event recorder as a user sees it: through the Events it leaves in the API."""

from __future__ import annotations

import pytest

from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.interface import EVENTS
from apiserver.meta import FakeClock, rfc3339
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default", "uid": "u-1"}}


async def test_two_recorders_at_one_frozen_instant_leave_two_events(plane: ControlPlane) -> None:
    """Names are ``<object>.<nanoseconds>``: a second recorder taking the same name moves on to the next."""
    clock = FakeClock()
    first = EventRecorder(plane.client("kubelet"), "kubelet", clock=clock)
    second = EventRecorder(plane.client("default-scheduler"), "default-scheduler", clock=clock)
    first.event(POD, NORMAL, "Pulled", "pulled")
    await first.flush()
    second.event(POD, NORMAL, "Scheduled", "assigned")
    await second.flush()
    events = (await plane.client("test").list(EVENTS, "default"))["items"]
    assert sorted(e["reason"] for e in events) == ["Pulled", "Scheduled"]
    assert len({e["metadata"]["name"] for e in events}) == 2
    assert all(e["metadata"]["name"].startswith("web-0.") for e in events)
    await first.stop()
    await second.stop()


async def test_a_repeat_counts_up_instead_of_a_second_event(plane: ControlPlane) -> None:
    rec = EventRecorder(plane.client("kubelet"), "kubelet", clock=FakeClock())
    for _ in range(3):
        rec.event(POD, NORMAL, "BackOff", "Back-off restarting failed container")
    await rec.flush()
    (event,) = (await plane.client("test").list(EVENTS, "default"))["items"]
    assert event["count"] == 3
    await rec.stop()


async def _events(plane: ControlPlane) -> list[dict]:
    items = (await plane.client("test").list(EVENTS, "default"))["items"]
    return sorted(items, key=lambda e: e["metadata"]["name"])


async def test_similar_events_past_nine_are_combined_into_one(plane: ControlPlane) -> None:
    """client-go's aggregation: the tenth distinct message of one reason about one object starts
    a ``(combined from similar events)`` Event that later ones count up."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
    }
    rec = EventRecorder(plane.client("statefulset-controller"), "statefulset-controller", clock=FakeClock())
    for i in range(12):
        rec.event(sts, NORMAL, "SuccessfulCreate", f"create Pod web-{i} in StatefulSet web successful")
    await rec.flush()
    events = await _events(plane)
    single = sorted(e["message"] for e in events if e["count"] == 1 and "combined" not in e["message"])
    assert single == sorted(f"create Pod web-{i} in StatefulSet web successful" for i in range(9))
    (combined,) = [e for e in events if e["message"].startswith("(combined from similar events): ")]
    assert (
        combined["message"]
        == "(combined from similar events): create Pod web-11 in StatefulSet web successful"
    )
    assert combined["count"] == 3 and combined["reason"] == "SuccessfulCreate"
    # upstream builds the combined event without a reporting controller or instance
    assert "reportingComponent" not in combined and "reportingInstance" not in combined
    assert len(events) == 10
    await rec.stop()


async def test_a_source_writes_25_events_about_an_object_then_one_per_5_minutes(plane: ControlPlane) -> None:
    """The spam filter drops writes past the burst; the count they would have added is kept."""
    clock = FakeClock()
    rec = EventRecorder(plane.client("kubelet"), "kubelet", host="node-1", clock=clock)
    for _ in range(30):
        rec.event(POD, NORMAL, "BackOff", "Back-off restarting failed container")
    await rec.flush()
    (event,) = await _events(plane)
    assert event["count"] == 25
    assert rec.correlator.filtered == 5
    clock.step(299)
    rec.event(POD, NORMAL, "BackOff", "Back-off restarting failed container")
    await rec.flush()
    assert (await _events(plane))[0]["count"] == 25  # no token yet
    clock.step(1)
    rec.event(POD, NORMAL, "BackOff", "Back-off restarting failed container")
    await rec.flush()
    (event,) = await _events(plane)
    assert event["count"] == 32
    assert event["lastTimestamp"] > event["firstTimestamp"]
    await rec.stop()


async def test_the_spam_filter_counts_per_source_and_object(plane: ControlPlane) -> None:
    other = {**POD, "metadata": {**POD["metadata"], "name": "web-1", "uid": "u-2"}}
    rec = EventRecorder(plane.client("kubelet"), "kubelet", host="node-1", clock=FakeClock())
    for i in range(25):
        rec.event(POD, NORMAL, "Pulled", f"pulled {i}")
    rec.event(other, NORMAL, "Pulled", "pulled")
    rec.event(POD, NORMAL, "Started", "started")  # the 26th about web-0: filtered
    await rec.flush()
    events = await _events(plane)
    assert [e for e in events if e["involvedObject"]["name"] == "web-1"][0]["count"] == 1
    assert not [e for e in events if e["reason"] == "Started"]
    await rec.stop()


async def test_aggregation_starts_over_after_ten_quiet_minutes(plane: ControlPlane) -> None:
    clock = FakeClock()
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"}}
    rec = EventRecorder(plane.client("statefulset-controller"), "statefulset-controller", clock=clock)
    for i in range(9):
        rec.event(sts, NORMAL, "SuccessfulDelete", f"delete Pod db-{i} in StatefulSet db successful")
    await rec.flush()
    clock.step(601)
    rec.event(sts, NORMAL, "SuccessfulDelete", "delete Pod db-9 in StatefulSet db successful")
    await rec.flush()
    events = await _events(plane)
    assert len(events) == 10
    assert not any("combined" in e["message"] for e in events)
    await rec.stop()


async def test_without_correlation_every_distinct_event_is_written(plane: ControlPlane) -> None:
    """The scheduler's recorder (``tools/events`` upstream): exact repeats fold, nothing is combined or dropped."""
    rec = EventRecorder(
        plane.client("default-scheduler"), "default-scheduler", clock=FakeClock(), correlate=False
    )
    for i in range(30):
        rec.event(POD, NORMAL, "FailedScheduling", f"0/{i} nodes are available")
    rec.event(POD, NORMAL, "FailedScheduling", "0/0 nodes are available")
    await rec.flush()
    events = await _events(plane)
    assert len(events) == 30
    assert sorted(e["count"] for e in events) == [1] * 29 + [2]
    await rec.stop()


async def test_a_deleted_event_is_written_again_with_its_count(plane: ControlPlane) -> None:
    """A patch that finds the Event gone recreates it under its name, count and first time."""
    clock = FakeClock()
    rec = EventRecorder(plane.client("kubelet"), "kubelet", clock=clock)
    rec.event(POD, NORMAL, "BackOff", "Back-off")
    await rec.flush()
    (first,) = await _events(plane)
    await plane.client("test").delete(EVENTS, first["metadata"]["name"], "default")
    clock.step(10)
    rec.event(POD, NORMAL, "BackOff", "Back-off")
    await rec.flush()
    (again,) = await _events(plane)
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert again["count"] == 2
    assert again["firstTimestamp"] == first["firstTimestamp"] != again["lastTimestamp"]
    await rec.stop()


def _expected_body(
    ref: dict, etype: str, reason: str, message: str, component: str, host: str, related: dict | None
) -> dict:
    """What kube's recorder stores for a first event (count 1), apart from name and times."""
    source = {"component": component, "host": host} if host else {"component": component}
    body = {
        "involvedObject": ref,
        "reason": reason,
        "message": message,
        "type": etype,
        "source": source,
        "count": 1,
        "reportingComponent": component,
        "reportingInstance": host or component,
    }
    if related:
        body["related"] = related
    return body


@pytest.mark.parametrize("seed", range(3))
async def test_every_written_event_carries_its_own_reference_source_and_reporter(
    plane: ControlPlane, seed: int
) -> None:
    """Random first events of several recorders (with and without a host, a field path, a
    related object, in and outside a namespace) are stored whole, as upstream's recorder writes
    them, each named ``<object>.<its time in nanoseconds, hex>`` and timed by the recorder's
    clock; repeats count the first up. No two stored Events share a nested object with each
    other or with the recorder (editing one through the API leaves the others as they were)."""
    import random

    rnd = random.Random(seed)
    clock = FakeClock()
    recorders = [
        EventRecorder(plane.client("kubelet"), "kubelet", host="node-1", clock=clock),
        EventRecorder(plane.client("kubelet"), "kubelet", host="node-2", clock=clock),
        EventRecorder(plane.client("statefulset-controller"), "statefulset-controller", clock=clock),
        EventRecorder(plane.client("default-scheduler"), "default-scheduler", clock=clock, correlate=False),
    ]
    expected: dict[tuple, dict] = {}  # (recorder, ref, reason, message) -> body, count, times
    for i in range(60):
        r = rnd.randrange(len(recorders))
        rec = recorders[r]
        if rnd.random() < 0.2 and expected:
            key = rnd.choice(sorted(expected, key=repr))
            if key[0] != r:
                continue
            ref, etype, reason, message, related = expected[key]["args"]
            clock.step(rnd.choice([0.5, 2.0]))
            rec.event_ref(dict(ref), etype, reason, message, related)
            expected[key]["count"] += 1
            expected[key]["last"] = clock.now()
            continue
        ref = {"kind": "Pod", "name": f"p{rnd.randrange(4)}", "uid": "u", "apiVersion": "v1"}
        if rnd.random() < 0.8:
            ref["namespace"] = "default"
        if rnd.random() < 0.3:
            ref["fieldPath"] = "spec.containers{c}"
        related = {"kind": "Node", "name": "node-1", "apiVersion": "v1"} if rnd.random() < 0.2 else None
        etype = rnd.choice(["Normal", "Warning"])
        reason, message = f"R{i % 5}", f"message {i}"
        clock.step(rnd.choice([0.0, 0.001, 1.0]))
        rec.event_ref(dict(ref), etype, reason, message, related)
        expected[(r, repr(sorted(ref.items())), reason, message)] = {
            "args": (ref, etype, reason, message, related),
            "body": _expected_body(ref, etype, reason, message, rec.component, rec.host, related),
            "first": clock.now(),
            "last": clock.now(),
            "count": 1,
        }
    for rec in recorders:
        await rec.flush()
    stored = await _events(plane)
    assert len(stored) == len(expected)
    by_content = {
        (
            e["source"].get("host", e["source"]["component"]),
            e["involvedObject"]["name"],
            e["reason"],
            e["message"],
        ): e
        for e in stored
    }
    for (r, _, reason, message), want in expected.items():
        rec = recorders[r]
        ev = by_content[(rec.host or rec.component, want["body"]["involvedObject"]["name"], reason, message)]
        got = {k: ev[k] for k in want["body"] if k in ev} | {"count": 1}
        assert got == want["body"] and set(want["body"]) | {"count"} <= set(ev)
        assert ev["count"] == want["count"]
        assert ev["metadata"]["namespace"] == want["body"]["involvedObject"].get("namespace", "default")
        assert ev["metadata"]["name"].startswith(want["body"]["involvedObject"]["name"] + ".")
        assert ev["firstTimestamp"] == rfc3339(want["first"]) and ev["lastTimestamp"] == rfc3339(want["last"])
    # nothing nested is shared: the stored Events (kept as the very dicts the recorders handed
    # off) hold a source and an object reference each, none the recorder's own
    records, _, _ = plane.api.store.list(("", "events"))
    kept = [r.obj for r in records]
    for field in ("source", "involvedObject"):
        assert len({id(o[field]) for o in kept}) == len(kept)
    assert not any(o["source"] is rec._source for o in kept for rec in recorders)
    for rec in recorders:
        await rec.stop()
