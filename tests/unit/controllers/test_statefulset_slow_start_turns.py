"""The StatefulSet controller's slow start (``controllers.slowstart.slow_start_batch`` capped at
``MAX_BATCH``, its first failure raised): loop turns and failure semantics, batch by batch.

A batch of more than ``in_place`` calls gives the event loop back exactly as ``asyncio.gather``
does; a batch of at most ``in_place`` runs its calls in place, one after another (the client's
:func:`~apiserver.client.interface.requests_per_step`, see the function's docstring: a gang set
of three then makes its creates without a task). Either way every call of a batch is made
whatever the others raise, the batches stop after one with a failure, and its first error is
raised. The turns are pinned against two references (``_gather_batches`` and
``_batches_in_place``): a ticker task counts loop iterations, and every start and end of a call
and the batch's return must land on the same iteration, for calls that suspend zero or more
times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from apiserver.client.interface import requests_per_step
from apiserver.server.loopshare import LoopShare
from controllers import slowstart
from controllers.statefulset.control import MAX_BATCH

pytestmark = pytest.mark.anyio

Batch = Callable[[int, Callable[[int], Awaitable[bool]]], Awaitable[int]]


async def slow_start_batch(
    count: int, fn: Callable[[int], Awaitable[bool]], initial: int = 1, in_place: int = 1
) -> int:
    """How the controller's sync calls it (``StatefulSetControl._step``)."""
    done, err = await slowstart.slow_start_batch(count, fn, initial=initial, in_place=in_place, cap=MAX_BATCH)
    if err is not None:
        raise err
    return done


async def _gather_batches(count: int, fn: Callable[[int], Awaitable[bool]]) -> int:
    """Every batch of 1, 2, 4, … one ``gather``, stopping after a failure."""
    return await _batches_in_place(count, fn, 0)


async def _batches_in_place(count: int, fn: Callable[[int], Awaitable[bool]], in_place: int) -> int:
    """Batches of 1, 2, 4, …: up to ``in_place`` calls awaited one by one, larger ones gathered."""
    done = index = 0
    batch = min(count, 1)
    while batch > 0:
        if batch <= in_place:
            results: list[Any] = []
            for k in range(batch):
                try:
                    results.append(await fn(index + k))
                except Exception as e:
                    results.append(e)
        else:
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


def _random_case(rnd: random.Random) -> tuple[list[int], set[int]]:
    count = rnd.choice([1, 2, 3, 3, 5, 9, rnd.randint(0, 40)])
    suspends = [rnd.choice([0, 1, 1, 2, 3]) for _ in range(count)]
    return suspends, {i for i in range(count) if rnd.random() < 0.05}


@pytest.mark.parametrize("seed", range(4))
async def test_batches_beyond_in_place_take_gathers_loop_turns(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(40):
        suspends, fails = _random_case(rnd)
        ours = await _turns(lambda n, f: slow_start_batch(n, f, in_place=0), suspends, fails)
        assert ours == await _turns(_gather_batches, suspends, fails)


@pytest.mark.parametrize("in_place", [1, 2, 4])
@pytest.mark.parametrize("seed", range(3))
async def test_batches_up_to_in_place_run_their_calls_in_place(in_place: int, seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(40):
        suspends, fails = _random_case(rnd)
        ours = await _turns(lambda n, f: slow_start_batch(n, f, in_place=in_place), suspends, fails)
        assert ours == await _turns(lambda n, f: _batches_in_place(n, f, in_place), suspends, fails)


async def test_a_gang_set_of_three_makes_its_calls_in_its_own_steps() -> None:
    """The shape of ``gangs-1000x3``'s sync on the in-process client (``in_place`` 2): a batch of
    1, then of 2, each call yielding once. In place, each call starts on the turn the last one
    ended and the sync goes on at once; as tasks, a batch's calls started a turn after the sync
    asked and the sync resumed two turns after the last one ended (done on turn 9, not 4)."""
    log = await _turns(lambda n, f: slow_start_batch(n, f, in_place=2), [1, 1, 1], set())
    turns = {(e[0], e[1]) if e[0] != "done" else ("done", 0): e[-1] for e in log}
    assert [turns[("start", i)] for i in range(3)] == [1, 2, 3]
    assert [turns[("end", i)] for i in range(3)] == [2, 3, 4]
    assert turns[("done", 0)] == 4
    tasks = await _turns(lambda n, f: slow_start_batch(n, f, in_place=0), [1, 1, 1], set())
    assert tasks[-1] == ("done", 3, 9)


async def test_a_failing_call_in_place_ends_the_batches_after_its_own() -> None:
    """Every call of the failing batch is made (as gathered goroutines would be), none after it,
    and the first error is raised."""
    calls: list[int] = []

    async def fn(i: int) -> bool:
        calls.append(i)
        if i in (1, 2):
            raise ValueError(i)
        return False

    with pytest.raises(ValueError) as raised:
        await slow_start_batch(10, fn, in_place=2)
    assert raised.value.args == (1,)
    assert calls == [0, 1, 2]


async def test_cancelling_the_sync_stops_an_in_place_batch_at_once() -> None:
    started: list[int] = []
    blocked = asyncio.Event()
    answer = asyncio.Event()

    async def fn(i: int) -> bool:
        started.append(i)
        blocked.set()
        await answer.wait()  # a request waiting for its answer
        return False

    task = asyncio.create_task(slow_start_batch(3, fn, initial=2, in_place=2))
    await blocked.wait()
    task.cancel()
    answer.set()  # any later call would be answered at once
    with pytest.raises(asyncio.CancelledError):
        await task
    assert started == [0]


def test_requests_per_step_is_the_in_process_clients_loop_share() -> None:
    from apiserver.server.localclient import LocalClient

    class NetworkClient:
        """A client without the property: each request waits on a network."""

    api: Any = object()
    assert requests_per_step(LocalClient(api, loop_share=LoopShare())) == 2
    assert requests_per_step(LocalClient(api, loop_share=LoopShare(requests=4))) == 4
    assert requests_per_step(LocalClient(api, loop_share=LoopShare(every=True))) == 1
    assert requests_per_step(NetworkClient()) == 1
