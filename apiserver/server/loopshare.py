"""When an in-process request gives the event loop back: after four requests of one task step.

A real client waits on the network before every request, so a busy controller cannot starve the
others. The in-process client has no network; it used to take one loop turn before every request
instead. That turn costs a task step (the awaiting task's whole coroutine chain suspended and
resumed), and about half of a gang set's loop steps were these turns (docs/bench.md, session 20).
Most of them gave nothing to anyone: the task had just been resumed by the loop (a pod-create or
binding task on its first step, a controller worker woken by its queue), so every other ready
task had run since its last request anyway.

The policy (:class:`LoopShare`, one per control plane, shared by its clients): the first four
requests of a task's step run at once; any further request of the same step gives the loop back
first (and is then the first of the task's next step). So the promise keeps a bounded form: **a
task makes at most four requests without letting every ready task run**. A gang set's sync (its
ControllerRevision, Workload, PodGroup and status writes) runs whole; a long loop of requests (the
bench driver creating a thousand sets) turns every fourth request. A time slice instead (requests
run at once for 1-10 ms of a step) let the driver and the controller create every set's pods in
one go: gangs-10x5000's last set waited 6.6 s instead of 4.8 s after its last pod was created
(four requests: 5.6 s against 4.3 s, every set bound no later; docs/bench.md, session 20 turns).
One request per step kept more of that pacing but only a third of the CPU saving.

The Event recorder gives the loop back before each Event itself (:mod:`apiserver.client.events`):
a backlog of Events is written in the gaps of the components' work, as kube's rate-limited event
sink lets it lag.

A step ends when its task gives the loop back, whatever it awaited. The step's first request
schedules a release (``call_soon``: the loop runs it on its next pass, never while the step runs);
a request of a different task also starts a step (two steps may share a pass, before the release).
"""

from __future__ import annotations

import asyncio

#: how many requests a task's step makes before one gives the loop back: a gang set's sync makes
#: four (ControllerRevision, Workload, PodGroup, status); one per step kept only a third of the
#: saving (docs/bench.md, session 20 turns)
DEFAULT_REQUESTS = 4


class LoopShare:
    """Which in-process requests give the loop back first (module docstring): a step's first
    ``requests`` run at once. ``every=True`` turns before every request, as the client did
    before this policy."""

    __slots__ = ("every", "requests", "_holder", "_left", "turns")

    def __init__(self, every: bool = False, requests: int = DEFAULT_REQUESTS) -> None:
        self.every = every
        self.requests = requests
        #: the task whose current step made a request (``None``: no step holds the share)
        self._holder: asyncio.Task[object] | None = None
        #: requests the holder's step may still make at once
        self._left = 0
        #: requests that gave the loop back (diagnostics and tests)
        self.turns = 0

    def due(self) -> bool:
        """Whether the request being made must give the loop back before it runs; if so, the
        caller calls :meth:`resumed` once it has."""
        task = asyncio.current_task()
        if task is self._holder and not self.every:
            if self._left > 0:
                self._left -= 1
                return False
        elif not self.every:
            self._hold(task)
            return False
        self.turns += 1
        return True

    def resumed(self) -> None:
        """The request gave the loop back and runs now: the first request of its task's new step."""
        self._hold(asyncio.current_task())

    def _hold(self, task: asyncio.Task[object] | None) -> None:
        self._holder = task
        self._left = self.requests - 1
        asyncio.get_running_loop().call_soon(self._release)

    def _release(self) -> None:
        """The step that made a request has given the loop back: the next request is a first."""
        self._holder = None
