"""A gang member's pod cycle in the whole in-process plane, per member of its set (a script):

    python bench/micro/member_split.py [SETS] [--gc] [--by-step] [--spot module:qualname ...]

Runs gangs-SETSx3 (default 400 sets of 3 on 5,000 nodes, in-process, as ``gangplane bench``
runs it) with a timer around each member's ``PodGroupAlgorithm._full_cycle`` and around a list
of spots inside it (:data:`SPOTS`, or ``--spot``), and prints each one's thread CPU per call and
calls per set, split by the member whose cycle was running: ``m0`` (a new set's first pod, which
no pod matches yet), ``m1`` and ``m2`` (its siblings).

Why per member: on a fixed, caught-up snapshot (``cycle_fixed.py``, hot loops) a first pod's
cycle is the cheapest of the three; in the plane it is the dearest (session 19: ~245 µs against
~160 for a sibling, and ~50 / ~75 on the fixed snapshot). It pays the new set's own work (its
default spreading derived), the catch-up of the previous set's nodes, and the cold start of
every operation the other components' work in between evicted from the caches: the same tie
pick cost 24.5 µs as the first member's cycle made it and 3.1 µs repeated at once. A change to
one member's path moves that cold cost to the next member that runs the same code, so compare
the three members' sum (and the whole set: ``/work/tmp/s19/setcpu.py``), not one member.

``--by-step`` splits each member again by the gang's place in the scheduling loop's step: ``first``
(the step's first cycle: the informers, the controller, the API server and the Event writes ran
just before it) or ``later`` (another gang's PodGroup cycle ran just before it in the same step,
``scheduler.cycle_turns``), and adds the whole PodGroup cycle per gang
(``PodGroupCycle.schedule_one_podgroup``: thread CPU from its start to its end, so an upper bound
should it give the loop back meanwhile; a gang of 3 seldom does). The difference is the cold
start the step's first gang pays (session 22, pgsmall).

The cyclic collector is off while the phase runs (its passes land wherever an allocation crosses
the threshold, several milliseconds at a time), unless ``--gc``. Each timer adds ~0.5-1 µs to
its own figure and to each timed caller's. Compare builds by running this file from a neutral
directory with ``PYTHONPATH`` set to each tree, alternately.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import gc
import importlib
import time
from collections.abc import Callable
from typing import Any

#: ``module:qualname`` of the spots timed inside a member's cycle (a method as ``Class.method``)
SPOTS = [
    "scheduler.schedule_one:find_nodes_that_fit",
    "scheduler.framework:Framework.run_pre_filter_plugins",
    "scheduler.framework:Framework.run_filter_hints",
    "scheduler.framework:Framework.run_pre_score_plugins",
    "scheduler.plugins.pod_topology_spread:PodTopologySpread.pre_score",
    "scheduler.schedule_one:fused_totals",
    "scheduler.plugins.pod_topology_spread:PodTopologySpread.score_array_bounded",
    "scheduler.schedule_one:select_from_totals",
    "scheduler.cache:Snapshot._catch_up",
    "scheduler.nodetable:NodeTable.update",
    "scheduler.nodetable:NodeTable.derived",
]
CYCLE = "scheduler.podgroup_algorithm:PodGroupAlgorithm._full_cycle"
#: the whole PodGroup cycle of a gang (``--by-step``)
GANG = "PodGroupCycle.schedule_one_podgroup"


class Split:
    """Thread CPU (ns) and calls per (spot, member)."""

    def __init__(self, clock: Callable[[], int] = time.thread_time_ns) -> None:
        self.clock = clock
        self.member = "-"
        #: ``--by-step``: the running gang's place in its loop step ("first"/"later"), asked when
        #: its first member's cycle starts; None: not split by step
        self.place: Callable[[], str] | None = None
        self._gang_place = ""
        #: the spots' labels in the order they were installed (the cycle first)
        self.labels: list[str] = []
        self.ns: collections.Counter[tuple[str, str]] = collections.Counter()
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()

    def wrap(self, fn: Callable[..., Any], label: str, is_cycle: bool) -> Callable[..., Any]:
        clock, ns, calls = self.clock, self.ns, self.calls

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if is_cycle:  # (self, assignment, ...): the member is its pod name's last character
                self.member = "m" + args[1].pod_info.name[-1]
                if self.place is not None:
                    if self.member == "m0":
                        self._gang_place = self.place()
                    self.member += " " + self._gang_place
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                key = (label, self.member)
                ns[key] += clock() - start
                calls[key] += 1

        return timed

    def wrap_gang(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` (the PodGroup cycle, a coroutine function) timed per gang, charged to the
        gang's place in its loop step (``self.place()`` at its start)."""
        clock, ns, calls = self.clock, self.ns, self.calls

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            place = self.place() if self.place is not None else ""
            start = clock()
            try:
                return await fn(*args, **kwargs)
            finally:
                key = (GANG, ("gang " + place).strip())
                ns[key] += clock() - start
                calls[key] += 1

        return timed

    def install(self, spot: str, is_cycle: bool = False) -> None:
        module_name, _, qualname = spot.partition(":")
        owner: Any = importlib.import_module(module_name)
        *owners, attr = qualname.split(".")
        for part in owners:
            owner = getattr(owner, part)
        setattr(owner, attr, self.wrap(getattr(owner, attr), qualname, is_cycle))
        self.labels.append(qualname)

    def report(self, sets: int) -> str:
        members = sorted({m for _, m in self.ns if m != "-"})
        lines = [f"thread CPU per call (µs) and calls per set, by member ({sets} sets):"]
        for label in self.labels:
            cells = [
                f"{m}: {self.ns[(label, m)] / self.calls[(label, m)] / 1000:7.1f} x{self.calls[(label, m)] / sets:4.2f}"
                for m in members
                if self.calls[(label, m)]
            ]
            lines.append(f"  {label:44s} " + "  ".join(cells))
        return "\n".join(lines)


