"""apiserver.loops.running: a kept loop while it runs, else the running loop."""

from __future__ import annotations

import asyncio

import pytest

from apiserver import loops


def test_the_kept_loop_while_it_runs_else_the_running_one() -> None:
    kept: list[asyncio.AbstractEventLoop] = []

    async def first() -> None:
        here = asyncio.get_running_loop()
        assert loops.running(None) is here
        assert loops.running(here) is here
        kept.append(here)

    async def second() -> None:
        # the first loop is closed: not used, whatever was kept
        assert loops.running(kept[0]) is asyncio.get_running_loop()
        assert loops.running(kept[0]) is not kept[0]

    asyncio.run(first())
    asyncio.run(second())


def test_outside_any_loop_it_raises_as_asking_does() -> None:
    idle = asyncio.new_event_loop()
    try:
        with pytest.raises(RuntimeError):
            loops.running(idle)
    finally:
        idle.close()
