"""``bench/micro/set_cpu_drained.py``: the phase's CPU and Events, and the backlog after it.

Each gang set of three records eight Events (SuccessfulCreate and Scheduled per pod,
WorkloadCreated, PodGroupCreated); the recorders write one per loop pass, so some are still
queued when the last pod is bound. The script must count every one of them in ``events_total``
(written by the time it stops the clock) and only those of the phase in ``events_phase``."""

from __future__ import annotations

import pytest

from bench.micro.set_cpu_drained import measure

pytestmark = pytest.mark.anyio


async def test_the_drained_figures_hold_every_event_of_the_sets() -> None:
    got = await measure(sets=6, nodes=40)
    assert got["events_total"] == 8
    assert 0 <= got["events_phase"] <= got["events_total"]
    assert 0 < got["phase"] <= got["drained"]
    assert got["placed_median_s"] >= 0
