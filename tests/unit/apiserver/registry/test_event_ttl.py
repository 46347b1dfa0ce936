"""Events expire ``--event-ttl`` after their last write (kube's etcd lease per Event), as DELETED
watch events, while other objects and recently written Events stay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from apiserver.client.interface import CONFIGMAPS, EVENTS
from apiserver.meta import FakeClock
from apiserver.registry.eventttl import EventExpiry, sweep_interval
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import cm

pytestmark = pytest.mark.anyio


def event(name: str, message: str = "hello") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Testing",
        "message": message,
        "type": "Normal",
    }


def expiry_of(cp: ControlPlane, ttl: float) -> EventExpiry:
    events = cp.api.registry.get("", "v1", "events")
    assert events is not None
    return EventExpiry(cp.api.store, events, cp.clock, ttl, notify=cp.api._notify)


async def names(cp: ControlPlane) -> list[str]:
    listed = await cp.client("test").list(EVENTS, "default")
    return sorted(o["metadata"]["name"] for o in listed["items"])


def test_the_sweep_interval_is_a_tenth_of_the_ttl_within_bounds() -> None:
    assert (sweep_interval(3600), sweep_interval(5), sweep_interval(0.2)) == (60.0, 0.5, 0.1)


@pytest.fixture
async def fake_cp() -> AsyncIterator[ControlPlane]:
    """A control plane on a fake clock whose own expiry is off (the tests sweep by hand)."""
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock(), event_ttl=0))
    yield cp
    await cp.stop()


async def test_an_event_not_written_for_the_ttl_is_deleted_and_a_rewrite_renews_it(
    fake_cp: ControlPlane,
) -> None:
    cp, clock = fake_cp, fake_cp.clock
    assert isinstance(clock, FakeClock)
    client = cp.client("test")
    expiry = expiry_of(cp, 3600)
    await client.create(EVENTS, event("old"), "default")
    await client.create(EVENTS, event("renewed"), "default")
    await client.create(CONFIGMAPS, cm("kept"), "default")
    assert expiry.sweep() == 0  # first seen now
    clock.step(3000)
    renewed = await client.get(EVENTS, "renewed", "default")
    renewed["count"] = 2
    await client.update(EVENTS, renewed, "default")  # kube renews the lease on every write
    assert expiry.sweep() == 0
    clock.step(600)
    assert expiry.sweep() == 1
    assert await names(cp) == ["renewed"]
    clock.step(3000)
    assert expiry.sweep() == 1
    assert await names(cp) == []
    assert (await client.get(CONFIGMAPS, "kept", "default"))["metadata"]["name"] == "kept"
    assert expiry.expired == 2


async def test_an_event_written_between_the_sweeps_read_and_its_delete_is_kept(fake_cp: ControlPlane) -> None:
    cp, clock = fake_cp, fake_cp.clock
    assert isinstance(clock, FakeClock)
    client = cp.client("test")
    expiry = expiry_of(cp, 60)
    await client.create(EVENTS, event("raced"), "default")
    expiry.sweep()
    clock.step(61)
    store = cp.api.store
    real_list = store.list

    def list_then_write(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        listed = real_list(*args, **kw)
        if args[0] != ("", "events"):
            return listed  # admission reads its configurations on the write below
        cp.api.update(
            cp.api.registry.get("", "v1", "events"),
            "default",
            "raced",
            {**listed[0][0].copy(), "message": "again"},
        )
        return listed

    store.list = list_then_write  # type: ignore[method-assign]
    try:
        assert expiry.sweep() == 0
    finally:
        store.list = real_list  # type: ignore[method-assign]
    assert (await client.get(EVENTS, "raced", "default"))["message"] == "again"


async def test_a_running_control_plane_expires_events_seen_by_a_watch() -> None:
    cp = ControlPlane(ControlPlaneOptions(event_ttl=0.3))
    await cp.start([])
    client = cp.client("test")
    try:
        made = await client.create(EVENTS, event("short"), "default")
        rv = made["metadata"]["resourceVersion"]

        async def deleted() -> dict:
            async for ev in client.watch(EVENTS, "default", resource_version=rv):
                if ev.type == "DELETED":
                    return ev.object
            raise AssertionError("watch ended")

        gone = await asyncio.wait_for(deleted(), 30)
        assert gone["metadata"]["name"] == "short"
        assert await names(cp) == []
    finally:
        await cp.stop()
