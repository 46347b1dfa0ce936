"""A controller whose own deadlines feed its queue through one timer heap.

The CronJob, TTL-after-finished and Job controllers each wait on many deadlines (the next
schedule time, a finished Job's expiry, a pod-failure backoff, ``activeDeadlineSeconds``). They
share this base rather than each carrying the same construction and the same start/stop of the
heap's task: one :class:`~controllers.nodeagent.timers.TimerHeap` keyed by queue key, fired into
:meth:`~controllers.base.Controller.enqueue` and driven by the injected clock, so a test steps a
:class:`~apiserver.meta.FakeClock` and pokes :attr:`TimedController.timers` instead of waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

from controllers.base import Controller
from controllers.nodeagent.timers import TimerHeap


class TimedController(Controller):
    """A :class:`Controller` with a :class:`TimerHeap` of queue keys, run alongside the workers.

    ``start`` starts the heap's task after the base class has started the workers; ``stop``
    cancels it before the base class stops the queue, so no deadline fires into a stopped queue.
    A failure of the heap's task is raised by ``stop``.
    """

    #: the task running :attr:`timers` between ``start`` and ``stop``
    _timer_task: asyncio.Task[None] | None = None

    @functools.cached_property
    def timers(self) -> TimerHeap[Any]:
        """The controller's deadlines (made on first use, from the injected clock), firing ``enqueue``."""
        return TimerHeap(self.clock, self.enqueue)

    async def start(self) -> None:
        await super().start()
        self._timer_task = asyncio.create_task(self.timers.run(), name=f"{self.name}-timers")

    async def stop(self) -> None:
        if self._timer_task is not None:
            self._timer_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer_task
            self._timer_task = None
        await super().stop()


__all__ = ["TimedController"]
