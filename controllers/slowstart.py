"""kube's ``slowStartBatch``, the one loop every controller that creates many pods uses.

The StatefulSet, ReplicaSet, DaemonSet and Job controllers create pods in batches of 1, 2, 4, …:
a batch whose calls all succeed lets the next one double, and the batches stop after one with a
failure, so a quota or an admission denial costs a few requests, not hundreds. kube runs each
batch's calls as goroutines and waits for them all.

Here a batch of more than ``in_place`` calls runs as tasks under ``gather``; a batch of at most
``in_place`` runs in place, one call after another, every call of it made whatever the others
raise, as with the tasks. A controller passes its client's
:func:`~apiserver.client.interface.requests_per_step` (two with the in-process client, one over a
network): with the in-process client such calls run in the caller's own step rather than in a
task each on the next pass, and the caller goes on a pass sooner, so they take no more loop
passes and save a task each. A gang StatefulSet of three makes its creates (batches of one and
two) with no task: gangs-1000x3 takes 16.9 loop steps per set instead of 27.7, and 0.95x the
CPU per set with its Events written (session 23, docs/bench.md). A larger batch stays as tasks:
their first requests all go in one pass, where one task alone would give the loop back every two
requests (a 1,000-pod set's creates in place cost 1.04x).

A non-``Exception`` (a cancellation) ends the batches at once and is raised; an ``Exception`` is
a failure of its call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def slow_start_batch(
    count: int,
    fn: Callable[[int], Awaitable[Any]],
    *,
    initial: int = 1,
    in_place: int = 1,
    cap: int = 0,
) -> tuple[int, Exception | None]:
    """Call ``fn(0..count-1)`` in batches of ``initial``, then twice as many each time (at most
    ``cap`` when it is set), stopping after a batch with a failure. Returns how many calls
    succeeded and the batch's first failure (``None``: every call succeeded)."""
    done = 0
    index = 0
    batch = min(count, initial)
    while batch > 0:
        failures: list[Exception] = []
        if batch <= in_place:
            for k in range(batch):
                try:
                    await fn(index + k)
                except Exception as e:  # the call failed; the batch goes on, as with tasks
                    failures.append(e)
        else:
            for r in await asyncio.gather(*(fn(index + k) for k in range(batch)), return_exceptions=True):
                if isinstance(r, BaseException):
                    if not isinstance(r, Exception):
                        raise r
                    failures.append(r)
        index += batch
        done += batch - len(failures)
        if failures:
            return done, failures[0]
        count -= batch
        batch = min(2 * batch, count)
        if cap:
            batch = min(batch, cap)
    return done, None


__all__ = ["slow_start_batch"]
