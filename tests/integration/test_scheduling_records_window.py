"""Scheduling records are a bounded window of the newest subjects, and the window bounds the writes.

A burst of first-try successes is recorded lazily (once no pod waits): a pod that falls out of the
window before its record was written costs no API call at all (no create, and no DELETE of a
record that never existed); a record that was written and then falls out is deleted. Read through
the API, as ``kubectl get schedulingrecords`` does, with the recorder's count of API writes.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.client.interface import PODS
from apiserver.meta import FakeClock
from gangplane.controlplane import ControlPlane
from scheduler.records import SCHEDULINGRECORDS, Recorder, RecordLimits
from scheduler.records.recorder import MAX_DEFER
from tests.helpers import wait_for_object
from tests.integration.scheduler_support import pod

pytestmark = pytest.mark.anyio
PROFILE = "default-scheduler"


async def _pods(client: Any, n: int) -> list[dict[str, Any]]:
    return [await client.create(PODS, pod(f"p{i}")) for i in range(n)]


def _schedule(rec: Recorder, p: dict[str, Any], attempt: int = 1) -> None:
    """One pod-by-pod attempt that ends Scheduled, as the scheduler reports it."""
    rec.begin_pod(PROFILE, p, attempt)
    rec.scheduled(p, PROFILE, "n1", attempt)


async def _names(client: Any) -> set[str]:
    return {o["metadata"]["name"] for o in (await client.list(SCHEDULINGRECORDS, "default"))["items"]}


async def test_a_burst_writes_only_the_window_and_evicts_without_writing(
    cp: ControlPlane, client: Any
) -> None:
    pods = await _pods(client, 10)
    rec = Recorder(cp.client("kube-scheduler"), cp.clock, RecordLimits(subjects=3))
    rec.busy = lambda: 1  # a pod waits to be scheduled: first-try successes are deferred
    for p in pods:
        _schedule(rec, p)
    await rec.flush()
    assert await _names(client) == {"pod.p7", "pod.p8", "pod.p9"}
    # three creates; the seven that fell out before being written cost nothing (no create, no delete)
    assert rec.writes == 3 and rec.evicted == 7
    assert rec.record("default", "Pod", "p0") is None
    await rec.stop()


async def test_evicting_a_written_record_deletes_it(cp: ControlPlane, client: Any) -> None:
    p0, p1, p2 = await _pods(client, 3)
    rec = Recorder(cp.client("kube-scheduler"), cp.clock, RecordLimits(subjects=2))
    _schedule(rec, p0)
    _schedule(rec, p1)
    await rec.flush()
    assert await _names(client) == {"pod.p0", "pod.p1"}
    _schedule(rec, p2)
    await rec.flush()
    assert await _names(client) == {"pod.p1", "pod.p2"}
    assert rec.writes == 4  # three creates, one delete
    await rec.stop()


async def test_a_retried_subject_stays_in_the_window(cp: ControlPlane, client: Any) -> None:
    """The window is by the latest attempt: a pod that keeps failing is not pushed out by the
    first-try successes scheduled around it, so its record is the one kept."""
    failing, *others = await _pods(client, 5)
    rec = Recorder(cp.client("kube-scheduler"), cp.clock, RecordLimits(subjects=2))
    rec.busy = lambda: True
    for attempt, p in enumerate(others, start=1):
        rec.begin_pod(PROFILE, failing, attempt)
        rec.failed(failing, PROFILE, attempt, "Unschedulable", "0/1 nodes are available")
        _schedule(rec, p)
    await rec.flush()
    assert await _names(client) == {"pod.p0", "pod.p4"}
    kept = (await client.get(SCHEDULINGRECORDS, "pod.p0", "default"))["totalAttempts"]
    assert kept == 4
    await rec.stop()


async def test_a_burst_larger_than_the_window_is_recorded_at_its_tail(cp: ControlPlane, client: Any) -> None:
    """While pods still wait, a first-try success is not written even past the deferral time if
    those pods could push it out of the window before the burst ends (a create, then a delete for
    nothing); the newer ones are. A failure is written at once all the same."""
    p0, p1, p2 = await _pods(client, 3)
    clock = FakeClock()
    rec = Recorder(cp.client("kube-scheduler"), clock, RecordLimits(subjects=3))
    waiting = [10]
    rec.busy = lambda: waiting[0]
    _schedule(rec, p0)
    _schedule(rec, p1)
    clock.step(MAX_DEFER + 1)
    rec.begin_pod(PROFILE, p2, 1)
    rec.failed(p2, PROFILE, 1, "Unschedulable", "0/1 nodes are available")
    await wait_for_object(client, SCHEDULINGRECORDS, "pod.p2", "default", lambda o: o is not None)
    assert await _names(client) == {"pod.p2"}
    # the tail of the burst: the one pod still waiting could push out the oldest subject (p0),
    # not the two newer ones, so only p1 is written
    waiting[0] = 1
    await wait_for_object(client, SCHEDULINGRECORDS, "pod.p1", "default", lambda o: o is not None)
    assert await _names(client) == {"pod.p1", "pod.p2"}
    waiting[0] = 0  # the burst is over: the rest is written
    await wait_for_object(client, SCHEDULINGRECORDS, "pod.p0", "default", lambda o: o is not None)
    assert await _names(client) == {"pod.p0", "pod.p1", "pod.p2"}
    assert rec.writes == 3
    await rec.stop()


async def test_a_record_pushed_out_while_its_create_is_in_flight_is_deleted(
    cp: ControlPlane, client: Any
) -> None:
    """The create was sent before the subject left the window: once it lands, the record is
    deleted, so no record outlives the window."""
    p0, p1, p2 = await _pods(client, 3)
    api = cp.client("kube-scheduler")
    rec = Recorder(api, cp.clock, RecordLimits(subjects=1))
    create = api.create

    async def create_then_more_attempts(gvr: Any, obj: Any, namespace: str = "", **kw: Any) -> Any:
        if obj["metadata"]["name"] == "pod.p0":
            rec.busy = lambda: 1  # p1 is deferred, and it pushes p0 out while p0's create is on its way
            _schedule(rec, p1)
        return await create(gvr, obj, namespace, **kw)

    api.create = create_then_more_attempts  # type: ignore[method-assign]
    rec.begin_pod(PROFILE, p0, 1)
    rec.failed(p0, PROFILE, 1, "Unschedulable", "0/1 nodes are available")  # written at once
    await wait_for_object(client, SCHEDULINGRECORDS, "pod.p0", "default", lambda o: o is not None)
    rec.busy = lambda: 0
    _schedule(rec, p2)  # the burst is over: p2 pushes p1 out (never written) and is written
    await wait_for_object(client, SCHEDULINGRECORDS, "pod.p2", "default", lambda o: o is not None)
    await rec.flush()
    assert await _names(client) == {"pod.p2"}
    await rec.stop()
