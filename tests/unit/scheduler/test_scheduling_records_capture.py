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


class _CountingClient:
    """Just the two calls the recorder's writer makes, counted."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []

    async def create(self, gvr: Any, obj: dict[str, Any], namespace: str) -> dict[str, Any]:
        self.calls.append("create")
        self.objects[obj["metadata"]["name"]] = obj
        return obj

    async def update(self, gvr: Any, obj: dict[str, Any], namespace: str) -> dict[str, Any]:
        self.calls.append("update")
        self.objects[obj["metadata"]["name"]] = obj
        return obj


@pytest.mark.anyio
async def test_attempts_made_between_two_flushes_are_one_write_per_subject() -> None:
    client = _CountingClient()
    rec = Recorder(client, FakeClock())  # type: ignore[arg-type]
    pods = [make_pod(f"p-{i}", uid=f"u-{i}") for i in range(2)]
    for attempt in (1, 2, 3):
        for pod in pods:
            rec.begin_pod(PROFILE, pod, attempt)
            rec.failed(pod, PROFILE, attempt, "Unschedulable", "0/0 nodes are available")
    await rec.flush()
    assert client.calls == ["create", "create"]
    assert [a["attempt"] for a in client.objects["pod.p-0"]["attempts"]] == [1, 2, 3]
    for attempt in (4, 5):
        rec.begin_pod(PROFILE, pods[0], attempt)
        rec.failed(pods[0], PROFILE, attempt, "Unschedulable", "0/0 nodes are available")
    await rec.flush()
    assert client.calls == ["create", "create", "update"]
    assert client.objects["pod.p-0"]["totalAttempts"] == 5
    await rec.stop()


@pytest.mark.parametrize(
    ("totals", "best"),
    [
        ([0] * 8, [0, 1, 2, 3, 4]),  # all tied (an empty cluster): the first nodes
        ([1, 5, 1, 5, 0, 1, 9, 1], [6, 1, 3, 0, 2]),  # highest first, ties in node order
        ([3, 2, 1], [0, 1, 2]),
    ],
)
def test_the_best_nodes_are_the_highest_totals_ties_in_node_order(totals: list[int], best: list[int]) -> None:
    from types import SimpleNamespace

    from scheduler.records.summary import RecordLimits, score_summary

    nodes = [SimpleNamespace(name=f"n-{i}") for i in range(len(totals))]
    out = score_summary(nodes, {"P": totals}, {}, {"P": 1}, totals, RecordLimits())
    assert [t["node"] for t in out["top"]] == [f"n-{i}" for i in best]
    if len(totals) > 5:
        rest = [t for i, t in enumerate(totals) if i not in best]
        assert out["rest"] == {"nodes": len(rest), "minTotal": min(totals), "maxTotal": max(rest)}
