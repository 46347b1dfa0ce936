"""``bench.micro.pgcycle_split``'s timers: a spot's time and calls are counted whether it is a
function or a coroutine function, a wrapped spot answers and raises as it would unwrapped, a
module-level function is replaced where it was imported by name too, static methods are refused,
and the report lists each spot per set and per call. A fake clock: no timing involved."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from bench.micro.pgcycle_split import Spots


class FakeClock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def test_sync_and_async_spots_are_timed() -> None:
    clock = FakeClock()
    spots = Spots(clock)

    def spot(cost: int) -> int:
        clock.now += cost
        return cost * 2

    async def coro(cost: int) -> int:
        clock.now += cost
        await asyncio.sleep(0)
        return cost + 1

    def fail() -> None:
        clock.now += 5
        raise ValueError("boom")

    timed, timed_coro, failing = spots.wrap(spot, "spot"), spots.wrap(coro, "coro"), spots.wrap(fail, "fail")
    assert timed(3_000) == 6_000 and timed(1_000) == 2_000
    assert asyncio.run(timed_coro(4_000)) == 4_001
    with pytest.raises(ValueError, match="boom"):
        failing()
    assert (spots.ns["spot"], spots.calls["spot"]) == (4_000, 2)
    assert (spots.ns["coro"], spots.calls["coro"]) == (4_000, 1)
    assert (spots.ns["fail"], spots.calls["fail"]) == (5, 1)
    spots.labels += ["spot", "coro", "missing"]
    report = spots.report(2)
    assert "2.0 x 1.00     2.0" in report  # spot: 4 µs over 2 sets, 2 calls
    assert "missing" not in report


def test_install_reaches_imports_by_name_and_refuses_static_methods() -> None:
    source = types.ModuleType("pgcycle_split_source")
    user = types.ModuleType("pgcycle_split_user")

    def helper() -> str:
        return "ok"

    class Owner:
        def method(self) -> int:
            return 7

        @staticmethod
        def static() -> int:
            return 8

    source.helper = helper  # type: ignore[attr-defined]
    source.Owner = Owner  # type: ignore[attr-defined]
    user.helper = helper  # type: ignore[attr-defined]
    sys.modules[source.__name__], sys.modules[user.__name__] = source, user
    try:
        spots = Spots(FakeClock())
        spots.install("pgcycle_split_source:helper")
        spots.install("pgcycle_split_source:Owner.method")
        assert user.helper() == "ok" and source.helper() == "ok"  # type: ignore[attr-defined]
        assert Owner().method() == 7
        assert spots.calls["helper"] == 2 and spots.calls["Owner.method"] == 1
        with pytest.raises(SystemExit, match="static"):
            spots.install("pgcycle_split_source:Owner.static")
    finally:
        del sys.modules[source.__name__], sys.modules[user.__name__]
