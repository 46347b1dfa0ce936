"""The event recorder as a user sees it: through the Events it leaves in the API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.interface import EVENTS
from apiserver.meta import FakeClock
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

pytestmark = pytest.mark.anyio


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock()))
    try:
        yield cp
    finally:
        await cp.stop()


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
