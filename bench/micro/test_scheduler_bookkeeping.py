"""Micro-benchmarks of the scheduler's per-pod bookkeeping around the cycle (no API).

    python -m pytest bench/micro/test_scheduler_bookkeeping.py

What every SchedulingBasic pod costs besides Filter and Score: parsing the queued pod, assuming
it, the bound pod from the informer confirming its assumed self, and the snapshot update that
copies the changed node; and Score's totals over the 500 nodes a 5,000-node cycle scores.
"""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import pytest

from bench.workloads.common import node, pod

pytestmark = pytest.mark.benchmark


def _cache(nodes: int) -> Any:
    from scheduler.cache import Cache

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i))
    return cache


def _bound(p: dict[str, Any], host: str, rv: int) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["spec"]["nodeName"] = host
    out["metadata"]["resourceVersion"] = str(rv)
    out.setdefault("status", {})["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    return out


def test_podinfo_of_a_template_pod(benchmark: Any) -> None:
    """The queue's first parse of a pod whose template the scheduler has seen before."""
    from scheduler.nodeinfo import PodInfo

    n = itertools.count()

    def parse() -> Any:
        p = pod(f"p-{next(n)}")
        return PodInfo(p)

    benchmark(parse)


def test_assume_then_confirm_the_bound_pod_5000_nodes(benchmark: Any) -> None:
    """Cache.assume_pod, then the informer's bound pod replacing it, then the next snapshot update."""
    from scheduler.nodeinfo import PodInfo

    cache = _cache(5000)
    snap = cache.snapshot()
    rng = random.Random(3)
    n = itertools.count()

    def one() -> None:
        i = next(n)
        p = pod(f"p-{i}")
        p["metadata"].update(uid=f"u-{i}", namespace="default")
        host = f"node-{rng.randrange(5000):05d}"
        cache.assume_pod(p, host, PodInfo(p))
        cache.update_snapshot(snap)
        cache.add_pod(_bound(p, host, i))
        cache.update_snapshot(snap)

    benchmark.pedantic(one, rounds=500, warmup_rounds=5)


def test_score_totals_over_500_feasible_nodes(benchmark: Any) -> None:
    """PreScore + Score + totals of a plain pod over the 500 nodes a 5,000-node cycle scores."""
    from scheduler import schedule_one
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import CycleState, Framework, Handle
    from scheduler.nodeinfo import PodInfo

    cache = _cache(5000)
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(1))
    handle.snapshot = snap
    fw = Framework(default_profile(), handle, registry=default_registry())
    nodes = snap.ordered()[:500]
    pi = PodInfo(pod("p"))
    schedule_one.prioritize_totals(fw, CycleState(), pi, nodes)  # a warm memo, as cycle after cycle
    benchmark(lambda: schedule_one.prioritize_totals(fw, CycleState(), pi, nodes))
