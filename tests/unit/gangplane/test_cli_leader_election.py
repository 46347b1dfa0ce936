"""``gangplane serve --leader-elect*``: component-base's flags, defaults and validation."""

from __future__ import annotations

import pytest

from apiserver.client.leaderelection import LeaderElectionConfig, LeaderElectionError
from gangplane.cli import _parser, leader_election_config, main


def _config(*argv: str) -> LeaderElectionConfig | None:
    return leader_election_config(_parser().parse_args(["serve", *argv]))


def test_leader_election_is_on_by_default_with_kubes_durations() -> None:
    assert _config() == LeaderElectionConfig(15.0, 10.0, 2.0, release_on_cancel=True)


@pytest.mark.parametrize("argv", [["--leader-elect"], ["--leader-elect=true"], ["--leader-elect", "1"]])
def test_leader_elect_spellings_that_turn_it_on(argv: list[str]) -> None:
    assert _config(*argv) is not None


@pytest.mark.parametrize("value", ["false", "False", "0", "f"])
def test_leader_elect_false_runs_every_component_unconditionally(value: str) -> None:
    assert _config(f"--leader-elect={value}") is None


def test_durations_take_go_syntax() -> None:
    got = _config(
        "--leader-elect-lease-duration=1m",
        "--leader-elect-renew-deadline=40s",
        "--leader-elect-retry-period=500ms",
    )
    assert got == LeaderElectionConfig(60.0, 40.0, 0.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--leader-elect-lease-duration=15"], 'time: invalid duration "15"'),
        (["--leader-elect=maybe"], 'strconv.ParseBool: parsing "maybe": invalid syntax'),
    ],
)
def test_unparsable_values_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--leader-elect-renew-deadline=20s"], "leaseDuration must be greater than renewDeadline"),
        (["--leader-elect-retry-period=9s"], "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (
            ["--leader-elect-retry-period=0s"],
            "invalid --leader-elect-retry-period: must be greater than zero",
        ),
    ],
)
def test_inconsistent_durations_exit_2_before_anything_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gangplane: invalid leader election configuration: ") and message in err


def test_inconsistent_durations_are_ignored_with_leader_election_off() -> None:
    assert _config("--leader-elect=false", "--leader-elect-renew-deadline=20s") is None


def test_help_documents_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    for flag in (
        "--leader-elect ",
        "--leader-elect-lease-duration",
        "--leader-elect-renew-deadline",
        "--leader-elect-retry-period",
    ):
        assert flag in out
    assert "kube-system/kube-controller-manager" in out
    with pytest.raises(LeaderElectionError):
        LeaderElectionConfig(10, 10, 2).validate()
