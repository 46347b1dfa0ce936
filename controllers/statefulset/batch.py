"""One slow-start batch of pod steps: every call of the batch runs, then the outcomes in order.

kube's ``slowStartBatch`` starts a batch's calls as goroutines and waits for all of them. The
general form here is ``asyncio.gather(..., return_exceptions=True)`` (:func:`gather_batch`).
A new gang set of 3 runs two batches per sync (1, then 2), and the gather machinery (its
outer future, a done callback per child, one more loop hop to wake the sync) cost about a fifth
of the set's pod-step CPU. :func:`run_batch` gives the same outcomes with less of it:

* a batch of one is awaited in place. Nothing runs beside it, so there is nothing to wait for
  concurrently. The call still gives the loop back at its first API call: the in-process
  client yields before every request. (Session 9 reverted an in-place await when the client did
  not yield yet, and a sync then ran to its end without giving the loop back.)
* a larger batch starts one task per call, in order, exactly as ``gather`` does, and the sync
  awaits them in that order. A task that finished first is already done when its turn comes.

Outcomes are the same list as ``gather``'s: a result or the exception, per call, in call order.
A call cancelled on its own (not the sync) is an outcome, as ``gather`` reports it. When the
sync itself is cancelled, the calls still running are cancelled too (what ``gather`` does on
cancellation) and the cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

#: what a batch returns per call: its result, or the exception it raised
Outcome = bool | BaseException
#: how a batch runs ``fn(first .. first+size-1)``
BatchRunner = Callable[[Callable[[int], Awaitable[bool]], int, int], Awaitable[list[Outcome]]]


async def gather_batch(fn: Callable[[int], Awaitable[bool]], first: int, size: int) -> list[Outcome]:
    """The general form: every call as a task under ``gather``."""
    return await asyncio.gather(*(fn(first + k) for k in range(size)), return_exceptions=True)


async def run_batch(fn: Callable[[int], Awaitable[bool]], first: int, size: int) -> list[Outcome]:
    """:func:`gather_batch`'s outcomes without its machinery (module docstring)."""
    if size == 1:
        try:
            return [await fn(first)]
        except Exception as e:  # noqa: BLE001 - an outcome, as gather(return_exceptions=True) keeps it
            return [e]
    tasks = [asyncio.ensure_future(fn(first + k)) for k in range(size)]
    outcomes: list[Outcome] = []
    for i, task in enumerate(tasks):
        try:
            outcomes.append(await task)
        except asyncio.CancelledError as e:
            me = asyncio.current_task()
            if me is not None and me.cancelling():
                for rest in tasks[i + 1 :]:
                    rest.cancel()
                raise
            outcomes.append(e)
        except Exception as e:  # noqa: BLE001 - an outcome, as gather(return_exceptions=True) keeps it
            outcomes.append(e)
    return outcomes
