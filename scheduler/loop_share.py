"""How long a long synchronous computation on the event loop works before it lets the others run.

gangplane runs the whole control plane on one asyncio loop; kube's scheduler has its own
process. A gang's search (thousands of pods' cycles) therefore works in slices and yields in
between. With fixed slices its share of the loop depends on how much the *other* tasks do in
one round: every yield lets each ready task take a step, and while a controller creates the
pods of other sets (each create fanned out to a dozen watches, and every held member of their
gangs due its KEP-5501 report a second later) one round took 200-500 ms, so 50 ms slices left
the search a tenth to a fifth of the loop: a 5,000-pod gang's search, ~1 s of its own CPU,
took up to 15 s of the process's CPU (``gangs-10x5000``).

:class:`LoopShare` is gangplane's policy (no kube counterpart): a slice lasts as long as the
others' last round took, between ``min_slice`` and ``max_slice``, so the search keeps at least
half the loop while the others are busy (up to ``max_slice`` per round), and the others never
wait for more than ``max_slice`` of its work between their steps. When the others are idle it is the plain
``min_slice`` rhythm. Only timing changes: the search reads its own snapshot, so what it
decides does not depend on where it yields.

The clock is the loop thread's CPU time, not the wall: on a machine shared with other
processes a wall-clock slice holds less of the loop's work than the others' round it was
matched with, and a wall-clock cap would shrink with the machine's load.

Reading that clock is a system call (1 us idle, ~6 us under load: 4,000 reads were 24 ms of
``gangs-1000x3``'s 6.4 s), and ``due()`` is asked after every pod. A thread's CPU time never
advances faster than the wall, so a cheap wall-clock ``bound`` (``perf_counter``, no system
call) answers "not yet" for as long as the wall time since the last CPU reading is under the
CPU time the slice had left then; the CPU clock is read only once that much wall time passed.
The answers are exactly those of reading the CPU clock every time: a gang of 3 reads it once
instead of four times, and a long search about once per slice plus once per pause.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: the shortest slice (seconds of the loop thread's CPU): the others run at least this often
#: when they have little to do
MIN_SLICE_SECONDS = 0.05
#: the longest slice (seconds of the loop thread's CPU): the most the search holds the loop
MAX_SLICE_SECONDS = 0.5


class LoopShare:
    """Slices of a synchronous computation that keep it at least half the event loop (see the
    module docstring). ``due()`` after each unit of work; ``await pause()`` when it says so."""

    def __init__(
        self,
        min_slice: float = MIN_SLICE_SECONDS,
        max_slice: float = MAX_SLICE_SECONDS,
        clock: Callable[[], float] = time.thread_time,
        bound: Callable[[], float] | None = None,
    ) -> None:
        self.min_slice = min_slice
        self.max_slice = max(min_slice, max_slice)
        self.clock = clock
        #: a clock that never advances less than ``clock`` (see the module docstring); by
        #: default the wall for the thread's CPU clock, none for any other clock (tests' fakes)
        self.bound = (
            bound if bound is not None else (time.perf_counter if clock is time.thread_time else None)
        )
        self.slice = min_slice
        #: how many times the computation let the others run
        self.pauses = 0
        #: how many times ``clock`` was read
        self.reads = 0
        self.deadline = 0.0
        self._bound_deadline = 0.0
        #: the reading by which ``due()`` last said yes: where the pause that follows starts
        self._due_at: float | None = None
        self._start_slice(self._read())

    def _read(self) -> float:
        self.reads += 1
        return self.clock()

    def _start_slice(self, now: float) -> None:
        self.deadline = now + self.slice
        self._mark(now)

    def _mark(self, now: float) -> None:
        """``clock`` read ``now``: it cannot reach the deadline before ``bound`` has advanced
        by what is left of the slice."""
        if self.bound is not None:
            self._bound_deadline = self.bound() + (self.deadline - now)

    def due(self) -> bool:
        """Whether the current slice is used up."""
        if self.bound is not None and self.bound() < self._bound_deadline:
            return False
        now = self._read()
        if now >= self.deadline:
            self._due_at = now
            return True
        self._mark(now)
        return False

    async def pause(self) -> None:
        """Let every ready task take a step; the next slice matches what their round took."""
        paused = self._due_at if self._due_at is not None else self._read()
        self._due_at = None
        await asyncio.sleep(0)
        resumed = self._read()
        self.pauses += 1
        self.slice = min(max(resumed - paused, self.min_slice), self.max_slice)
        self._start_slice(resumed)
