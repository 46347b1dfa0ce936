"""``bench/micro/inplane_timers.py``: named functions timed inside the plane, over the phase only."""

from __future__ import annotations

import pytest

from bench.micro.inplane_timers import Timers, measure

pytestmark = pytest.mark.anyio

CREATE = "apiserver.registry.generic:GenericStore.create"
ON_CREATE = "apiserver.patch.tracker:FieldTracker.on_create"
TOTALS = "scheduler.schedule_one:_totals"


async def test_the_phases_calls_are_timed_and_the_functions_put_back() -> None:
    from apiserver.patch.tracker import FieldTracker
    from apiserver.registry.generic import GenericStore

    before = (GenericStore.create, FieldTracker.on_create)
    timers = Timers()
    for spec in (CREATE, ON_CREATE, TOTALS):
        timers.wrap(spec)
    try:
        got = await measure(sets=4, timers=timers, nodes=40)
    finally:
        timers.restore()
    assert (GenericStore.create, FieldTracker.on_create) == before
    assert got["phase"] > 0
    rows = {name: (calls, median, per_set) for name, calls, median, per_set in timers.rows(4)}
    # a set's creates in the phase: its StatefulSet, revision, Workload, PodGroup, three pods and
    # the Events written before its last pod was bound; the 40 Nodes and the namespace made
    # before the phase are not counted
    calls, median, per_set = rows["GenericStore.create"]
    assert 7 <= calls <= 7 + 8
    assert median > 0 and per_set == pytest.approx(calls * median)
    assert rows["FieldTracker.on_create"][0] == calls  # every create records its entry
    assert rows["_totals"][0] == 3  # one pod cycle per pod: three per set
    assert [name for name, *_ in timers.rows(4)][0] == "GenericStore.create"  # the largest first


def test_a_coroutine_function_is_refused() -> None:
    timers = Timers()
    with pytest.raises(ValueError, match="coroutine"):
        timers.wrap("controllers.statefulset.controller:StatefulSetController.sync")
    with pytest.raises(ValueError, match="MODULE:QUALNAME"):
        timers.wrap("scheduler.schedule_one._totals")
