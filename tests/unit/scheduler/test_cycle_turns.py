"""The scheduling loop gives the event loop back after four cycles of one step
(:mod:`scheduler.cycle_turns`), and what it decides does not depend on it.

The rule is checked against a plain model (a turn once four cycles ran since the loop last gave
the event loop back, whatever it awaited) on random sequences of cycles that suspend zero or more
times, with a ticker task counting loop passes: every cycle's start and end and every turn must
land on the same pass. The plane test runs the whole scheduler on random clusters of plain pods
and gangs with four cycles per step and with a turn after every cycle (``CycleTurns(1)``, the
loop as it was) and compares every placement, the PodGroups' conditions and the Events.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
import uuid
from typing import Any

import pytest

from scheduler.cycle_turns import DEFAULT_CYCLES, LONG_CYCLE_SECONDS, CycleTurns
from scheduler.loop_share import MIN_SLICE_SECONDS

pytestmark = pytest.mark.anyio


async def _model_loop(cycles: int, suspends: list[int], log: list[Any], ticks: list[int]) -> None:
    """The reference: count the cycles since the loop last gave the event loop back."""
    run = 0
    for i, n in enumerate(suspends):
        log.append(("start", i, ticks[0]))
        for _ in range(n):
            await asyncio.sleep(0)
        log.append(("end", i, ticks[0]))
        run = 1 if n else run + 1
        if run >= cycles:
            await asyncio.sleep(0)
            log.append(("turned", i, ticks[0]))
            run = 0


async def _policy_loop(
    cycles: int, suspends: list[int], log: list[Any], ticks: list[int], long: frozenset[int] = frozenset()
) -> None:
    """``Scheduler._run``'s shape: a cycle (suspending ``n`` times), then ask the policy (the
    cycles numbered in ``long`` say they took a second)."""
    turns = CycleTurns(cycles)
    for i, n in enumerate(suspends):
        log.append(("start", i, ticks[0]))
        for _ in range(n):
            await asyncio.sleep(0)
        log.append(("end", i, ticks[0]))
        if turns.due(1.0 if i in long else 0.0):
            await asyncio.sleep(0)
            log.append(("turned", i, ticks[0]))
    assert turns.turns == sum(1 for e in log if e[0] == "turned")


async def _passes(loop_fn: Any, cycles: int, suspends: list[int]) -> list[Any]:
    ticks = [0]
    log: list[Any] = []

    async def ticker() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        await loop_fn(cycles, suspends, log, ticks)
        log.append(("done", ticks[0]))
    finally:
        tick.cancel()
    return log


@pytest.mark.parametrize("seed", range(4))
async def test_cycle_turns_match_the_model(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(60):
        cycles = rnd.choice([1, 2, 3, DEFAULT_CYCLES, DEFAULT_CYCLES, 7])
        count = rnd.choice([1, 3, 4, 5, 9, rnd.randint(0, 40)])
        suspends = [rnd.choice([0, 0, 0, 1, 2]) for _ in range(count)]
        ours = await _passes(_policy_loop, cycles, suspends)
        reference = await _passes(_model_loop, cycles, suspends)
        assert ours == reference, (cycles, suspends)


async def test_four_cycles_per_step_then_a_turn_and_one_is_every_cycle() -> None:
    log = await _passes(_policy_loop, DEFAULT_CYCLES, [0] * 9)
    assert [e[1] for e in log if e[0] == "turned"] == [3, 7]
    # the cycles of a step share its pass; a turn moves the next one to the next pass
    starts = [e[2] for e in log if e[0] == "start"]
    assert starts == [starts[0]] * 4 + [starts[0] + 1] * 4 + [starts[0] + 2]
    log = await _passes(_policy_loop, 1, [0] * 5)
    assert [e[1] for e in log if e[0] == "turned"] == [0, 1, 2, 3, 4]


async def test_a_cycle_that_gives_the_loop_back_starts_a_new_count() -> None:
    # cycles 0-2 in one step; cycle 3 suspends (a search's pause, a request's turn): a new step,
    # so the turn comes after cycle 6, not after cycle 3
    log = await _passes(_policy_loop, DEFAULT_CYCLES, [0, 0, 0, 1, 0, 0, 0, 0])
    assert [e[1] for e in log if e[0] == "turned"] == [6]


async def test_a_long_cycle_is_followed_by_a_turn_and_starts_a_new_count() -> None:
    # cycle 1 took longer than LONG_CYCLE_SECONDS: a turn after it, whatever the count; the next
    # step counts from cycle 2, so cycle 5 (long too) ends it early again, and 6-8 take no turn
    def loop(cycles: int, suspends: list[int], log: list[Any], ticks: list[int]) -> Any:
        return _policy_loop(cycles, suspends, log, ticks, long=frozenset({1, 5}))

    log = await _passes(loop, DEFAULT_CYCLES, [0] * 9)
    assert [e[1] for e in log if e[0] == "turned"] == [1, 5]
    # the same cycles, none long: the turns of four cycles per step
    log = await _passes(_policy_loop, DEFAULT_CYCLES, [0] * 9)
    assert [e[1] for e in log if e[0] == "turned"] == [3, 7]
    assert CycleTurns().long_cycle == LONG_CYCLE_SECONDS == MIN_SLICE_SECONDS


# --- the whole scheduler: the same decisions either way ------------------------------------------


def _cluster(rnd: random.Random) -> tuple[list[Any], list[tuple[list[Any], Any | None]]]:
    """Nodes with room for every pod, and sets of pods: gangs (with their PodGroup) and plain pods."""
    from scheduler.testing import make_node, make_pod
    from tests.unit.scheduler.random_gangs import gang_set

    nodes = [
        make_node(
            f"n{i:02}",
            cpu=str(rnd.choice([8, 16])),
            labels={"kubernetes.io/hostname": f"n{i:02}", "topology.kubernetes.io/zone": f"z{i % 3}"},
        )
        # at least 48 cpu: room for the most the sets below request (14 gangs of 4 x 500m)
        for i in range(rnd.randint(6, 12))
    ]
    sets: list[tuple[list[Any], Any | None]] = []
    for s in range(rnd.randint(4, 14)):
        if rnd.random() < 0.6:
            pods, group = gang_set(f"g{s}", rnd.randint(1, 4), rnd.choice(["100m", "250m", "500m"]))
            for p in pods:
                p["metadata"].pop("uid", None)
                p["metadata"]["ownerReferences"][0]["uid"] = f"uid-{s}"
            sets.append((pods, group))
        else:
            pod = make_pod(f"p{s}", labels={"app": f"p{s}"}, requests={"cpu": rnd.choice(["100m", "1"])})
            pod["metadata"].pop("uid", None)
            sets.append(([pod], None))
    return nodes, sets


async def _placements(seed: int, cycles: int) -> Any:
    from apiserver.client.interface import EVENTS, NODES, PODGROUPS, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.scheduler import Scheduler

    nodes, sets = _cluster(random.Random(seed))
    plane = ControlPlane()
    sched: Scheduler | None = None
    try:
        client = plane.client("kube-scheduler")
        for n in nodes:
            await client.create(NODES, n)
        for pods, group in sets:
            if group is not None:
                await client.create(PODGROUPS, group, "default")
            for p in pods:
                await client.create(PODS, p, "default")
        total = sum(len(pods) for pods, _ in sets)
        sched = Scheduler(client, seed=seed)
        sched.cycle_turns = CycleTurns(cycles)
        await sched.start()
        for _ in range(20_000):
            listed = (await client.list(PODS, "default"))["items"]
            if sum(1 for p in listed if p["spec"].get("nodeName")) == total:
                break
            await asyncio.sleep(0)
        await sched.wait_idle()
        await sched.recorder.flush()
        placed = sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in listed)
        assert all(node for _, node in placed), placed
        conditions = sorted(
            (g["metadata"]["name"], c["type"], c["status"], c.get("reason"))
            for g in (await client.list(PODGROUPS, "default"))["items"]
            for c in (g.get("status") or {}).get("conditions") or []
        )
        events = sorted(
            (e["involvedObject"]["name"], e["reason"], e.get("message"))
            for e in (await client.list(EVENTS, "default"))["items"]
        )
        return placed, conditions, events, sched.cycle_turns.turns
    finally:
        if sched is not None:
            await sched.stop()
        await plane.stop()


class _CountedUids:
    """Uids in creation order: the queue hands a gang's members out in uid order (and sets of
    uids are walked in their hash order), so two runs decide alike only if their objects get
    the same uids."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def __call__(self) -> str:
        return str(uuid.UUID(int=next(self._next) * 7919))


