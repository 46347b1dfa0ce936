"""A command whose extra is not installed says so in one line naming the extra (exit 2)."""

from __future__ import annotations

import sys

import pytest

from gangplane.cli import main


def test_bench_without_the_bench_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec answers None: not installed
    assert main(["bench", "--list"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "gangplane: gangplane bench needs the bench extra (missing matplotlib): pip install 'gangplane[bench]'\n"
    )


def test_etcd_servers_without_the_etcd_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:  # noqa: ANN001
    monkeypatch.setitem(sys.modules, "aetcd", None)
    assert (
        main(
            [
                "serve",
                "--port",
                "0",
                "--kubeconfig",
                str(tmp_path / "kc"),
                "--etcd-servers",
                "http://127.0.0.1:2379",
            ]
        )
        == 2
    )
    assert (
        capsys.readouterr().err
        == "gangplane: --etcd-servers needs the etcd extra: pip install 'gangplane[etcd]'\n"
    )
