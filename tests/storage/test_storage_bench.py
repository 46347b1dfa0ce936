"""The storage bench scenarios run and report every backend (numbers are measured, not asserted)."""

from __future__ import annotations

from pathlib import Path

from apiserver.storage.etcd_local import EtcdNotInstalled, etcd_binary
from bench.cli import main as bench_main
from bench.results import read_results
from bench.workloads.storage import BACKENDS, PERSISTENT, SERVE_FLAGS, SERVED


def _served() -> tuple[str, ...]:
    """The server-backed backends this machine can run (etcd where it is, or installs)."""
    try:
        etcd_binary()
    except EtcdNotInstalled:
        return ()
    return SERVED


def test_storage_scenario_reports_writes_per_backend_and_the_open_time(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "name: tiny-storage\nkind: storage\nrepeat: 1\nparams: {objects: 32, clients: 4, stored: 100}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    summary = read_results(tmp_path / "out" / "results.json")["scenarios"][0]["summary"]
    for b in (*BACKENDS, *_served()):
        for metric in ("create_per_s", "create_per_s_16_clients", "patch_per_s_16_clients"):
            assert summary[f"{metric}_{b}"]["median"] > 0
    for b in PERSISTENT:
        assert summary[f"open_s_{b}"]["median"] > 0


def test_cold_start_on_a_data_dir_with_stored_objects(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "name: tiny-cold-data\nkind: cold-start\nrepeat: 1\nparams: {cluster: empty, stored_objects: 200}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    doc = read_results(tmp_path / "out" / "results.json")
    assert not doc["scenarios"][0].get("error")
    assert doc["scenarios"][0]["summary"]["seconds_to_readyz"]["median"] > 0


def test_storage_scenario_over_http_starts_a_server_per_backend(tmp_path: Path) -> None:
    f = tmp_path / "h.yaml"
    f.write_text(
        "name: tiny-storage-http\nkind: storage\nrepeat: 1\nparams: {mode: http, objects: 16, clients: 4}\n"
    )
    assert bench_main(["-f", str(f), "--out", str(tmp_path / "out")]) == 0
    doc = read_results(tmp_path / "out" / "results.json")["scenarios"][0]
    assert not doc.get("error")
    for b in (*SERVE_FLAGS, *_served()):
        assert doc["summary"][f"http_create_per_s_16_clients_{b}"]["median"] > 0
