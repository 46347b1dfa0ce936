"""The controller base class: a failing sync keeps the controller alive, is retried with backoff and
counted in /metrics; Requeue retries without an error; stop cancels in-flight syncs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import generate_latest

from apiserver.client.interface import CONFIGMAPS
from controllers.base import Controller, Requeue
from controllers.metrics import controller_metrics
from gangplane.controlplane import ControlPlane
from tests.helpers import cm

pytestmark = pytest.mark.anyio


class Flaky(Controller):
    """Fails the first ``failures`` syncs of every key, then records success."""

    name = "flaky-controller"
    workers = 2

    def __init__(self, *args: Any, failures: int = 2, requeues: int = 0, **kw: Any) -> None:
        self.failures = failures
        self.requeues = requeues
        self.calls: dict[str, int] = {}
        self.done: dict[str, asyncio.Event] = {}
        super().__init__(*args, **kw)

    def setup(self) -> None:
        self.cms = self.informers.informer(CONFIGMAPS)
        self.cms.add_event_handler(lambda o: self.enqueue(o["metadata"]["name"]))

    def event(self, key: str) -> asyncio.Event:
        return self.done.setdefault(key, asyncio.Event())

    async def sync(self, key: str) -> None:
        n = self.calls[key] = self.calls.get(key, 0) + 1
        if n <= self.requeues:
            raise Requeue("not yet")
        if n <= self.requeues + self.failures:
            raise RuntimeError(f"boom {n}")
        self.event(key).set()


def sample(cp: ControlPlane, name: str, labels: dict[str, str]) -> float:
    value = cp.metrics_registry.get_sample_value(name, labels)
    return value or 0.0


async def test_a_failing_sync_is_retried_with_backoff_and_counted(cp: ControlPlane, client: Any) -> None:
    ctrl = Flaky(cp.client("flaky"), metrics=controller_metrics(cp.metrics_registry), failures=3)
    await ctrl.start()
    try:
        await client.create(CONFIGMAPS, cm("a"), "default")
        await asyncio.wait_for(ctrl.event("a").wait(), 5)
        assert ctrl.calls["a"] == 4
        assert ctrl.queue.num_requeues("a") == 0, "success forgets the failures"
        assert sample(cp, "controller_sync_errors_total", {"controller": "flaky-controller"}) == 3
        assert sample(cp, "controller_syncs_total", {"controller": "flaky-controller"}) == 4
        assert sample(cp, "workqueue_retries_total", {"name": "flaky_controller"}) == 3
        assert sample(cp, "workqueue_adds_total", {"name": "flaky_controller"}) >= 4
        assert sample(cp, "workqueue_depth", {"name": "flaky_controller"}) == 0
        text = generate_latest(cp.metrics_registry).decode()
        assert 'controller_sync_errors_total{controller="flaky-controller"} 3.0' in text
    finally:
        await ctrl.stop()


async def test_requeue_is_not_an_error(cp: ControlPlane, client: Any) -> None:
    ctrl = Flaky(cp.client("flaky"), metrics=controller_metrics(cp.metrics_registry), failures=0, requeues=2)
    await ctrl.start()
    try:
        await client.create(CONFIGMAPS, cm("a"), "default")
        await asyncio.wait_for(ctrl.event("a").wait(), 5)
        assert ctrl.calls["a"] == 3
        assert sample(cp, "controller_sync_errors_total", {"controller": "flaky-controller"}) == 0
    finally:
        await ctrl.stop()


async def test_metrics_survive_a_restart(cp: ControlPlane, client: Any) -> None:
    metrics = controller_metrics(cp.metrics_registry)
    assert metrics is controller_metrics(cp.metrics_registry)
    first = Flaky(cp.client("flaky"), metrics=metrics, failures=1)
    await first.start()
    await client.create(CONFIGMAPS, cm("a"), "default")
    await asyncio.wait_for(first.event("a").wait(), 5)
    await first.stop()
    second = Flaky(cp.client("flaky"), metrics=metrics, failures=1)
    await second.start()  # the initial list re-enqueues "a": it fails once more, then succeeds
    try:
        await asyncio.wait_for(second.event("a").wait(), 5)
        assert sample(cp, "controller_sync_errors_total", {"controller": "flaky-controller"}) == 2
        assert sample(cp, "workqueue_retries_total", {"name": "flaky_controller"}) == 2
    finally:
        await second.stop()


class Stuck(Controller):
    name = "stuck-controller"

    def __init__(self, *args: Any, **kw: Any) -> None:
        self.entered = asyncio.Event()
        self.cancelled = False
        super().__init__(*args, **kw)

    def setup(self) -> None:
        self.informers.informer(CONFIGMAPS).add_event_handler(lambda o: self.enqueue(o["metadata"]["name"]))

    async def sync(self, key: str) -> None:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_stop_cancels_a_sync_in_flight(cp: ControlPlane, client: Any) -> None:
    ctrl = Stuck(cp.client("stuck"))
    await ctrl.start()
    await client.create(CONFIGMAPS, cm("a"), "default")
    await asyncio.wait_for(ctrl.entered.wait(), 5)
    assert not ctrl.is_idle()
    await asyncio.wait_for(ctrl.stop(), 5)
    assert ctrl.cancelled


class Gated(Controller):
    """Each sync waits for ``release``; an expensive sync's events are coalesced (huge gap)."""

    name = "gated-controller"
    coalesce_factor = 1e6  # any sync's cost makes a gap far longer than the test
    coalesce_min = 0.0

    def __init__(self, *args: Any, **kw: Any) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.syncs = 0
        super().__init__(*args, **kw)

    def setup(self) -> None:
        self.informers.informer(CONFIGMAPS)

    async def sync(self, key: str) -> None:
        self.syncs += 1
        self.entered.set()
        await self.release.wait()


