"""``--scheduling-records`` and ``--scheduling-records-max-subjects`` (gangplane's flags) on
``gangplane serve`` and ``gangplane scheduler``: what the scheduler is given, and bad values."""

from __future__ import annotations

import pytest

from gangplane.cli import _parser, main
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from gangplane.recordflags import record_limits
from scheduler.records import RecordLimits
from scheduler.records.api import CONFIGZ_SECTION


@pytest.mark.parametrize("command", [["serve"], ["scheduler", "--kubeconfig", "k"]])
def test_the_window_flag_sets_the_overall_cap(command: list[str]) -> None:
    args = _parser().parse_args([*command, "--scheduling-records-max-subjects", "7"])
    assert record_limits(args) == RecordLimits(subjects=7)
    assert record_limits(_parser().parse_args(command)) == RecordLimits()
    assert record_limits(_parser().parse_args([*command, "--no-scheduling-records"])) is False


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_bad_window_exits_2_naming_the_flag(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["serve", "--scheduling-records-max-subjects", value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert (
        f"argument --scheduling-records-max-subjects: invalid value '{value}': must be a positive integer"
        in err
    )


def test_configz_says_what_the_scheduler_keeps() -> None:
    """``gangplane explain`` reads it to say why an old subject has no record."""
    on = ControlPlane(ControlPlaneOptions(scheduling_records=RecordLimits(subjects=7)))
    assert on.app.configz[CONFIGZ_SECTION]() == {"maxSubjects": 7, "attemptsPerSubject": 5}
    assert CONFIGZ_SECTION not in ControlPlane(ControlPlaneOptions()).app.configz
