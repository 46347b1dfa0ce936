"""Where a bench scenario's wall time goes besides this process's CPU (a script, Linux):

    python -m bench.micro.loop_idle                      # scheduling-basic, 5,000 nodes, 10,000 pods
    python -m bench.micro.loop_idle scheduling-basic nodes=50 pods=100 backlog=0
    python -m bench.micro.loop_idle KIND [key=value ...] --handles

It runs one repetition of a workload (``bench.workloads.<module>.run``, the scenario's own code:
the same objects, created the same way) under the harness's collector settings, and splits each
measured phase (``Env.start_cpu`` .. ``Env.stop_cpu``) of the event-loop thread into:

- **on CPU**, **waiting for a core** (runnable, another process had it) and **off CPU, not
  runnable** (blocked: the loop's ``select()`` with a timeout, a lock, I/O), from the thread's
  ``/proc/self/task/<tid>/schedstat``: wall = the three together;
- **loop idle**: the time the loop spent in ``select()`` with a non-zero timeout, i.e. with no
  ready callback (nothing to do until a timer or I/O), and what woke it (the earliest timer's
  callback, or the ready file descriptors);
- **cyclic collector**: collections per generation, their CPU and what they freed (the
  collector's time is CPU, so it is in *on CPU*);
- with ``--handles``: loop iterations and ready callbacks per pod, by task coroutine (counting
  them costs CPU of its own: the other numbers are read without it).

Why: pods/s is 1 / (wall per pod); when the loop is never idle the wall above CPU is time the
process waited for a core (other processes), not something the plane could schedule better.
Session 12 (``basicwall``) used it to show that SchedulingBasic's measured phase has no idle time.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import importlib
import os
import resource
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.runner import server_gc
from bench.scenario import WORKLOADS
from bench.workloads.common import Env


def _schedstat() -> tuple[int, int] | None:
    """(ns on CPU, ns runnable but waiting for a core) of the calling thread; None off Linux."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            on, wait, _ = f.read().split()
    except OSError:
        return None
    return int(on), int(wait)


def _callback_name(cb: Any) -> str:
    """A callback's function, or for a task step the coroutine the task runs."""
    owner = getattr(cb, "__self__", None)
    if owner is not None and hasattr(owner, "get_coro"):
        coro = owner.get_coro()
        return f"task {getattr(coro, '__qualname__', type(coro).__name__)}"
    fn = getattr(cb, "func", cb)  # functools.partial
    return str(getattr(fn, "__qualname__", None) or type(fn).__name__)


