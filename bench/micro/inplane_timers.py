"""Median time per call of named functions inside the plane, over gangs-SETSx3's phase (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/inplane_timers.py [--sets 1000] MODULE:QUALNAME ...

for instance ``apiserver.patch.tracker:FieldTracker.on_create scheduler.schedule_one:_totals``. Each
named function (synchronous: a coroutine function is refused, its time would include what it
awaits) is wrapped by a ``perf_counter_ns`` timer that counts only inside the measured phase of
``bench/micro/set_cpu_drained.py`` (the first StatefulSet create to the last pod bound, as the
bench's ``cpu_s``). The script prints the phase's figures, then per function its calls per set,
the median µs per call and their product (µs per set), largest first.

Why: a profiler's share of a small function is bent by its own cost per call, and the cyclic
collector's passes land in whatever frame allocates (one young pass of 80-100 ms per phase of
gangs-1000x3 is some 25 py-spy samples in one random place); an isolated micro-benchmark misses
what the plane around the function costs it (two to three times, session 24). The median of the
function's own calls inside the plane is neither. The wall clock serves: the phase is CPU-bound in
one thread, and the median drops the calls a collection or another process interrupted.

Nested timed functions count in each. A function is replaced on its module or class only: a name
imported elsewhere with ``from module import name`` still calls the unwrapped one.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import statistics
import time
from collections.abc import Callable
from typing import Any


class Timers:
    """The timed functions' durations (ns per call), counted while :attr:`active`."""

    def __init__(self) -> None:
        self.active = False
        self.durations: dict[str, list[int]] = {}
        #: what each wrapper replaced: ``(owner, name, its attribute as it was)``
        self._replaced: list[tuple[Any, str, Any]] = []

    def wrap(self, spec: str) -> None:
        """Replace ``module:Qual.name`` by a timed wrapper (ValueError for a coroutine function)."""
        module, _, qualname = spec.partition(":")
        if not qualname:
            raise ValueError(f"{spec!r}: expected MODULE:QUALNAME")
        owner: Any = importlib.import_module(module)
        *path, name = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        raw = inspect.getattr_static(owner, name)
        fn: Callable[..., Any] = getattr(owner, name)
        if inspect.iscoroutinefunction(fn):
            raise ValueError(f"{spec}: a coroutine function (its time would include what it awaits)")
        durations = self.durations.setdefault(qualname, [])
        clock = time.perf_counter_ns

        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return fn(*args, **kwargs)
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                durations.append(clock() - start)

        self._replaced.append((owner, name, raw))
        setattr(owner, name, staticmethod(timed) if isinstance(raw, staticmethod) else timed)

    def restore(self) -> None:
        """Put every wrapped function back as it was."""
        for owner, name, raw in reversed(self._replaced):
            setattr(owner, name, raw)
        self._replaced.clear()

    def rows(self, sets: int) -> list[tuple[str, float, float, float]]:
        """``(name, calls per set, median µs per call, µs per set)``, the largest µs per set first."""
        out = []
        for name, got in self.durations.items():
            if got:
                median = statistics.median(got) / 1e3
                out.append((name, len(got) / sets, median, median * len(got) / sets))
        return sorted(out, key=lambda row: -row[3])


async def measure(sets: int, timers: Timers, nodes: int = 5000) -> dict[str, float]:
    """``set_cpu_drained.measure`` with ``timers`` active from the first create to the last pod bound."""
    import bench.workloads.statefulsets as workload
    from bench.micro.set_cpu_drained import measure as drained

    arriving, wait = workload.create_arriving, workload.SetTracker.wait

    def start(*args: Any, **kwargs: Any) -> Any:
        timers.active = True
        return arriving(*args, **kwargs)

    async def until_bound(tracker: Any, count: int, stage: str, timeout: float) -> None:
        await wait(tracker, count, stage, timeout)
        timers.active = False

    workload.create_arriving = start  # type: ignore[assignment]
    workload.SetTracker.wait = until_bound  # type: ignore[method-assign]
    try:
        return await drained(sets, nodes)
    finally:
        workload.create_arriving = arriving
        workload.SetTracker.wait = wait  # type: ignore[method-assign]


def run_phase(sets: int, timers: Timers) -> dict[str, float]:
    """:func:`measure` in a fresh event loop, under the harness's collector settings."""
    from bench.workloads.common import server_gc

    with server_gc():
        return asyncio.run(measure(sets, timers))


def arguments(metavar: str) -> argparse.ArgumentParser:
    """The command line of this script and of ``stmt_timers.py``: ``--sets``, then the functions."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("functions", nargs="+", metavar=metavar)
    return ap


def main() -> None:
    ap = arguments("MODULE:QUALNAME")
    args = ap.parse_args()
    timers = Timers()
    try:
        for spec in args.functions:
            timers.wrap(spec)
    except (ValueError, ImportError, AttributeError) as e:
        ap.error(str(e))
    try:
        figures = run_phase(args.sets, timers)
    finally:
        timers.restore()
    print(json.dumps(figures))
    for name, calls, median, per_set in timers.rows(args.sets):
        print(f"{name:55s} calls/set {calls:6.2f}  median {median:7.2f} µs  {per_set:7.1f} µs/set")


if __name__ == "__main__":
    main()
