"""The drivers' arrival: ``creators`` objects reach the plane per loop pass.

How many objects arrive together changes the plane's CPU per object (larger batches run warmer),
so it is the workload's parameter (gang-statefulsets, scheduling-basic), fixed whatever the
in-process client's loop share does with a task's consecutive requests (docs/bench.md, session
22 arrival)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from bench.workloads import scheduling, statefulsets
from bench.workloads.common import DEFAULT_CREATORS, create_arriving
from bench.workloads.statefulsets import statefulset


class _PassCounter:
    """Counts the event loop's passes: a callback that schedules itself runs once per pass."""

    def __init__(self) -> None:
        self.passes = 0
        self._stopped = False

    def start(self) -> None:
        asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        if not self._stopped:
            self.passes += 1
            asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        self._stopped = True


class _Client:
    """Records each create with the pass it was made in; a create never gives the loop back (an
    in-process client's loop share could make one; the arrival must not depend on it)."""

    def __init__(self, counter: _PassCounter) -> None:
        self.counter = counter
        self.created: list[tuple[int, str]] = []

    async def create(self, body: dict[str, Any]) -> None:
        self.created.append((self.counter.passes, body["metadata"]["name"]))


async def _arrival(sets: int, creators: int) -> list[tuple[int, str]]:
    counter = _PassCounter()
    client = _Client(counter)
    counter.start()
    await create_arriving(
        client.create, (statefulset(f"gang-{s}", 3, True, "") for s in range(sets)), creators
    )
    counter.stop()
    return client.created


@pytest.mark.parametrize("creators", [1, 2, 4, 16])
def test_each_creator_makes_one_create_per_loop_pass(creators: int) -> None:
    created = asyncio.run(_arrival(25, creators))
    assert sorted(name for _, name in created) == sorted(f"gang-{s}" for s in range(25))
    per_pass = Counter(p for p, _ in created)
    assert max(per_pass.values()) == min(creators, 25)
    # every pass but the last carries a full round of creators: the sets arrive as fast as that
    full = sorted(per_pass.values(), reverse=True)[:-1]
    assert all(n == creators for n in full)
    assert len(per_pass) == -(-25 // creators)


def test_the_default_arrival_is_two_per_pass() -> None:
    """Two: the arrival session 21's figures were measured with (its drivers then followed the
    in-process client's two requests per step)."""
    assert DEFAULT_CREATORS == 2
    assert statefulsets.PARAMS["creators"] == scheduling.PARAMS["creators"] == DEFAULT_CREATORS
    per_pass = Counter(p for p, _ in asyncio.run(_arrival(10, DEFAULT_CREATORS)))
    assert sorted(per_pass.values()) == [2] * 5
