"""The shape every controller shares: informers feed a work queue, N workers call ``sync(key)``.

A subclass declares its informers and event handlers in :meth:`Controller.setup` (handlers only
enqueue keys) and implements :meth:`Controller.sync`, which must be level-triggered and
idempotent: read the caches, compute the desired state, make the fewest writes. The base class
owns everything else:

* ``start`` starts the informers, waits until their caches are synced (so the first sync never
  acts on a partial view, like ``WaitForNamedCacheSync``), then starts the workers;
* ``stop`` shuts the queue down, cancels the workers mid-sync (a crash, as far as the API is
  concerned) and stops its informers — a restarted controller begins from a fresh list. Given a
  share of the process's shared informers (``ComponentContext.shared_informers``), it removes only
  its own handlers and the informers keep serving the other controllers; a restart then replays
  the shared cache to its new handlers;
* a ``sync`` that raises never kills a worker: the error is logged once per cause and key, then
  with backoff (:mod:`controllers.errorlog`), counted in
  ``controller_sync_errors_total{controller}`` and the key is requeued with exponential backoff;
  a successful sync forgets the key's failures (client-go's ``processNextWorkItem``);
* :class:`Requeue` asks for another pass without counting an error (waiting on another actor).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from apiserver import errors, loops
from apiserver.client.events import EventRecorder
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import Client
from apiserver.client.workqueue import ShutDown, WorkQueue
from apiserver.meta import Clock
from controllers.errorlog import SyncErrorLog
from controllers.metrics import ControllerMetrics

log = logging.getLogger("gangplane.controllers")


class Requeue(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by ``sync`` to be called again: after ``after`` seconds, or with backoff when None."""

    def __init__(self, reason: str = "", after: float | None = None) -> None:
        super().__init__(reason)
        self.after = after


class SyncFailed(Exception):  # noqa: N818 - reads as what happened
    """A failure ``sync`` expects and explains in its message (a missing referenced object): logged
    once per cause without a traceback, retried with backoff."""


