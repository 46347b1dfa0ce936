"""``gangplane serve --data-dir``: stopped and started again on the same dir, the cluster is there
as it was (resourceVersions, UIDs, generations, creationTimestamps), a watch resumed from before
the restart gets what it missed, and a bad data dir stops the server with exit code 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.data_dir_support import CM_PATH, list_objects, serve_exit, start, stop, watch_events

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]  # server starts are slow on a loaded machine

KEPT = ("uid", "resourceVersion", "creationTimestamp", "generation")


def _meta(obj: dict) -> dict:
    return {k: obj["metadata"].get(k) for k in KEPT}


def test_restart_on_the_same_data_dir_keeps_the_cluster_and_resumes_watches(
    tmp_path: Path, kubectl137: Path
) -> None:
    data = tmp_path / "data"
    server = start(tmp_path / "run1", data)
    try:
        kc = Kubectl(kubectl137, server, "1.37")
        kc.run("create", "configmap", "one", "--from-literal=a=1")
        kc.run("create", "configmap", "two", "--from-literal=b=2")
        kc.run("create", "namespace", "team-a")
        kc.run("create", "deployment", "web", "--image=nginx", "--replicas=2")
        before = {
            kind: json.loads(kc.run("get", kind, "-o", "json").stdout)["items"]
            for kind in ("configmaps", "deployments")
        }
        ns_before = json.loads(kc.run("get", "namespace", "team-a", "-o", "json").stdout)
        _, seen_rv = list_objects(server.url)  # a client's last seen revision before the restart
        kc.run("patch", "configmap", "one", "-p", '{"data":{"a":"changed"}}')  # after it: must be replayed
        kc.run("delete", "configmap", "two")
        one_after = json.loads(kc.run("get", "configmap", "one", "-o", "json").stdout)
    finally:
        assert stop(server) == 0

    server = start(tmp_path / "run2", data)
    try:
        kc = Kubectl(kubectl137, server, "1.37")
        cms = {
            o["metadata"]["name"]: o for o in json.loads(kc.run("get", "cm", "-o", "json").stdout)["items"]
        }
        assert "two" not in cms
        assert cms["one"] == one_after  # byte for byte: data, resourceVersion, uid, managedFields
        ns = json.loads(kc.run("get", "namespace", "team-a", "-o", "json").stdout)
        assert _meta(ns) == _meta(ns_before)
        dep = json.loads(kc.run("get", "deployment", "web", "-o", "json").stdout)
        dep_before = before["deployments"][0]
        for k in ("uid", "creationTimestamp", "generation"):
            assert dep["metadata"][k] == dep_before["metadata"][k], k
        assert dep["spec"] == dep_before["spec"]
        assert int(dep["metadata"]["resourceVersion"]) >= int(dep_before["metadata"]["resourceVersion"])

        kc.run("create", "configmap", "three", "--from-literal=c=3")
        three = json.loads(kc.run("get", "configmap", "three", "-o", "json").stdout)
        assert int(three["metadata"]["resourceVersion"]) > int(one_after["metadata"]["resourceVersion"])

        # The watch resumed from the revision seen before the restart: the two writes that
        # followed it in the first run, then the one of this run, in order, without a gap.
        got = []
        for ev in watch_events(server.url, seen_rv):
            got.append((ev["type"], ev["object"]["metadata"]["name"]))
            if ev["object"]["metadata"]["name"] == "three":
                break
        assert got == [("MODIFIED", "one"), ("DELETED", "two"), ("ADDED", "three")]
    finally:
        assert stop(server) == 0


def test_a_watch_from_before_the_compacted_history_gets_410_after_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start(tmp_path / "run1", data)
    try:
        httpx.post(
            server.url + CM_PATH, json={"metadata": {"name": "a"}, "data": {"v": "1"}}, timeout=30
        ).raise_for_status()
        _, rv = list_objects(server.url)
    finally:
        stop(server)
    # compact everything stored, as the background compaction does once the history is old enough
    conn = sqlite3.connect(data / "gangplane.db")
    (last,) = conn.execute("SELECT max(rv) FROM revisions").fetchone()
    conn.execute(
        "DELETE FROM revisions AS r WHERE r.type = 2 OR EXISTS (SELECT 1 FROM revisions AS n WHERE"
        " n.grp = r.grp AND n.res = r.res AND n.ns = r.ns AND n.name = r.name AND n.rv > r.rv)"
    )
    conn.execute("UPDATE meta SET v = ? WHERE k = 'compacted_rv'", (last,))
    conn.commit()
    conn.close()
    server = start(tmp_path / "run2", data)
    try:
        events = list(watch_events(server.url, rv - 1))
        assert len(events) == 1 and events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["code"] == 410 and status["reason"] == "Expired"
        assert status["message"].startswith(f"too old resource version: {rv - 1}")
        objs, _ = list_objects(server.url)
        assert objs["a"]["data"] == {"v": "1"}
    finally:
        stop(server)


def test_a_foreign_database_in_the_data_dir_stops_serve_with_exit_code_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    conn = sqlite3.connect(data / "gangplane.db")
    conn.execute("CREATE TABLE kine (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    out = serve_exit(data, tmp_path)
    assert out.returncode == 2, out.stderr
    assert "is not a gangplane database" in out.stderr and "another program's database" in out.stderr
    assert "serving on" not in out.stdout
    conn = sqlite3.connect(data / "gangplane.db")
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["kine"]
    conn.close()


def test_snapshot_save_from_a_running_server_and_restore_into_a_new_data_dir(tmp_path: Path) -> None:
    import subprocess
    import sys

    data = tmp_path / "data"
    server = start(tmp_path / "run1", data)
    try:
        for i in range(5):
            httpx.post(
                server.url + CM_PATH, json={"metadata": {"name": f"cm{i}"}}, timeout=30
            ).raise_for_status()
        saved, _ = list_objects(server.url)
        snap = subprocess.run(
            [
                sys.executable,
                "-m",
                "gangplane.cli",
                "snapshot",
                "save",
                str(tmp_path / "s.db"),
                "--data-dir",
                str(data),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert snap.returncode == 0, snap.stderr
        assert snap.stdout.startswith(f"Snapshot saved at {tmp_path / 's.db'} (revision ")
        # a second server on the same data dir is refused while the first runs
        second = serve_exit(data, tmp_path)
        assert second.returncode == 2
        assert (
            f"data dir {data} is in use by another gangplane process (pid {server.proc.pid})" in second.stderr
        )
    finally:
        stop(server)
    restore = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "snapshot",
            "restore",
            str(tmp_path / "s.db"),
            "--data-dir",
            str(tmp_path / "restored"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert restore.returncode == 0, restore.stderr
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "snapshot",
            "restore",
            str(tmp_path / "s.db"),
            "--data-dir",
            str(data),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 2 and "holds a gangplane database" in again.stderr
    server = start(tmp_path / "run2", tmp_path / "restored")
    try:
        objs, _ = list_objects(server.url)
        assert {n: o["metadata"]["uid"] for n, o in objs.items() if n.startswith("cm")} == {
            n: o["metadata"]["uid"] for n, o in saved.items() if n.startswith("cm")
        }
    finally:
        stop(server)


def whoami(url: str, token: str) -> httpx.Response:
    return httpx.post(
        url + "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_service_account_tokens_outlive_a_restart_on_the_same_data_dir(
    tmp_path: Path, kubectl137: Path
) -> None:
    """The data dir keeps the key that signs service-account tokens (``DIR/sa.key``, owner-only),
    as a real cluster keeps ``--service-account-signing-key-file``: a token issued before a restart
    still authenticates after it."""
    data = tmp_path / "data"
    server = start(tmp_path / "run1", data)
    try:
        kc = Kubectl(kubectl137, server, "1.37")
        kc.run("create", "serviceaccount", "robot")
        token = kc.run("create", "token", "robot", "--duration=1h").stdout.strip()
        first = whoami(server.url, token)
        assert first.status_code == 201, first.text
    finally:
        assert stop(server) == 0
    assert (data / "sa.key").stat().st_mode & 0o777 == 0o600

    server = start(tmp_path / "run2", data)
    try:
        again = whoami(server.url, token)
        assert again.status_code == 201, again.text
        assert again.json()["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
        assert again.json()["status"]["userInfo"] == first.json()["status"]["userInfo"]
    finally:
        assert stop(server) == 0


def test_an_unusable_service_account_key_in_the_data_dir_stops_serve_with_exit_code_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "sa.key").write_text("not a key\n")
    out = serve_exit(data, tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"service account key file {data / 'sa.key'} holds no unencrypted PEM private key" in out.stderr
    assert "serving on" not in out.stdout
