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