@pytest.mark.parametrize("seed", range(12))
async def test_the_scheduler_decides_the_same_with_four_cycles_per_step(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("apiserver.registry.generic.UidPool", _CountedUids)
    placed, conditions, events, turns = await _placements(seed, DEFAULT_CYCLES)
    every_cycle = await _placements(seed, 1)
    assert (placed, conditions, events) == every_cycle[:3]
    # the policy ran several cycles per step here (the pods were queued before the loop started)
    assert turns < every_cycle[3]


@pytest.mark.parametrize("long_cycle", [0.0, float("inf")])
async def test_a_long_gang_cycles_bindings_start_before_the_next_cycle(long_cycle: float) -> None:
    """What the turn after a long cycle is for: the gang's binding tasks take their first step
    (kube's binding goroutines start) before the next gang's cycle starts. Every cycle counts as
    long here (``long_cycle=0``); with none long (``inf``), the gang cycles share a step and the
    first gang's bindings wait for the next gang's cycle."""
    from apiserver.client.interface import NODES, PODGROUPS, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.scheduler import Scheduler
    from scheduler.testing import make_node
    from tests.unit.scheduler.random_gangs import gang_set

    plane = ControlPlane()
    sched: Scheduler | None = None
    try:
        client = plane.client("kube-scheduler")
        for i in range(8):
            await client.create(
                NODES, make_node(f"n{i}", cpu="16", labels={"kubernetes.io/hostname": f"n{i}"})
            )
        gangs = [f"g{s}" for s in range(4)]
        for app in gangs:
            pods, group = gang_set(app, 6, "100m")
            await client.create(PODGROUPS, group, "default")
            for p in pods:
                await client.create(PODS, p, "default")
        sched = Scheduler(client, seed=1)
        sched.cycle_turns = CycleTurns(DEFAULT_CYCLES, long_cycle=long_cycle)
        started: list[str] = []  # the pods whose binding task took its first step
        bound_at_start: dict[str, int] = {}
        cycle, binding_cycle = sched.pod_group_cycle.schedule_one_podgroup, sched._binding_cycle

        async def counted(fw: Any, qpi: Any, pg: Any) -> None:
            bound_at_start[pg["metadata"]["name"]] = len(started)
            await cycle(fw, qpi, pg)

        async def stamped(fw: Any, state: Any, qpi: Any, *args: Any) -> None:
            started.append(qpi.pod["metadata"]["name"])
            await binding_cycle(fw, state, qpi, *args)

        sched.pod_group_cycle.schedule_one_podgroup = counted  # type: ignore[method-assign]
        sched._binding_cycle = stamped  # type: ignore[method-assign]
        await sched.start()
        for _ in range(20_000):
            if len(bound_at_start) == len(gangs) and not sched._binding_tasks:
                break
            await asyncio.sleep(0)
        await sched.wait_idle()
        in_order = [bound_at_start[app] for app in sorted(bound_at_start)]
        if long_cycle == 0.0:
            assert in_order == [0, 6, 12, 18]
        else:  # the second gang's cycle came first
            assert in_order[:2] == [0, 0], in_order
        pods = (await client.list(PODS, "default"))["items"]
        assert len(started) == 24 and all(p["spec"].get("nodeName") for p in pods)
    finally:
        if sched is not None:
            await sched.stop()
        await plane.stop()


async def test_a_wait_for_a_pod_is_not_counted_in_the_cycle() -> None:
    """The time a cycle took (for the long-cycle turn) starts when its pod is popped: a
    scheduler that waited for work does not take its first cycle for a long one."""
    from apiserver.client.interface import NODES, PODS
    from gangplane.controlplane import ControlPlane
    from scheduler.scheduler import Scheduler
    from scheduler.testing import make_node, make_pod

    plane = ControlPlane()
    sched: Scheduler | None = None
    try:
        client = plane.client("kube-scheduler")
        await client.create(NODES, make_node("n0", cpu="4", labels={"kubernetes.io/hostname": "n0"}))
        sched = Scheduler(client, seed=1)
        asked: list[tuple[float, float]] = []  # (the cycle's time as told, when it was told)

        class Told(CycleTurns):
            __slots__ = ()

            def due(self, took: float = 0.0) -> bool:
                asked.append((took, time.perf_counter()))
                return super().due(took)

        sched.cycle_turns = Told()
        await sched.start()
        for _ in range(50):  # the scheduling loop is waiting in the queue's pop by now
            await asyncio.sleep(0)
        assert sched.cycles == 0 and not asked
        arrived = time.perf_counter()
        await client.create(PODS, make_pod("p0", requests={"cpu": "100m"}), "default")
        for _ in range(20_000):
            if asked:
                break
            await asyncio.sleep(0)
        took, at = asked[0]
        # the cycle's time falls within the time since the pod arrived, not since the wait began
        assert 0 <= took <= at - arrived
        await sched.wait_idle()
    finally:
        if sched is not None:
            await sched.stop()
        await plane.stop()
