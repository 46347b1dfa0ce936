"""What each kind of event-loop step costs per gang set in the whole plane (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/loop_census.py [--sets 600] [--replicas 3]

Runs ``gangs-<sets>x<replicas>`` in-process (5,000 nodes, the harness's collector settings, as
``/work/tmp/s19/setcpu.py`` and the bench do) and, during the measured phase only, times every
ready callback the loop runs (``asyncio.events.Handle._run``) with the thread's CPU clock. Steps
are grouped by what they run: a task's step by the task's coroutine (``task:Informer.run``), any
other callback by its function. Printed per kind: steps per set, CPU µs per set and the median
µs of one step; for the informers' steps also the part spent in ``Informer._upsert_key`` (the
informer's cache and index update and every handler it calls) and the rest, which is the
informer machinery itself (the task's wake-up, the watch's generator and wait, the batch's
records shared, the per-event loop). Then each informer's wake-ups and upserted events per set
(deletes and bookmarks are not counted as events; a wake-up is a step of its task).

Why: the sampling profiles of the plane (py-spy) over-weight system calls (``getpid`` inside
``asyncio.get_running_loop``, the clock reads) and attribute a coroutine only while it runs,
and cProfile inflates call-heavy code several times; a whole step timed from call to return
says what a kind of work costs where it runs, cold caches included (the plane's working set:
a step costs two to three times what the same code costs in an isolated micro-benchmark).

The timing adds two clock reads per step (~0.4 µs, ~45 steps per set): compare kinds within a
run, and builds only by alternating runs (the machine's load moves whole runs by several %).
"""

from __future__ import annotations

import argparse
import asyncio
import asyncio.events
import collections
import statistics
import time
from typing import Any


def _kind(handle: asyncio.Handle) -> str:
    """A ready callback's kind: for a task's step the task's coroutine, else the callback."""
    cb = handle._callback  # type: ignore[attr-defined]
    owner = getattr(cb, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return "task:" + getattr(owner.get_coro(), "__qualname__", "?")
    return "cb:" + getattr(cb, "__qualname__", type(cb).__name__)


class Census:
    """Steps by kind (CPU ns of each, and of the informer upserts inside it) and informer wakes."""

    def __init__(self) -> None:
        self.on = False
        self.steps: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        self.wakes: collections.Counter[str] = collections.Counter()
        self.events: collections.Counter[str] = collections.Counter()
        self._inner = 0
        self._woken = ""
        self._clients: dict[int, int] = {}

    def _label(self, inf: Any) -> str:
        """An informer's resource, client (one per component: numbered in the order first seen)
        and field selector."""
        client = self._clients.setdefault(id(inf.client), len(self._clients) + 1)
        selector = f", {inf.field_selector}" if inf.field_selector else ""
        return f"{inf.gvr} (client {client}{selector})"

    def install(self) -> None:
        from apiserver.client.informer import Informer

        clock = time.thread_time_ns
        census = self
        run = asyncio.events.Handle._run
        upsert = Informer._upsert_key

        def timed_run(handle: asyncio.Handle) -> None:
            if not census.on:
                run(handle)
                return
            census._inner = 0
            kind = _kind(handle)
            if kind == "task:Informer.run":
                # the informer whose task this is: ``self`` of its ``run`` coroutine
                task = handle._callback.__self__  # type: ignore[attr-defined]
                census._woken = census._label(task.get_coro().cr_frame.f_locals["self"])
            start = clock()
            try:
                run(handle)
            finally:
                census.steps[kind].append((clock() - start, census._inner))
                if census._woken:
                    census.wakes[census._woken] += 1
                    census._woken = ""

        def timed_upsert(inf: Any, key: str, obj: Any) -> None:
            if census.on:
                census.events[census._label(inf)] += 1
            start = clock()
            try:
                upsert(inf, key, obj)
            finally:
                census._inner += clock() - start

        setattr(asyncio.events.Handle, "_run", timed_run)  # noqa: B010 (a method swapped for the run)
        setattr(Informer, "_upsert_key", timed_upsert)  # noqa: B010

    def report(self, sets: int, cpu_s: float) -> str:
        lines = [f"process CPU of the measured phase: {1e3 * cpu_s / sets:.3f} ms per set ({sets} sets)"]
        total = sum(ns for v in self.steps.values() for ns, _ in v)
        lines.append(
            f"loop steps: {sum(len(v) for v in self.steps.values()) / sets:.1f} per set, "
            f"{total / sets / 1e3:.0f} µs CPU per set"
        )
        lines.append(
            f"{'steps/set':>9} {'µs/set':>8} {'median µs':>10} {'upserts µs/set':>15} {'rest µs/set':>12}  kind"
        )
        for kind, v in sorted(self.steps.items(), key=lambda kv: -sum(ns for ns, _ in kv[1])):
            spent = sum(ns for ns, _ in v)
            inner = sum(i for _, i in v)
            med = statistics.median(ns for ns, _ in v)
            split = f"{inner / sets / 1e3:15.1f} {(spent - inner) / sets / 1e3:12.1f}" if inner else " " * 28
            lines.append(f"{len(v) / sets:9.2f} {spent / sets / 1e3:8.1f} {med / 1e3:10.2f} {split}  {kind}")
        lines.append("informer wake-ups and events per set:")
        for label, n in self.wakes.most_common():
            lines.append(f"{n / sets:9.2f} {self.events[label] / sets:8.2f}  {label}")
        return "\n".join(lines)


class _Env:
    """The workload's environment: the census runs only between its CPU marks."""

    def __init__(self, census: Census) -> None:
        self.census = census
        self.cpu = 0.0
        self._c0 = 0.0

    def progress(self, message: str) -> None:
        pass

    def start_cpu(self) -> None:
        self.census.on = True
        self._c0 = time.process_time()

    def stop_cpu(self, n: int) -> None:
        self.cpu = time.process_time() - self._c0
        self.census.on = False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=600)
    ap.add_argument("--replicas", type=int, default=3)
    args = ap.parse_args()

    import bench.workloads.statefulsets as workload
    from bench.runner import server_gc

    census = Census()
    census.install()
    env = _Env(census)
    params = {"nodes": 5000, "racks": 50, "sets": args.sets, "replicas": args.replicas, "gang": True}
    with server_gc():
        asyncio.run(workload.run(params, env))  # type: ignore[arg-type]
    print(census.report(args.sets, env.cpu))


if __name__ == "__main__":
    main()
