"""A rate-limited, de-duplicating work queue with client-go's semantics.

* A key added many times before it is processed is processed once (``dirty`` set).
* A key is never handed to two workers at once; re-added while processing, it is queued again
  after :meth:`done` (``processing`` set).
* ``add_rate_limited`` delays by per-key exponential backoff (5 ms doubling to 1000 s, like
  ``DefaultControllerRateLimiter``); :meth:`forget` resets it after a successful sync.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from apiserver import loops

K = TypeVar("K", bound=Hashable)


class ShutDown(Exception):
    """``get`` on a queue that was shut down."""


class WorkQueue(Generic[K]):
    def __init__(self, name: str = "", base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.name = name
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._failures: dict[K, int] = {}
        self._waiting: dict[K, asyncio.TimerHandle] = {}
        self._cond = asyncio.Event()
        self._shutdown = False
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.adds = 0
        self.retries = 0
        #: the loop the queue's workers run on, once its owner says (:meth:`run_on`): delayed adds
        #: set their timers there without asking for the running loop (:mod:`apiserver.loops`)
        self.loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        if self._shutdown or key in self._dirty:
            return
        self.adds += 1
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._cond.set()

    def run_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """The queue is used on ``loop`` from now on (its owner started there)."""
        self.loop = loop

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        return loops.running(self.loop)

    def add_after(self, key: K, delay: float) -> None:
        if self._shutdown:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = self._running_loop()
        self._add_at(loop, key, loop.time() + delay)

    def add_at(self, key: K, when: float) -> None:
        """:meth:`add_after` with the deadline given on the loop's clock rather than as a delay.

        For a caller that holds the deadline (a controller's cooldown): every event until then
        names the same instant, so the key's waiting timer is kept. As a delay, each would be
        re-measured from a slightly different ``loop.time()`` and about half of them would land a
        hair earlier, cancelling the timer and arming a new one (cancelled timers also make the
        loop re-heap its schedule).
        """
        if self._shutdown:
            return
        loop = self._running_loop()
        if when <= loop.time():
            self.add(key)
            return
        self._add_at(loop, key, when)

    def _add_at(self, loop: asyncio.AbstractEventLoop, key: K, when: float) -> None:
        existing = self._waiting.get(key)
        if existing is not None:
            if existing.when() <= when:
                return
            existing.cancel()

        def fire() -> None:
            self._waiting.pop(key, None)
            self.add(key)

        self._waiting[key] = loop.call_at(when, fire)

    def when(self, key: K) -> float:
        """The backoff delay the next ``add_rate_limited`` of ``key`` will use."""
        n = self._failures.get(key, 0)
        return min(self.base_delay * (2.0**n), self.max_delay)

    def add_rate_limited(self, key: K) -> None:
        delay = self.when(key)
        self._failures[key] = self._failures.get(key, 0) + 1
        self.retries += 1
        self.add_after(key, delay)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    async def get(self) -> K:
        while not self._queue:
            if self._shutdown:
                raise ShutDown
            self._cond.clear()
            await self._cond.wait()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._cond.set()

    def shutdown(self) -> None:
        self._shutdown = True
        for h in self._waiting.values():
            h.cancel()
        self._waiting.clear()
        self._cond.set()

    @property
    def is_shutdown(self) -> bool:
        return self._shutdown

    def is_idle(self) -> bool:
        return not self._queue and not self._processing and not self._waiting
