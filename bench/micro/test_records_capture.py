"""Micro-benchmarks: one scheduling cycle (PreFilter to host selection, no API) with scheduling
records off and on, so the difference is what capturing an attempt costs on the scheduling loop.

    python -m pytest bench/micro/test_records_capture.py

Capture keeps references to the cycle's statuses and score columns; the summaries are made when
the record is written (``test_summarise_one_record`` times that part, off the loop).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from bench.workloads.common import node, pod

pytestmark = pytest.mark.benchmark

PROFILE = "default-scheduler"


def _setup(nodes: int, records: bool) -> tuple[Any, Any, Any]:
    from apiserver.meta import Clock
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle
    from scheduler.records import Recorder

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i))
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(1))
    handle.snapshot = snap
    rec = Recorder(None, Clock()) if records else None  # type: ignore[arg-type]  # kept in memory
    handle.records = rec
    return Framework(default_profile(), handle, registry=default_registry()), snap, rec


def _cycle(nodes: int, records: bool) -> tuple[Any, Any]:
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo

    fw, snap, rec = _setup(nodes, records)
    n = itertools.count()

    def one() -> None:
        i = next(n)
        p = pod(f"p-{i}")
        p["metadata"].update(uid=f"u-{i}", namespace="default")
        pi = PodInfo(p)
        if rec is not None:
            rec.begin_pod(PROFILE, p, 1)
        host = schedule_one.schedule_pod(fw, CycleState(), pi, snap).suggested_host
        if rec is not None:
            rec.scheduled(p, PROFILE, host, 1)

    return one, rec


@pytest.mark.parametrize("nodes", [500, 5000])
@pytest.mark.parametrize("records", [False, True], ids=["records-off", "records-on"])
def test_a_cycle(benchmark: Any, nodes: int, records: bool) -> None:
    benchmark.pedantic(_cycle(nodes, records)[0], rounds=300, warmup_rounds=10)


def test_summarise_one_record(benchmark: Any) -> None:
    """What the writer does per record before the API write: the summaries of a 500-node cycle."""
    one, rec = _cycle(500, True)
    for _ in range(300):
        one()
    names = iter(range(300))
    benchmark.pedantic(lambda: rec.record("default", "Pod", f"p-{next(names)}"), rounds=250)