class Controller:
    """Base class of an individually stoppable controller component (see module docstring)."""

    #: component name: ``--controllers`` entry, event source, queue and metrics label
    name: str = "controller"
    #: concurrent ``sync`` calls (kube's ``--concurrent-*-syncs``)
    workers: int = 1
    #: longest backoff between retries of a failing key
    max_backoff: float = 60.0
    #: A key whose last sync took ``cost`` seconds (at least ``coalesce_min``) is not synced again
    #: before ``cost * coalesce_factor`` has passed; events meanwhile are coalesced into one sync.
    #: One asyncio process runs every controller: this keeps a sync that is expensive (a
    #: thousand-pod StatefulSet) from monopolising the loop once per event while the events'
    #: producers starve. Cheap syncs (the common case) are never delayed.
    coalesce_factor: float = 1.0
    coalesce_min: float = 0.01

    def __init__(
        self,
        client: Client,
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
    ) -> None:
        self.client = client
        self.informers = informers or InformerFactory(client)
        self.clock = clock or Clock()
        self.metrics = metrics
        self.recorder = recorder or EventRecorder(client, self.name, clock=self.clock)
        if workers is not None:
            self.workers = workers
        self.queue: WorkQueue[Any] = WorkQueue(self.name.replace("-", "_"), max_delay=self.max_backoff)
        self.error_log = SyncErrorLog(log, self.name)
        self._tasks: list[asyncio.Task[None]] = []
        self._running = 0
        self._progress = asyncio.Event()
        self._active: set[Any] = set()
        self._rerun: set[Any] = set()
        self._cooldown: dict[Any, float] = {}
        #: the loop :meth:`start` ran on (:meth:`_now`)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.setup()

    # ------------------------------------------------------------------ subclass hooks
    def setup(self) -> None:
        """Create informers, indexers and event handlers. Handlers must only enqueue keys."""

    async def sync(self, key: Any) -> None:
        """Reconcile ``key``; raise to retry with backoff, :class:`Requeue` to retry without an error.

        Every concrete controller overrides this; the base class has nothing to reconcile.
        """
        raise TypeError(f"{type(self).__name__} does not define sync(key)")

    async def on_synced(self) -> None:
        """Called once the caches are synced, before the workers start (e.g. enqueue everything)."""

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        # the loop the controller runs on from here: its handlers and workers read its clock
        # without asking for the running loop (:mod:`apiserver.loops`)
        self._loop = asyncio.get_running_loop()
        self.queue.run_on(self._loop)
        self.informers.start()
        await self.informers.wait_for_sync()
        await self.on_synced()
        if self.metrics is not None:
            self.metrics.queues.track(self.queue)
        self._tasks = [
            asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}") for i in range(self.workers)
        ]

    async def stop(self) -> None:
        self.queue.shutdown()
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._tasks = []
        if self.metrics is not None:
            self.metrics.queues.untrack(self.queue)
        # its own factory's informers stop; a share of the process's factory (kube-controller-
        # manager's, :mod:`apiserver.client.sharedinformers`) only loses this controller's handlers
        await self.informers.stop()
        await self.recorder.stop()

    # ------------------------------------------------------------------ queue helpers
    def enqueue(self, key: Any) -> None:
        """Queue ``key`` (deduplicated), coalescing with a recent expensive sync of it."""
        if key in self._active:
            self._rerun.add(key)
            return
        until = self._cooldown.get(key)
        if until is not None:
            if until > self._now():
                # the deadline itself, not a delay: every event of the gap keeps one timer
                self.queue.add_at(key, until)
                return
            del self._cooldown[key]
        self.queue.add(key)

    def _now(self) -> float:
        """The time on the loop the controller runs on (the running loop's before it started)."""
        return loops.running(self._loop).time()

    def enqueue_after(self, key: Any, delay: float) -> None:
        self.queue.add_after(key, delay)

    def is_idle(self) -> bool:
        """No key queued, waiting (``add_after``/backoff) or being synced."""
        return self.queue.is_idle() and self._running == 0 and not self._rerun

    async def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until :meth:`is_idle`, woken by each finished sync (tests and benchmarks).

        Only keys already enqueued count: to wait for the effect of a write, first make sure the
        informer delivered it (see :func:`controllers.testing.observed`).
        """

        async def run() -> None:
            while not self.is_idle():
                self._progress.clear()
                await self._progress.wait()

        await asyncio.wait_for(run(), timeout)

    # ------------------------------------------------------------------ workers
    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            self._running += 1
            self._active.add(key)
            started = time.perf_counter()
            try:
                await self._process(key)
            finally:
                self._active.discard(key)
                self._running -= 1
                self.queue.done(key)
                self._after_sync(key, time.perf_counter() - started)
                self._progress.set()

    def _after_sync(self, key: Any, cost: float) -> None:
        gap = cost * self.coalesce_factor if cost >= self.coalesce_min else 0.0
        until = 0.0
        if gap > 0:
            if len(self._cooldown) > 10_000:
                now = self._now()
                self._cooldown = {k: t for k, t in self._cooldown.items() if t > now}
            # after a rerun too: an event during the gap joins the delayed sync (``add_at``
            # keeps one waiting entry per key) instead of queueing the key at once
            until = self._now() + gap
            self._cooldown[key] = until
        if key in self._rerun:
            self._rerun.discard(key)
            if gap > 0:
                self.queue.add_at(key, until)  # the cooldown's own deadline: one timer for both
            else:
                self.queue.add(key)

    async def _process(self, key: Any) -> None:
        start = time.perf_counter()
        try:
            await self.sync(key)
        except asyncio.CancelledError:
            raise
        except Requeue as r:
            log.debug("%s: requeue %s: %s", self.name, key, r)
            if r.after is None:
                self.queue.add_rate_limited(key)
            else:
                self.queue.add_after(key, r.after)
        except Exception as e:
            self._count_error()
            if errors.is_conflict(e) or errors.is_already_exists(e):
                # Stale cache or a concurrent writer: expected, the next pass sees the news.
                log.info("%s: sync %s: %s (will retry)", self.name, key, e)
            elif isinstance(e, (errors.StatusError, SyncFailed)):
                message = e.message if isinstance(e, errors.StatusError) else str(e)
                self.error_log.failed(key, message, traceback=log.isEnabledFor(logging.DEBUG))
            else:
                cause = f"{e.__class__.__name__}: {e}" if str(e) else e.__class__.__name__
                self.error_log.failed(key, cause, traceback=True, level=logging.ERROR)
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
            self.error_log.forget(key)
        finally:
            if self.metrics is not None:
                syncs, duration = self.metrics.sync_series(self.name)
                syncs.inc()
                duration.observe(time.perf_counter() - start)

    def _count_error(self) -> None:
        if self.metrics is not None:
            self.metrics.sync_errors.labels(self.name).inc()
