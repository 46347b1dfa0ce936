"""``bench.micro.sched_split``'s accountant: a coroutine is charged only for its own steps (not
for the time it is suspended while other tasks run), answers and raises what it would unwrapped,
and a tree without a spot is reported, not an error. A fake clock: no timing involved."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from bench.micro.sched_split import Accountant


class FakeClock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


class _Target:
    """Spots for :meth:`Accountant.install` (patched on the class, restored by each test)."""

    clock: FakeClock

    def plain(self, cost: int) -> int:
        self.clock.now += cost
        return cost * 2

    async def slow(self, before: int, after: int) -> str:
        self.clock.now += before
        await asyncio.sleep(0)  # another task runs here
        self.clock.now += after
        return "done"

    async def failing(self) -> None:
        self.clock.now += 3
        await asyncio.sleep(0)
        raise ValueError("boom")


@pytest.fixture
def target(monkeypatch: pytest.MonkeyPatch) -> tuple[_Target, Accountant, FakeClock]:
    clock = FakeClock()
    for name in ("plain", "slow", "failing"):
        monkeypatch.setattr(_Target, name, _Target.__dict__[name])
    t = _Target()
    t.clock = clock
    acct = Accountant(clock)
    here = __name__
    missing = acct.install(
        [f"{here}:_Target.plain", f"{here}:_Target.slow", f"{here}:_Target.failing", f"{here}:_Target.gone"]
    )
    assert missing == [f"{here}:_Target.gone"]
    return t, acct, clock


def test_plain_function_charged_call_to_return(target: tuple[_Target, Accountant, FakeClock]) -> None:
    t, acct, _ = target
    assert t.plain(5) == 10
    assert t.plain(2) == 4
    assert acct.ns["_Target.plain"] == 7
    assert acct.calls["_Target.plain"] == 2


def test_coroutine_not_charged_while_suspended(target: tuple[_Target, Accountant, FakeClock]) -> None:
    t, acct, clock = target

    async def other() -> None:
        clock.now += 100  # runs while ``slow`` is suspended

    async def both() -> str:
        task = asyncio.ensure_future(other())
        got = await t.slow(5, 7)
        await task
        return got

    assert asyncio.run(both()) == "done"
    assert clock.now == 112
    assert acct.ns["_Target.slow"] == 12
    assert acct.calls["_Target.slow"] == 1


def test_coroutine_raises_as_unwrapped(target: tuple[_Target, Accountant, FakeClock]) -> None:
    t, acct, _ = target
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(t.failing())
    assert acct.ns["_Target.failing"] == 3
    assert acct.calls["_Target.failing"] == 1


def test_coroutine_cancelled_while_suspended(target: tuple[_Target, Accountant, FakeClock]) -> None:
    t, acct, _ = target

    async def cancel_it() -> None:
        task = asyncio.ensure_future(t.slow(4, 50))
        await asyncio.sleep(0)  # ``slow`` runs up to its own sleep
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())
    assert acct.ns["_Target.slow"] == 4
    assert acct.calls["_Target.slow"] == 1


def test_pairs_alternate_and_compare(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.micro import sched_split

    order: list[str] = []
    figures = {"A": [10.0, 12.0, 11.0], "B": [5.0, 6.0, 7.0]}

    def one_run(tree: str, scenario: str, per: int, out: str) -> dict[str, float]:
        order.append(tree)
        return {"spot": figures[tree][sum(t == tree for t in order) - 1]}

    monkeypatch.setattr(sched_split, "_one_run", one_run)
    table = sched_split.pairs(["A", "B"], "gangs-1000x3", 1000, 3, "/tmp/x")
    assert order == ["A", "B", "B", "A", "A", "B"]  # each round starts with the other tree
    row = table.splitlines()[-1].split()
    assert row[:3] == ["11.0", "6.0", "0.55"]
    assert row[3:5] == ["18%", "33%"]


def test_install_reaches_imports_by_name_and_refuses_static_methods() -> None:
    """A module-level function is timed wherever it was imported by name (``pgcycle_split``'s
    ``forget_cycle_scratch``, ``sched_split``'s ``schedule_pod``); a static method is refused."""
    source = types.ModuleType("sched_split_source")
    user = types.ModuleType("sched_split_user")

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
        acct = Accountant(FakeClock())
        assert acct.install(["sched_split_source:helper", "sched_split_source:Owner.method"]) == []
        assert user.helper() == "ok" and source.helper() == "ok"  # type: ignore[attr-defined]
        assert Owner().method() == 7
        assert acct.calls["sched_split_source.helper"] == 2 and acct.calls["Owner.method"] == 1
        with pytest.raises(SystemExit, match="static"):
            acct.install(["sched_split_source:Owner.static"])
    finally:
        del sys.modules[source.__name__], sys.modules[user.__name__]


def test_by_resource_splits_a_spot_by_the_resource_def_its_calls_name() -> None:
    """``install(..., by_resource=True)``: a method naming a ResourceDef after ``self`` and a
    function naming it first are both reported per resource; a call naming none keeps the
    spot's own label, and without the option nothing is split."""
    source = types.ModuleType("sched_split_resources")

    class Rd:
        def __init__(self, plural: str) -> None:
            self.plural = plural

    def check(rd: object, obj: int) -> int:
        return obj

    class Store:
        def create(self, rd: object, obj: int) -> int:
            return obj

    source.check = check  # type: ignore[attr-defined]
    source.Store = Store  # type: ignore[attr-defined]
    sys.modules[source.__name__] = source
    try:
        acct = Accountant(FakeClock())
        spots = ["sched_split_resources:check", "sched_split_resources:Store.create"]
        assert acct.install(spots, by_resource=True) == []
        pods, events = Rd("pods"), Rd("events")
        source.check(pods, 1)  # type: ignore[attr-defined]
        source.check(events, 1)  # type: ignore[attr-defined]
        source.check(events, 1)  # type: ignore[attr-defined]
        source.check(None, 1)  # type: ignore[attr-defined]
        Store().create(pods, 1)
        assert dict(acct.calls) == {
            "sched_split_resources.check[pods]": 1,
            "sched_split_resources.check[events]": 2,
            "sched_split_resources.check": 1,
            "Store.create[pods]": 1,
        }
        plain = Accountant(FakeClock())
        source.check, source.Store.create = check, Store.__dict__["create"]  # type: ignore[attr-defined]
        assert plain.install(spots) == []
        source.check(pods, 1)  # type: ignore[attr-defined]
        Store().create(pods, 1)
        assert dict(plain.calls) == {"sched_split_resources.check": 1, "Store.create": 1}
    finally:
        del sys.modules[source.__name__]


def test_report_gives_each_spot_per_set_and_per_call() -> None:
    clock = FakeClock()
    acct = Accountant(clock)

    def spot(cost: int) -> None:
        clock.now += cost

    timed = acct.plain(spot, "spot", False)
    timed(3_000)
    timed(1_000)
    report = acct.report(2)
    assert "2.0 µs/set    1.00 calls/set      2.0 µs/call  spot" in report  # 4 µs, 2 calls, 2 sets
