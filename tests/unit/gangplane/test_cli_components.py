"""``gangplane serve --components`` and the one-component commands' argument errors (exit 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplane.cli import COMPONENTS, main, parse_components


def test_components_parse_in_any_order_without_duplicates() -> None:
    assert parse_components("scheduler, apiserver,scheduler") == ["scheduler", "apiserver"]
    assert COMPONENTS == ("apiserver", "controller-manager", "scheduler", "node-agent")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("kubelet", 'unknown component "kubelet"'),
        ("", "name at least one of"),
        ("scheduler", "gangplane serve always runs the apiserver"),
    ],
)
def test_bad_components_exit_2(flag: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--components", flag]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("command", ["scheduler", "controller-manager", "node-agent"])
def test_a_component_without_a_usable_kubeconfig_exits_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "invalid --kubeconfig" in capsys.readouterr().err


def test_an_unreachable_server_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gangplane.kubeconfig import write_kubeconfig

    kc = tmp_path / "kc"
    write_kubeconfig(kc, "http://127.0.0.1:1", "t")
    assert main(["scheduler", "--kubeconfig", str(kc)]) == 1
    assert "cannot reach the API server http://127.0.0.1:1" in capsys.readouterr().err


def test_controller_manager_rejects_a_bad_key_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gangplane.kubeconfig import write_kubeconfig

    kc = tmp_path / "kc"
    write_kubeconfig(kc, "http://127.0.0.1:1", "t")
    (tmp_path / "key").write_text("not a key")
    assert (
        main(
            [
                "controller-manager",
                "--kubeconfig",
                str(kc),
                "--service-account-private-key-file",
                str(tmp_path / "key"),
            ]
        )
        == 2
    )


def test_scheduler_rejects_a_bad_scheduler_config_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gangplane scheduler --scheduler-config`` validates the file as ``gangplane serve`` does: exit 2
    naming the field (the server, unreachable here, is never asked)."""
    from gangplane.kubeconfig import write_kubeconfig

    kc = tmp_path / "kc"
    write_kubeconfig(kc, "http://127.0.0.1:1", "t")
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- plugins:\n"
        "    score:\n"
        "      enabled: [{name: NodeResourcesMostAllocatedTypo}]\n"
    )
    args = ["scheduler", "--kubeconfig", str(kc), "--scheduler-config", str(tmp_path / "sched.yaml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert 'ScorePlugin "NodeResourcesMostAllocatedTypo" does not exist' in err, err
    assert "(at profiles[0].plugins.score.enabled[0])" in err, err
    assert "cannot reach" not in err
