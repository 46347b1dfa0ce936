"""Scheduling records are captured by reference on the scheduling loop and summarised when written.

The summaries (best nodes, Filter rejections per plugin and reason) must be what they would have
been at the end of the attempt's cycle, however many cycles run before the record is written:
nothing the recorder holds may be changed by a later cycle.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.meta import FakeClock
from scheduler import schedule_one
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import FitError
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.records import Recorder
from scheduler.records import recorder as recorder_module
from scheduler.testing import make_node, make_pod

PROFILE = "default-scheduler"


def _drain(resolve_each: bool) -> tuple[Recorder, list[dict[str, Any]]]:
    """Schedule 45 pods of 1 CPU onto 30 nodes: a third of them too small for any, the others
    (2 CPUs) fill up, so scores change from cycle to cycle and the last 5 pods fit nowhere
    (Filter rejections on every node); return the recorder and, when
    ``resolve_each``, every pod's record read right after its own attempt."""
    cache = Cache()
    for i in range(30):
        cache.add_node(make_node(f"n-{i:02d}", cpu="500m" if i % 3 == 0 else "2"))
    snap = cache.snapshot()
    clock = FakeClock()
    handle = Handle(rng=random.Random(7))
    handle.snapshot = snap
    rec = Recorder(None, clock)  # type: ignore[arg-type]  # no event loop: records stay in memory
    handle.records = rec
    fw = Framework(default_profile(), handle, registry=default_registry())
    early: list[dict[str, Any]] = []
    for i in range(45):
        pod = make_pod(f"p-{i:02d}", uid=f"u-{i}", requests={"cpu": "1", "memory": "64Mi"})
        pi = PodInfo(pod)
        rec.begin_pod(PROFILE, pod, 1)
        try:
            host = schedule_one.schedule_pod(fw, CycleState(), pi, snap).suggested_host
        except FitError as e:
            rec.failed(pod, PROFILE, 1, "Unschedulable", e.message)
        else:
            rec.scheduled(pod, PROFILE, host, 1)
            cache.assume_pod(pod, host, pi)
            cache.update_snapshot(snap)
        clock.step(1.5)
        if resolve_each:
            early.append(rec.record("default", "Pod", pod["metadata"]["name"]) or {})
    return rec, early


def test_a_record_written_after_later_cycles_holds_what_its_own_cycle_saw() -> None:
    _, at_once = _drain(resolve_each=True)
    later, _ = _drain(resolve_each=False)
    for i, expected in enumerate(at_once):
        assert later.record("default", "Pod", f"p-{i:02d}") == expected
    attempts = [r["attempts"][0] for r in at_once]
    # the drain meets what the summaries are about: scores of many nodes and Filter rejections
    assert len(attempts[0]["score"]["top"]) == 5 and attempts[0]["score"]["rest"]["nodes"] == 15
    assert [a["result"] for a in attempts[-6:]] == ["Scheduled"] + ["Unschedulable"] * 5
    assert attempts[-1]["filter"] == [
        {
            "plugin": "NodeResourcesFit",
            "nodes": 30,
            "reasons": [
                {
                    "reason": "Insufficient cpu",
                    "nodes": 30,
                    "examples": [f"n-{i:02d}" for i in range(10)],
                }
            ],
        }
    ]
    assert attempts[0]["time"] == "2027-01-15T08:00:00Z" and attempts[-1]["time"] != attempts[0]["time"]


def test_the_summaries_are_made_when_the_record_is_written_not_in_the_cycle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    for name in ("score_summary", "rejections_summary"):
        real = getattr(recorder_module, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(recorder_module, name, counted)
    rec, _ = _drain(resolve_each=False)
    assert calls == []
    rec.record("default", "Pod", "p-44")  # fit nowhere
    assert calls == ["rejections_summary"]
    rec.record("default", "Pod", "p-00")  # scheduled
    assert calls == ["rejections_summary", "score_summary"]
    rec.record("default", "Pod", "p-44")
    rec.record("default", "Pod", "p-00")
    assert len(calls) == 2  # summarised once: the attempt keeps the summary, not the cycle's objects