async def finished(ctrl: Controller) -> None:
    """Until no sync is in flight (each finished sync sets ``_progress``)."""
    while ctrl._running:
        ctrl._progress.clear()
        await ctrl._progress.wait()


async def test_an_event_after_a_rerun_joins_the_delayed_sync(cp: ControlPlane) -> None:
    """An event during a sync asks for a rerun after the gap; one arriving after that sync, while
    the rerun waits, joins it instead of syncing the key at once (the coalescing gap holds)."""
    ctrl = Gated(cp.client("gated"))
    await ctrl.start()
    try:
        ctrl.enqueue("a")
        await asyncio.wait_for(ctrl.entered.wait(), 5)
        ctrl.enqueue("a")  # during the sync: a rerun after the gap
        ctrl.release.set()
        await asyncio.wait_for(finished(ctrl), 5)
        ctrl.enqueue("a")  # after it: must wait with the rerun
        assert len(ctrl.queue) == 0
        assert ctrl.syncs == 1
    finally:
        await ctrl.stop()


async def test_events_during_the_gap_keep_one_waiting_timer(cp: ControlPlane) -> None:
    """Events of an expensive sync's gap all wait for its deadline: the key's timer is armed once
    and kept (re-measuring the gap from each event's clock reading moved it a hair back and forth)."""
    ctrl = Gated(cp.client("gated"))
    await ctrl.start()
    try:
        ctrl.enqueue("a")
        await asyncio.wait_for(ctrl.entered.wait(), 5)
        ctrl.release.set()
        await asyncio.wait_for(finished(ctrl), 5)
        ctrl.enqueue("a")
        timer = ctrl.queue._waiting["a"]
        for _ in range(200):
            ctrl.enqueue("a")
            assert ctrl.queue._waiting["a"] is timer
        assert not timer.cancelled()
        assert timer.when() == ctrl._cooldown["a"]
        assert len(ctrl.queue) == 0 and ctrl.syncs == 1
    finally:
        await ctrl.stop()
