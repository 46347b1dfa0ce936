"""kill -9 of ``gangplane serve --data-dir`` at random points during write bursts: acknowledged
writes survive, nothing is half-applied, revisions only grow, a resumed watch continues or says
410. Two seeds of 1,500 writes here, to stay within a minute on a loaded machine; the 5,000-write
bursts over more seeds: ``python -m tests.e2e.kill9_support --seeds 10 --writes 5000``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.kill9_support import run_seeds

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]  # server starts are slow on a loaded machine


def test_kill9_during_write_bursts_loses_no_acknowledged_write(tmp_path: Path) -> None:
    outcomes = run_seeds(tmp_path, tmp_path / "data", seeds=[1, 2], writes=1500)
    for o in outcomes:
        assert o.acked >= o.killed_after >= 150, o
        assert o.watch in ("continued", "expired")
