"""When the scheduling loop gives the event loop back: after four cycles of one loop step.

kube's ``scheduleOne`` runs back to back in its own goroutine while the informers and the
binding goroutines run beside it. gangplane runs the whole plane on one asyncio loop, so the
scheduling loop used to give the loop back after every cycle (``await asyncio.sleep(0)``) to let
the informers and binding tasks run in between. With a small gang per cycle (``gangs-1000x3``:
a gang of 3 in ~0.85 ms) that turn made every cycle start cold: the informers, the controller's
syncs and the Event writes ran between any two cycles and evicted the 5,000-node tables the
next cycle reads again (docs/bench.md, session 21 set1000).

The policy (:class:`CycleTurns`, one per scheduler): the scheduling loop runs up to ``cycles``
(four) cycles in one step while pods are queued, then gives the loop back: the bound
:mod:`apiserver.server.loopshare` keeps for an in-process client's requests (two per step), for
the scheduler's own work: **the scheduling loop runs at most four cycles without letting every
ready task run**. With the bench's arrival fixed (two gang sets per loop pass), four cycles per
step against one read 0.936x CPU per gangs-1000x3 set, and 0.969x with a turn before every
in-process request (docs/bench.md, session 22 review; session 21's "they gain nothing without
the in-process client's share" was measured while the bench's arrival followed that share). A
step ends whenever the loop gives the loop back, whatever it awaited (an empty queue, a search's
pause, a request's turn): the step's first cycle schedules a release
(``call_soon``: run on the loop's next pass, never during the step), so the count restarts then.

A long cycle is followed by a turn whatever the count (``long_cycle``, 50 ms of wall time, the
shortest slice a PodGroup search works before it pauses: :mod:`scheduler.loop_share`). A
5,000-pod gang's cycle ends by starting its 5,000 binding tasks; without that turn they waited for
the next gang's search to pause, 0.2-1.0 s later (``gangs-10x5000``, session 31), where kube's
binding goroutines run beside the next cycle at once. Small cycles never take that long, so their
steps are as before.

What a cycle decides does not change: each reads the cache as it is (the earlier cycles' pods
assumed in it, as they are when their binding goroutines have not run yet in kube); only when
the informers deliver and the bindings run moves, by at most three cycles.
"""

from __future__ import annotations

import asyncio

from scheduler.loop_share import MIN_SLICE_SECONDS

#: how many scheduling cycles one step of the scheduling loop runs before it gives the loop back
#: (the bound the in-process client keeps for its requests, apiserver.server.loopshare); one is the
#: turn after every cycle the loop took before
DEFAULT_CYCLES = 4
#: a cycle that took this long (seconds of wall time) is followed by a turn whatever the count
LONG_CYCLE_SECONDS = MIN_SLICE_SECONDS


class CycleTurns:
    """Whether the scheduling loop gives the event loop back after a cycle (module docstring)."""

    __slots__ = ("cycles", "long_cycle", "_left", "_held", "turns")

    def __init__(self, cycles: int = DEFAULT_CYCLES, long_cycle: float = LONG_CYCLE_SECONDS) -> None:
        self.cycles = max(1, cycles)
        self.long_cycle = long_cycle
        #: whether a cycle of the current step was counted (reset on the loop's next pass)
        self._held = False
        #: cycles the current step may still run before it gives the loop back
        self._left = 0
        #: how many times a cycle was followed by a turn (diagnostics and tests)
        self.turns = 0

    def due(self, took: float = 0.0) -> bool:
        """A cycle ended (``took``: its seconds of wall time): whether the loop must be given
        back before the next one."""
        if not self._held:
            # the step's first cycle: the count restarts once the step has ended
            self._held = True
            self._left = self.cycles
            asyncio.get_running_loop().call_soon(self._release)
        self._left -= 1
        if self._left > 0 and took < self.long_cycle:
            return False
        self.turns += 1
        return True

    def _release(self) -> None:
        """The step that ran a cycle has given the loop back: the next cycle is a step's first."""
        self._held = False
