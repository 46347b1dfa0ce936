"""One heap of deadlines for every delayed stage, driven by the injected clock.

Thousands of pods waiting for ``ready-after`` or a grace period must not mean thousands of
asyncio timers (nor a task each): the agent keeps a single heap of ``(due, seq, key)`` and one
task that sleeps until the earliest deadline. Deadlines are in the clock's *monotonic* seconds,
so a :class:`~apiserver.meta.FakeClock` drives them: a test steps the clock and calls
:meth:`TimerHeap.poke`, and everything that became due fires without real waiting.

A key has at most one live deadline: re-scheduling keeps the *earlier* one (a stage that
becomes due sooner wins; a later sync re-arms whatever is still pending), superseded heap
entries are skipped lazily when popped.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from apiserver.meta import Clock

K = TypeVar("K", bound=Hashable)

#: longest real sleep between checks, so a clock that jumps (FakeClock, NTP) is noticed
MAX_SLEEP = 1.0


class TimerHeap(Generic[K]):
    """Deadlines per key; :meth:`run` calls ``fire(key)`` for each one that comes due."""

    def __init__(self, clock: Clock, fire: Callable[[K], None]) -> None:
        self.clock = clock
        self._fire = fire
        self._heap: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._seq = itertools.count()
        self._wake = asyncio.Event()
        self.fired = 0

    def __len__(self) -> int:
        return len(self._due)

    def schedule(self, key: K, due: float) -> None:
        """Fire ``key`` at monotonic time ``due`` (or keep an earlier pending deadline)."""
        cur = self._due.get(key)
        if cur is not None and cur <= due:
            return
        self._due[key] = due
        heapq.heappush(self._heap, (due, next(self._seq), key))
        if self._heap[0][2] == key:
            self._wake.set()

    def cancel(self, key: K) -> None:
        self._due.pop(key, None)

    def due_at(self, key: K) -> float | None:
        return self._due.get(key)

    def poke(self) -> None:
        """Re-check deadlines now (after stepping a fake clock)."""
        self._wake.set()

    def fire_due(self) -> int:
        """Fire every deadline that has passed; returns how many fired."""
        now = self.clock.monotonic()
        n = 0
        while self._heap and self._heap[0][0] <= now:
            due, _, key = heapq.heappop(self._heap)
            if self._due.get(key) != due:
                continue  # superseded or cancelled
            del self._due[key]
            n += 1
            self._fire(key)
        self.fired += n
        return n

    def next_due(self) -> float | None:
        while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    async def run(self) -> None:
        """Sleep until the earliest deadline (or a poke), fire what is due, repeat forever.

        The sleep is an ``Event.wait`` woken by a ``call_later`` rather than ``asyncio.wait_for``:
        on Python 3.11 ``wait_for`` can swallow a cancellation that races with the event being
        set (frequent here, every schedule sets it), which would make ``stop()`` hang.
        """
        loop = asyncio.get_running_loop()
        while True:
            self.fire_due()
            nxt = self.next_due()
            self._wake.clear()
            timeout = MAX_SLEEP if nxt is None else min(max(nxt - self.clock.monotonic(), 0.0), MAX_SLEEP)
            if timeout <= 0:
                await asyncio.sleep(0)
                continue
            handle = loop.call_later(timeout, self._wake.set)
            try:
                await self._wake.wait()
            finally:
                handle.cancel()
