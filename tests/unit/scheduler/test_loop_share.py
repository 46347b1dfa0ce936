"""The gang search's slices of the event loop (:class:`~scheduler.loop_share.LoopShare`): a slice
lasts as long as the other tasks' last round (bounded), and where the search yields changes
nothing it decides."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from featuregates import FeatureGate
from scheduler.cache import Cache, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.interfaces import PodGroupInfo
from scheduler.loop_share import LoopShare
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.podgroups import PodGroupState
from scheduler.testing import make_node, make_pod


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def _round_taking(clock: _Clock, share: LoopShare, others: float) -> None:
    """One pause of ``share`` while another task's step takes ``others`` seconds."""

    async def other() -> None:
        clock.t += others

    task = asyncio.ensure_future(other()) if others else None
    await share.pause()
    if task is not None:
        await task


def test_slice_follows_the_others_round_within_bounds() -> None:
    async def go() -> None:
        clock = _Clock()
        # binary fractions, so the sums below are exact
        share = LoopShare(0.0625, 0.25, clock)
        assert not share.due()
        clock.t = 0.0615
        assert not share.due()
        clock.t = 0.0625
        assert share.due()
        # the others took 125 ms: the search may work 125 ms before it yields again
        await _round_taking(clock, share, 0.125)
        assert share.slice == 0.125
        start = clock.t
        clock.t = start + 0.124
        assert not share.due()
        clock.t = start + 0.125
        assert share.due()
        # a long round: the slice stops at max_slice, so the others wait at most that
        await _round_taking(clock, share, 1.0)
        assert share.slice == 0.25
        # idle others: back to the shortest slice
        await _round_taking(clock, share, 0.0)
        assert share.slice == 0.0625
        assert share.pauses == 3

    asyncio.run(go())


def test_a_wall_bound_spares_cpu_clock_reads_and_answers_the_same() -> None:
    """The CPU clock is read only when the wall bound (never slower than it) says the slice may
    be over; every ``due()`` answers as if the CPU clock had been read each time."""

    async def go(seed: int) -> tuple[list[bool], int, int]:
        rng = random.Random(seed)
        cpu, wall = _Clock(), _Clock()
        plain = LoopShare(0.0625, 0.25, cpu)
        bounded = LoopShare(0.0625, 0.25, cpu, bound=wall)
        answers: list[bool] = []
        for _ in range(400):
            step = rng.choice([0.0, 0.001, 0.004, 0.02, 0.07])
            cpu.t += step
            wall.t += step * rng.choice([1.0, 1.5, 4.0])  # a loaded machine: the wall runs ahead
            a, b = plain.due(), bounded.due()
            assert a == b
            answers.append(a)
            if a:
                others = rng.choice([0.0, 0.03, 0.125, 1.0])

                async def other(others: float = others) -> None:
                    cpu.t += others
                    wall.t += others * 2

                task = asyncio.ensure_future(other())
                await plain.pause()
                plain_slice = plain.slice
                cpu.t -= others  # replay the same round for the bounded share
                wall.t -= others * 2
                await task
                task = asyncio.ensure_future(other())
                await bounded.pause()
                await task
                assert bounded.slice == plain_slice
        return answers, plain.reads, bounded.reads

    for seed in range(5):
        answers, plain_reads, bounded_reads = asyncio.run(go(seed))
        assert any(answers) and not all(answers)
        assert bounded_reads < plain_reads


def test_a_small_gang_reads_the_cpu_clock_once() -> None:
    """The default share (the loop thread's CPU, bounded by the wall): a few pods' checks well
    inside the first slice never read the CPU clock again."""
    share = LoopShare()
    for _ in range(3):
        assert not share.due()
    assert share.reads == 1


def _framework(seed: int, nodes: list[Any]) -> tuple[Cache, Snapshot, Framework]:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    snap = Snapshot()
    handle = Handle(
        gates=FeatureGate(),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        rng=random.Random(seed),
        default_spread_selector=lambda p: compile_selector(
            {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
        ),
    )
    return cache, snap, Framework(default_profile(), handle, registry=default_registry())


def _place(cache: Cache, snap: Snapshot, fw: Framework, size: int, share: LoopShare | None) -> list[Any]:
    """A gang of ``size`` alike pods placed on the whole cluster: ``run`` without ``share``,
    ``run_async`` with it (while another task keeps changing the clock it reads)."""
    cache.update_snapshot(snap)
    fw.handle.snapshot = snap
    pg = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
    }
    cache.add_pod_group(pg)
    pods = []
    for i in range(size):
        p = make_pod(f"g-{i}", uid=f"g-u{i}", labels={"app": "g"}, requests={"cpu": "100m"})
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(PodInfo(p))
    group = PodGroupInfo("default", "g", pg, pods, PodGroupState("default/g"))
    algorithm = PodGroupAlgorithm(fw)
    if share is None:
        result = algorithm.run(CycleState(), group, snap)
    else:
        algorithm.loop_share = lambda: share

        async def go() -> Any:
            stop = False

            async def others() -> None:
                while not stop:
                    share.clock.t += 0.01  # type: ignore[attr-defined]
                    await asyncio.sleep(0)

            task = asyncio.ensure_future(others())
            try:
                return await algorithm.run_async(CycleState(), group, snap)
            finally:
                stop = True
                await task

        result = asyncio.run(go())
    assert result.success and result.placement is not None
    return [(a.pod_info.pod["metadata"]["name"], a.node_name) for a in result.placement.fitting()]


def test_the_search_decides_the_same_wherever_it_yields() -> None:
    nodes = [
        make_node(
            f"n{i:03}",
            cpu=str(4 + i % 3),
            labels={"kubernetes.io/hostname": f"n{i:03}", "topology.kubernetes.io/zone": f"z{i % 3}"},
        )
        for i in range(150)
    ]
    plain = _place(*_framework(7, nodes), 400, None)
    clock = _Clock()
    share = LoopShare(0.0, 0.0, clock)  # a yield after every pod
    sliced = _place(*_framework(7, nodes), 400, share)
    assert sliced == plain
    assert share.pauses >= 399
