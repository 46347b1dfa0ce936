"""kill -9 of ``gangplane serve --etcd-servers`` during a burst of writes: after a restart on the same
etcd every acknowledged write is there as answered, a write in flight is wholly there or not at all,
resourceVersions (etcd's revisions) only grow, and a watch resumed from before the restart says 410
(the new server's cache starts at its load) or continues — never a silent gap. The checks are the
SQLite backend's (tests/e2e/kill9_support.py), on etcd."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Server, _start_server
from tests.e2e.kill9_support import run_seeds
from tests.etcd_cluster import EtcdCluster

pytestmark = pytest.mark.e2e


@pytest.mark.timeout(400)
def test_kill9_during_write_bursts_loses_no_acknowledged_write_on_etcd(tmp_path: Path) -> None:
    with EtcdCluster(tmp_path / "etcd", 1) as etcd:

        def serve(workdir: Path) -> Server:
            workdir.mkdir(parents=True, exist_ok=True)
            return _start_server(workdir, ["--no-tls", "--anonymous", "--etcd-servers", etcd.endpoints])

        outcomes = run_seeds(tmp_path, tmp_path / "unused", seeds=[7], writes=800, serve=serve)
    for o in outcomes:
        assert o.acked >= o.killed_after >= 80, o
        assert o.watch in ("continued", "expired"), o
