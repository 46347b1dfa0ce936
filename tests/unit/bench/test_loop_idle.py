"""bench/micro/loop_idle: the split of a measured phase's wall time (idle loop, collector, callbacks)."""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

from bench.micro.loop_idle import LoopProbe, measure
from scheduler.cycle_turns import DEFAULT_CYCLES


def test_a_loop_waiting_on_a_timer_is_idle_and_names_the_timer() -> None:
    probe = LoopProbe()

    async def phase() -> None:
        probe.begin()
        await asyncio.sleep(0.05)  # the idle time being measured: nothing is ready until the timer
        probe.end(1)

    asyncio.run(phase())
    (p,) = probe.phases
    assert p.idle >= 0.04
    assert p.idle_waits >= 1
    assert p.pods == 1
    assert any(key.startswith("timer ") for key in p.woke), p.woke
    assert "loop idle (select with a timeout)" in p.report("phase")


def test_a_busy_loop_is_not_idle_and_its_collections_are_counted() -> None:
    probe = LoopProbe(count_handles=True)

    async def spin() -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    async def phase() -> None:
        probe.begin()
        await asyncio.gather(spin(), spin())
        gc.collect()
        probe.end(2)

    with probe.collecting():
        asyncio.run(phase())
    (p,) = probe.phases
    assert p.idle == 0.0 and p.idle_waits == 0
    assert p.iterations >= 20
    spins = sum(n for key, n in p.handles.items() if key.endswith(".spin"))
    assert spins >= 40  # each task's steps are its ready callbacks
    assert p.gc_runs[2] == 1  # the full collection inside the phase, by generation
    assert p.gc_cpu > 0.0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="schedstat is Linux's")
def test_scheduling_basic_phases_split_wall_into_cpu_waiting_and_blocked() -> None:
    phases = measure("scheduling-basic", {"nodes": 20, "pods": 40, "backlog": False}, count_handles=True)
    (p,) = phases
    assert p.pods == 40
    assert p.on_cpu is not None and p.runqueue is not None
    # the three parts of the thread's wall: on CPU, runnable, blocked (not negative beyond clock skew)
    assert p.wall - p.on_cpu - p.runqueue > -0.05
    # one scheduling cycle per pod at least, up to four of them in one step of the loop's task
    # (scheduler.cycle_turns)
    assert p.handles["task Scheduler._run"] >= 40 // DEFAULT_CYCLES
