"""``bench.micro.member_split``'s timers: a spot's time and calls go to the member whose cycle
was running when it was called (the pod name's last character), a wrapped function answers and
raises as it would unwrapped, and the report lists every member's figures per call and per set.
A fake clock: no timing involved."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.micro.member_split import Split


class FakeClock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def test_spots_are_charged_to_the_running_member() -> None:
    clock = FakeClock()
    split = Split(clock)

    def spot(cost: int) -> int:
        clock.now += cost
        return cost * 2

    def fail() -> None:
        clock.now += 5
        raise ValueError("boom")

    timed = split.wrap(spot, "spot", False)
    failing = split.wrap(fail, "fail", False)

    def full_cycle(_algorithm: object, assignment: object, cost: int) -> str:
        clock.now += 1
        assert timed(cost) == cost * 2
        return "host"

    cycle = split.wrap(full_cycle, "cycle", True)
    split.labels += ["cycle", "spot"]
    for name, cost in (("gang-1-0", 10_000), ("gang-1-1", 2_000), ("gang-2-0", 30_000)):
        assert cycle(None, SimpleNamespace(pod_info=SimpleNamespace(name=name)), cost) == "host"
    with pytest.raises(ValueError, match="boom"):
        failing()
    assert split.ns[("spot", "m0")] == 40_000 and split.calls[("spot", "m0")] == 2
    assert split.ns[("spot", "m1")] == 2_000 and split.calls[("spot", "m1")] == 1
    assert split.ns[("cycle", "m0")] == 40_002 and split.calls[("cycle", "m0")] == 2
    assert split.ns[("fail", "m0")] == 5 and split.calls[("fail", "m0")] == 1  # the last cycle: m0
    report = split.report(2)
    assert "m0:    20.0 x1.00" in report  # 40 µs over 2 calls, 2 calls over 2 sets
    assert "m1:     2.0 x0.50" in report


def test_by_step_splits_members_and_gangs_by_their_place_in_the_step() -> None:
    """``--by-step``: a gang's place is asked once, when its first member's cycle starts, and
    its siblings' cycles (and the whole PodGroup cycle, a coroutine) are charged to it."""
    import asyncio

    clock = FakeClock()
    split = Split(clock)
    places = iter(["first", "first", "later", "later"])
    split.place = lambda: next(places)

    def full_cycle(_algorithm: object, assignment: object, cost: int) -> str:
        clock.now += cost
        return "host"

    cycle = split.wrap(full_cycle, "cycle", True)
    split.labels.append("cycle")

    async def gang_cycle(set_index: int, cost: int) -> int:
        for member in range(3):
            cycle(None, SimpleNamespace(pod_info=SimpleNamespace(name=f"gang-{set_index}-{member}")), cost)
            await asyncio.sleep(0)  # a coroutine's own steps: charged while it runs
        return set_index

    gang = split.wrap_gang(gang_cycle)

    async def run() -> None:
        # the gang asks its place first, its m0 the next answer: two asks per gang
        assert await gang(1, 10_000) == 1
        assert await gang(2, 1_000) == 2

    asyncio.run(run())
    assert split.ns[("cycle", "m0 first")] == 10_000 and split.calls[("cycle", "m0 first")] == 1
    assert split.ns[("cycle", "m2 first")] == 10_000  # the sibling keeps its m0's place
    assert split.ns[("cycle", "m1 later")] == 1_000 and split.calls[("cycle", "m1 later")] == 1
    assert split.ns[("PodGroupCycle.schedule_one_podgroup", "gang first")] == 30_000
    assert split.ns[("PodGroupCycle.schedule_one_podgroup", "gang later")] == 3_000
    report = split.report(2)
    assert "m1 later:     1.0 x0.50" in report
