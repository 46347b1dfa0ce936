"""The bench runs an in-process scenario under ``gangplane serve``'s collector settings."""

from __future__ import annotations

import gc

from bench.workloads.common import server_gc
from gangplane.controlplane import GC_THRESHOLD


def test_scenario_runs_under_serve_thresholds_and_the_defaults_come_back() -> None:
    before = gc.get_threshold()
    with server_gc():
        assert gc.get_threshold() == GC_THRESHOLD
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # what was alive before the scenario is frozen out
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # unfrozen: the harness's own garbage is collectable again


def test_a_disabled_collector_stays_disabled_after_the_scenario() -> None:
    gc.disable()
    try:
        with server_gc():
            assert gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_settings_are_restored_when_the_scenario_fails() -> None:
    before = gc.get_threshold()
    try:
        with server_gc():
            raise RuntimeError("scenario failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
