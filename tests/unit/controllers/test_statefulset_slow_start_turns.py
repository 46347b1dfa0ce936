"""``slow_start_batch`` gives the event loop back exactly as ``asyncio.gather`` does.

Its loop turns are part of the plane's behaviour, not only its cost: every batch of pod steps
starts one turn after the sync asks for it, and the sync goes on two turns after the batch's last
step ends. Fewer turns per sync let the StatefulSet controller run ahead of the scheduler. A
batch of one awaited in place, and larger ones as tasks awaited in order, cut a few µs per set
and made ``gangs-1000x3``'s ``set_placed_s_median`` 0.13 → 5.97 s (session 16, docs/bench.md;
session 9 saw the same). This test pins the turns: a ticker task counts loop iterations, and
every start and end of a call and the batch's return must land on the same iteration as with
the reference (a plain ``gather`` per batch), for calls that suspend zero or more times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from controllers.statefulset.control import MAX_BATCH, slow_start_batch

pytestmark = pytest.mark.anyio

Batch = Callable[[int, Callable[[int], Awaitable[bool]]], Awaitable[int]]


async def _gather_batches(count: int, fn: Callable[[int], Awaitable[bool]]) -> int:
    """The reference: batches of 1, 2, 4, … each one ``gather``, stopping after a failure."""
    done = index = 0
    batch = min(count, 1)
    while batch > 0:
        results = await asyncio.gather(*(fn(index + k) for k in range(batch)), return_exceptions=True)
        index += batch
        failures = [r for r in results if isinstance(r, BaseException)]
        done += batch - len(failures)
        if failures:
            raise failures[0]
        count -= batch
        batch = min(2 * batch, count, MAX_BATCH)
    return done


async def _turns(run: Batch, suspends: list[int], fails: set[int]) -> list[Any]:
    ticks = 0
    log: list[Any] = []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def fn(i: int) -> bool:
        log.append(("start", i, ticks))
        for _ in range(suspends[i]):
            await asyncio.sleep(0)  # a request that gives the loop back (apiserver.server.loopshare)
        log.append(("end", i, ticks))
        if i in fails:
            raise ValueError(i)
        return False

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        log.append(("done", await run(len(suspends), fn), ticks))
    except ValueError as e:
        log.append(("raised", e.args, ticks))
    tick.cancel()
    return log


@pytest.mark.parametrize("seed", range(4))
async def test_slow_start_batch_takes_gathers_loop_turns(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(40):
        count = rnd.choice([1, 2, 3, 3, 5, 9, rnd.randint(0, 40)])
        suspends = [rnd.choice([0, 1, 1, 2, 3]) for _ in range(count)]
        fails = {i for i in range(count) if rnd.random() < 0.05}
        ours = await _turns(lambda n, f: slow_start_batch(n, f), suspends, fails)
        reference = await _turns(_gather_batches, suspends, fails)
        assert ours == reference


async def test_a_gang_set_of_three_takes_its_turns() -> None:
    """The shape of ``gangs-1000x3``'s sync, spelled out: a batch of 1, then of 2, each call
    yielding once; the batch's calls start a turn after the sync asks, the sync resumes two
    turns after the last call ends."""
    log = await _turns(lambda n, f: slow_start_batch(n, f), [1, 1, 1], set())
    turns = {(e[0], e[1]) if e[0] != "done" else ("done", 0): e[-1] for e in log}
    # asked on turn 1: the call starts on turn 2, ends on 3; the sync resumes on 5 and asks again
    assert turns[("start", 0)] == 2 and turns[("end", 0)] == 3
    assert turns[("start", 1)] == turns[("start", 2)] == 6
    assert turns[("end", 1)] == turns[("end", 2)] == 7
    assert turns[("done", 0)] == 9
