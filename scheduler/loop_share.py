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
    ) -> None:
        self.min_slice = min_slice
        self.max_slice = max(min_slice, max_slice)
        self.clock = clock
        self.slice = min_slice
        self.deadline = clock() + min_slice
        #: how many times the computation let the others run
        self.pauses = 0

    def due(self) -> bool:
        """Whether the current slice is used up."""
        return self.clock() >= self.deadline

    async def pause(self) -> None:
        """Let every ready task take a step; the next slice matches what their round took."""
        paused = self.clock()
        await asyncio.sleep(0)
        resumed = self.clock()
        self.pauses += 1
        self.slice = min(max(resumed - paused, self.min_slice), self.max_slice)
        self.deadline = resumed + self.slice
