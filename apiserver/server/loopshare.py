"""When an in-process request gives the event loop back: after two requests of one task step.

A real client waits on the network before every request, so a busy controller cannot starve the
others. The in-process client has no network; it used to take one loop turn before every request
instead. That turn costs a task step (the awaiting task's whole coroutine chain suspended and
resumed), and about half of a gang set's loop steps were these turns (docs/bench.md, session 20).
Most of them gave nothing to anyone: the task had just been resumed by the loop (a pod-create or
binding task on its first step, a controller worker woken by its queue), so every other ready
task had run since its last request anyway.

The policy (:class:`LoopShare`, one per control plane, shared by its clients): the first two
requests of a task's step run at once; any further request of the same step gives the loop back
first (and is then the first of the task's next step). So the promise keeps a bounded form: **a
task makes at most two requests without letting every ready task run**. A pod-create or binding
task runs its request in its first step; a gang set's first sync (ControllerRevision, Workload,
PodGroup, pods, status) turns every other request; a long loop of requests turns every second
one.

What it saves: nothing measurable in the components' CPU. Session 21 credited it (and four
requests more) with most of gangs-1000x3's gain, and four requests with putting gangs-10x5000's
sets in lockstep; both came from the bench's own driver, a task creating StatefulSets through
this client, whose arrival followed the policy (one set per loop pass with a turn before every
request, two with this policy, four with four requests), and the plane handles sets that arrive
together in larger, cheaper batches. With the driver's arrival fixed
(``bench.workloads.common.create_arriving``, two sets per pass), this policy against a turn
before every request reads 1.002x, and four requests against two 1.009x (docs/bench.md, session
22 arrival). It stays as the bound it states: a task's consecutive requests, not each one, give
the loop back.

The Event recorder gives the loop back before each Event itself (:mod:`apiserver.client.events`):
a backlog of Events is written in the gaps of the components' work, as kube's rate-limited event
sink lets it lag.

A step ends when its task gives the loop back, whatever it awaited. The step's first request
schedules a release (``call_soon``: the loop runs it on its next pass, never while the step runs);
a request of a different task also starts a step (two steps may share a pass, before the release).

One release serves every step that starts while it is pending: the steps of a 5,000-pod gang's
binding tasks share a pass, and each used to schedule (and the loop then run) a release of its
own. A release pending when a step starts runs after that step (callbacks never run inside one)
and before the task's next step (which is scheduled once the task gives the loop back, so behind
it: the ready queue is first in, first out). So the holder is cleared between any task's two
steps, as with a release per step, and no request's answer from :meth:`LoopShare.due` changes.
"""

from __future__ import annotations

import asyncio

from apiserver import loops

#: how many requests a task's step makes before one gives the loop back (module docstring: more
#: saved nothing once the bench's driver no longer shared this policy)
DEFAULT_REQUESTS = 2


class LoopShare:
    """Which in-process requests give the loop back first (module docstring): a step's first
    ``requests`` run at once. ``every=True`` turns before every request, as the client did
    before this policy."""

    __slots__ = ("every", "requests", "_holder", "_left", "turns", "_release_on", "_loop")

    def __init__(self, every: bool = False, requests: int = DEFAULT_REQUESTS) -> None:
        self.every = every
        self.requests = requests
        #: the task whose current step made a request (``None``: no step holds the share)
        self._holder: asyncio.Task[object] | None = None
        #: requests the holder's step may still make at once
        self._left = 0
        #: requests that gave the loop back (diagnostics and tests)
        self.turns = 0
        #: the loop a release is pending on (``None``: none is); one serves every step started
        #: before it runs (module docstring)
        self._release_on: asyncio.AbstractEventLoop | None = None
        #: the loop the share's requests run on (:meth:`_task`)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _task(self) -> asyncio.Task[object] | None:
        """The running task, asked of the loop the share runs on (:func:`apiserver.loops.running`).

        ``asyncio.current_task()`` first asks for the running loop, and CPython 3.11 checks that
        one against the process id (a ``getpid`` system call, about 0.5 µs here) on every call:
        with one per request that was 0.7 % of gangs-1000x3's phase (session 30, py-spy
        ``--native``). Given the loop, it is a dictionary read. A plane's clients run on its one
        loop; once that loop no longer runs (a plane restarted on a new one), the loop is asked
        for again."""
        loop = self._loop = loops.running(self._loop)
        return asyncio.current_task(loop)

    def due(self) -> bool:
        """Whether the request being made must give the loop back before it runs; if so, the
        caller calls :meth:`resumed` once it has."""
        task = self._task()
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
        self._hold(self._task())

    def _hold(self, task: asyncio.Task[object] | None) -> None:
        self._holder = task
        self._left = self.requests - 1
        # the task's own loop: asking for the running one is a getpid system call in CPython 3.11
        loop = task.get_loop() if task is not None else asyncio.get_running_loop()
        if self._release_on is not loop:  # a release pending on this loop clears this step too
            self._release_on = loop
            loop.call_soon(self._release)

    def _release(self) -> None:
        """The steps that made a request have given the loop back: the next request is a first."""
        self._holder = None
        self._release_on = None
