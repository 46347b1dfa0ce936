"""``gangplane serve``'s etcd flags: parsed into the storage options, bad values refused with exit 2
and a message naming the flag, never a half-started server."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangplane.cli import _parser, main, storage_options


def _opts(*flags: str):
    return storage_options(_parser().parse_args(["serve", *flags]))


def test_etcd_flags_reach_the_storage_options() -> None:
    o = _opts(
        "--etcd-servers",
        "http://127.0.0.1:2379, http://127.0.0.1:22379",
        "--etcd-prefix",
        "/gangplane",
        "--etcd-compaction-interval",
        "1m30s",
    )
    assert o.etcd_servers == ["http://127.0.0.1:2379", "http://127.0.0.1:22379"]
    assert (o.etcd_prefix, o.etcd_compaction_interval) == ("/gangplane", 90.0)
    d = _opts()
    assert (d.etcd_servers, d.etcd_prefix, d.etcd_compaction_interval) == ([], "/registry", 300.0)
    assert _opts("--etcd-compaction-interval", "0").etcd_compaction_interval == 0.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--etcd-servers", "http://127.0.0.1:2379", "--data-dir", "DATA"],
            "--etcd-servers and --data-dir both",
        ),
        (["--etcd-servers", "https://127.0.0.1:2379"], "invalid --etcd-servers 'https://127.0.0.1:2379'"),
        (["--etcd-servers", "http://127.0.0.1:2379", "--etcd-prefix", "registry"], "invalid --etcd-prefix"),
        (
            ["--etcd-servers", "http://127.0.0.1:2379", "--etcd-compaction-interval", "soon"],
            "invalid --etcd-compaction-interval",
        ),
    ],
)
def test_bad_etcd_flags_exit_2_naming_the_flag(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [str(tmp_path / "d") if f == "DATA" else f for f in flags]
    assert main(["serve", "--port", "0", "--kubeconfig", str(tmp_path / "kc"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gangplane: ") and message in err
    assert not (tmp_path / "d").exists()  # nothing was opened