def watch_steps(split: Split) -> None:
    """Split ``split`` by the gang's place in the scheduling loop's step: the scheduler whose
    loop runs the cycle is noted as it pops the pod, and its :class:`~scheduler.cycle_turns.
    CycleTurns` says whether a cycle of the current step already ended (its private ``_held``,
    read, not changed: set by the step's first cycle's end, reset once the step gave the loop
    back). The PodGroup cycle is timed as a whole too."""
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler

    running: list[Any] = [None]
    original = Scheduler.schedule_one

    @functools.wraps(original)
    async def schedule_one(self: Scheduler) -> bool:
        running[0] = self
        return await original(self)

    def place() -> str:
        sched = running[0]
        return "later" if sched is not None and sched.cycle_turns._held else "first"

    Scheduler.schedule_one = schedule_one  # type: ignore[method-assign]
    PodGroupCycle.schedule_one_podgroup = split.wrap_gang(PodGroupCycle.schedule_one_podgroup)  # type: ignore[method-assign]
    split.place = place
    split.labels.append(GANG)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("sets", nargs="?", type=int, default=400)
    ap.add_argument("--gc", action="store_true", help="leave the cyclic collector on")
    ap.add_argument("--spot", action="append", help="module:qualname to time instead of SPOTS")
    ap.add_argument("--by-step", action="store_true", help="split by the gang's place in its loop step")
    a = ap.parse_args()
    split = Split()
    split.install(CYCLE, is_cycle=True)
    if a.by_step:
        watch_steps(split)
    for spot in a.spot or SPOTS:
        split.install(spot)
    # the plane's modules after the patches: the schedule_one functions they import by name
    # are patched in schedule_one itself, where the cycle calls them
    import bench.workloads.statefulsets as statefulsets
    from bench.runner import server_gc

    class Env:
        def progress(self, message: str) -> None:
            pass

        def start_cpu(self) -> None:
            split.ns.clear()
            split.calls.clear()
            if not a.gc:
                gc.disable()

        def stop_cpu(self, n: int) -> None:
            split.member = "-"

    params = {"nodes": 5000, "racks": 50, "sets": a.sets, "replicas": 3, "gang": True}
    with server_gc():
        asyncio.run(statefulsets.run(params, Env()))  # type: ignore[arg-type]
    print(split.report(a.sets))


if __name__ == "__main__":
    main()