class Phase:
    """What the probe counted over one measured phase."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self.on_cpu: float | None = None
        self.runqueue: float | None = None
        self.pods = 0
        self.idle = 0.0
        self.idle_waits = 0
        self.iterations = 0
        self.woke: collections.Counter[str] = collections.Counter()
        self.woke_s: dict[str, float] = collections.defaultdict(float)
        self.handles: collections.Counter[str] = collections.Counter()
        self.gc_cpu = 0.0
        self.gc_runs: collections.Counter[int] = collections.Counter()
        self.gc_collected = 0

    def report(self, title: str) -> str:
        per = max(self.pods, 1)
        lines = [f"{title}: {self.pods} pods, wall {self.wall:.3f} s, process CPU {self.cpu:.3f} s"]
        if self.on_cpu is not None and self.runqueue is not None:
            blocked = self.wall - self.on_cpu - self.runqueue
            lines.append(
                f"  loop thread: on CPU {self.on_cpu:.3f} s, waiting for a core {self.runqueue:.3f} s, "
                f"off CPU not runnable {blocked:.3f} s"
            )
        lines.append(
            f"  loop idle (select with a timeout): {self.idle:.3f} s in {self.idle_waits} waits, "
            f"{self.iterations} loop iterations ({self.iterations / per:.2f} per pod)"
        )
        for key, s in sorted(self.woke_s.items(), key=lambda kv: -kv[1])[:8]:
            lines.append(f"    {s * 1e3:9.1f} ms {self.woke[key]:6d}x woken by {key}")
        gens = ", ".join(f"gen {g}: {n}" for g, n in sorted(self.gc_runs.items())) or "none"
        lines.append(
            f"  cyclic collector: {gens}; {self.gc_cpu:.3f} s CPU "
            f"({100 * self.gc_cpu / max(self.cpu, 1e-9):.1f} % of the phase), {self.gc_collected} objects freed"
        )
        if self.handles:
            total = sum(self.handles.values())
            lines.append(f"  ready callbacks: {total / per:.2f} per pod")
            for key, n in self.handles.most_common(12):
                lines.append(f"    {n / per:6.2f} per pod  {key}")
        return "\n".join(lines)


class LoopProbe:
    """Wraps the running loop's selector and the collector's callbacks; counts while a phase is open."""

    def __init__(self, count_handles: bool = False) -> None:
        self.count_handles = count_handles
        self.phases: list[Phase] = []
        self._cur: Phase | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._t0 = self._c0 = 0.0
        self._ss0: tuple[int, int] | None = None
        self._gc_t0: float | None = None

    def _install(self, loop: asyncio.AbstractEventLoop) -> None:
        selector = getattr(loop, "_selector", None)
        if selector is None:
            raise RuntimeError("loop_idle needs asyncio's selector event loop")
        select = selector.select

        def timed_select(timeout: float | None = None) -> Any:
            cur = self._cur
            if cur is None:
                return select(timeout)
            cur.iterations += 1
            if self.count_handles:
                for h in loop._ready:  # type: ignore[attr-defined]
                    cur.handles[_callback_name(h._callback)] += 1
            if timeout == 0:
                return select(timeout)
            scheduled = loop._scheduled  # type: ignore[attr-defined]
            head = scheduled[0] if scheduled else None
            t = time.perf_counter()
            events = select(timeout)
            dt = time.perf_counter() - t
            if events:
                key = "I/O on " + ", ".join(sorted({str(k.fileobj) for k, _ in events}))[:100]
            elif head is not None:
                key = "timer " + _callback_name(head._callback)
            else:
                key = "nothing (no timer)"
            cur.idle += dt
            cur.idle_waits += 1
            cur.woke[key] += 1
            cur.woke_s[key] += dt
            return events

        selector.select = timed_select
        self._loop = loop

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_t0 = time.process_time()
            return
        cur, t0 = self._cur, self._gc_t0
        if cur is None or t0 is None:
            return
        cur.gc_cpu += time.process_time() - t0
        cur.gc_runs[info["generation"]] += 1
        cur.gc_collected += info["collected"]

    @contextmanager
    def collecting(self) -> Iterator[None]:
        gc.callbacks.append(self._on_gc)
        try:
            yield
        finally:
            gc.callbacks.remove(self._on_gc)

    def begin(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._install(loop)
        self._cur = Phase()
        self._ss0 = _schedstat()
        self._t0, self._c0 = time.perf_counter(), time.process_time()

    def end(self, pods: int) -> None:
        cur = self._cur
        if cur is None:
            return
        cur.wall = time.perf_counter() - self._t0
        cur.cpu = time.process_time() - self._c0
        ss1 = _schedstat()
        if self._ss0 is not None and ss1 is not None:
            cur.on_cpu = (ss1[0] - self._ss0[0]) / 1e9
            cur.runqueue = (ss1[1] - self._ss0[1]) / 1e9
        cur.pods = pods
        self._cur = None
        self.phases.append(cur)


class ProbeEnv(Env):
    """The runner's :class:`Env`, with the probe opened and closed with each measured phase."""

    probe: LoopProbe | None = None

    def start_cpu(self) -> None:
        assert self.probe is not None
        self.probe.begin()
        super().start_cpu()

    def stop_cpu(self, pods: int = 0) -> None:
        super().stop_cpu(pods)
        assert self.probe is not None
        self.probe.end(pods)


def _value(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def measure(kind: str, params: dict[str, Any], count_handles: bool = False) -> list[Phase]:
    """One repetition of workload ``kind`` with ``params``: the probe's numbers per measured phase."""
    module = importlib.import_module(WORKLOADS[kind])
    probe = LoopProbe(count_handles)
    env = ProbeEnv()
    env.probe = probe
    gc.collect()
    with probe.collecting(), server_gc():
        asyncio.run(module.run(params, env))
    return probe.phases


def main(argv: list[str]) -> None:
    handles = "--handles" in argv
    args = [a for a in argv if a != "--handles"]
    kind = args[0] if args and "=" not in args[0] else "scheduling-basic"
    params: dict[str, Any] = {"nodes": 5000, "pods": 10000} if kind == "scheduling-basic" else {}
    for a in args:
        if "=" in a:
            k, v = a.split("=", 1)
            params[k] = _value(v)
    print(f"{kind} {params} pid {os.getpid()} load {os.getloadavg()[0]:.2f}")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for i, phase in enumerate(measure(kind, params, handles), 1):
        print(phase.report(f"phase {i}"))
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"whole run: {r1.ru_nvcsw - r0.ru_nvcsw} voluntary, {r1.ru_nivcsw - r0.ru_nivcsw} involuntary "
        "context switches"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
