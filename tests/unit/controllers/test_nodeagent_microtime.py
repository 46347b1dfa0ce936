"""The node agent's MicroTime text (Lease ``renewTime``) is the API's own, rounding included."""

from __future__ import annotations

import random

import pytest

from apiserver.meta import rfc3339_micro
from controllers.nodeagent.microtime import micro_time


@pytest.mark.parametrize(
    "ts",
    [
        0.0,
        1_733_385_600.0,
        1_733_385_600.9999995,  # rounds up into the next second
        1_733_385_600.9999994,
        1_733_385_600.0000005,
        1_000_000_000.0000025,  # half to even on the microsecond
        1_999_999_999.999999,
    ],
)
def test_micro_time_at_the_edges(ts: float) -> None:
    assert micro_time(ts) == rfc3339_micro(ts)


def test_micro_time_matches_rfc3339_micro_on_random_times() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        ts = rng.uniform(0, 4_000_000_000)
        assert micro_time(ts) == rfc3339_micro(ts), ts
