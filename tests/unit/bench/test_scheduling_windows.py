"""SchedulingBasic's measured phases start with the collector's young generations empty."""

from __future__ import annotations

import asyncio
import gc

from bench.workloads import scheduling
from bench.workloads.common import Env, server_gc


class _CountingEnv(Env):
    """Records the collector's per-generation counts as each measured phase opens."""

    counts: list[tuple[int, int, int]]

    def start_cpu(self) -> None:
        self.counts.append(gc.get_count())
        super().start_cpu()


def test_each_phase_opens_after_a_full_collection_so_no_older_pass_can_fall_inside_by_chance() -> None:
    env = _CountingEnv()
    env.counts = []
    with server_gc():
        out = asyncio.run(scheduling.run({"nodes": 5, "pods": 20, "backlog": True}, env))
    assert out["pods_per_s"] > 0 and out["backlog_pods_per_s"] > 0
    assert len(env.counts) == 2  # create→bound, then the backlog
    for young, gen1, gen2 in env.counts:
        # generation 0 holds at most the few objects made between the collection and the clock;
        # the older generations' counters (passes since their last collection) are zero
        assert young < 100
        assert (gen1, gen2) == (0, 0)
    assert env.pods == 40
