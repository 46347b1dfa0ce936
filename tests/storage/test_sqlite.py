"""The SQLite backend beyond the shared contract: group commit, the durability barrier, crashes,
stored compaction, refusing bad data dirs, and snapshots."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from apiserver.storage import snapshot
from apiserver.storage.interface import ADDED, MODIFIED, StoreError
from apiserver.storage.sqlite import APPLICATION_ID, DB_NAME, SCHEMA_VERSION, DataDirError, SQLiteStorage

pytestmark = pytest.mark.anyio

CM = ("", "configmaps")


def cm(name: str, v: int = 0) -> dict:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"v": str(v)}}


def stored_rvs(data_dir: Path) -> list[int]:
    """The revisions committed to disk, read by another connection (what survives a crash)."""
    conn = sqlite3.connect(f"file:{data_dir / DB_NAME}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT rv FROM revisions ORDER BY rv")]
    finally:
        conn.close()


async def test_the_writes_of_one_turn_share_one_commit(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    await store.start()
    try:
        before = store.commits
        recs = [store.create(CM, ("default", f"cm{i}"), cm(f"cm{i}")) for i in range(100)]
        await store.durable()
        assert store.commits == before + 1
        assert stored_rvs(tmp_path)[-100:] == [r.rv for r in recs]
    finally:
        await store.close()


async def test_a_write_is_on_disk_when_durable_returns_and_not_before(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    await store.start()
    try:
        await store.durable()
        rec = store.create(CM, ("default", "a"), cm("a"))
        assert rec.rv not in stored_rvs(tmp_path)  # applied to the cache, not yet acknowledged
        await store.durable()
        assert rec.rv in stored_rvs(tmp_path)
    finally:
        await store.close()


async def test_writes_before_start_are_committed_by_the_first_durable(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    rec = store.create(CM, ("default", "boot"), cm("boot"))
    await store.durable()  # not started: commits on the caller
    assert rec.rv in stored_rvs(tmp_path)
    await store.close()


async def test_commit_on_the_event_loop_is_equally_durable(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path, commit_thread=False)
    await store.start()
    recs = [store.create(CM, ("default", f"cm{i}"), cm(f"cm{i}")) for i in range(10)]
    await store.durable()
    assert stored_rvs(tmp_path)[-10:] == [r.rv for r in recs]
    await store.close()


CRASHER = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from apiserver.storage.sqlite import SQLiteStorage
    CM = ("", "configmaps")
    async def main():
        store = SQLiteStorage(sys.argv[1])
        await store.start()
        acked = []
        for i in range(20):
            acked.append(store.create(CM, ("default", f"acked{i}"), {"metadata": {"name": f"acked{i}"}}).rv)
        upd = store.update(CM, ("default", "acked0"), {"metadata": {"name": "acked0"}, "data": {"v": "1"}}).rv
        acked.append(upd)
        await store.durable()
        # applied (a watcher could have seen them) but never acknowledged: the process dies first
        lost = [store.create(CM, ("default", f"lost{i}"), {"metadata": {"name": f"lost{i}"}}).rv for i in range(5)]
        lost.append(store.update(CM, ("default", "acked0"), {"metadata": {"name": "acked0"}, "data": {"v": "2"}}).rv)
        print(json.dumps({"acked": acked, "lost": lost}), flush=True)
        os._exit(0)
    asyncio.run(main())
    """
)


async def test_after_a_crash_acknowledged_writes_stay_and_lost_revisions_answer_expired(
    tmp_path: Path,
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CRASHER, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    rvs = json.loads(out.stdout)
    store = SQLiteStorage(tmp_path)
    await store.start()
    try:
        recs, _, _ = store.list(CM, "default")
        assert sorted(r.obj["metadata"]["name"] for r in recs) == sorted(f"acked{i}" for i in range(20))
        a0 = store.get(CM, ("default", "acked0"))
        assert a0 is not None and a0.obj["data"] == {"v": "1"} and a0.rv == rvs["acked"][-1]
        # a client that saw a lost write resumes from its revision: 410, never a silent gap
        for rv in rvs["lost"]:
            with pytest.raises(StoreError) as e:
                store.watch(CM, "", None, rv, False)
            assert e.value.reason == "Expired"
            with pytest.raises(StoreError):
                store.list(CM, at_rv=rv)
        # from the last acknowledged revision the watch continues; new revisions are above every lost one
        w, events = store.watch(CM, "", None, rvs["acked"][-1], False)
        assert events == []
        new = store.create(CM, ("default", "after"), cm("after"))
        await store.durable()
        assert new.rv > max(rvs["lost"])
        assert await w.wait(5.0)
        assert [(t, r.rv) for t, r in w.drain()] == [(ADDED, new.rv)]
        w.close()
    finally:
        await store.close()
    # the gap is remembered by the next restart too
    again = SQLiteStorage(tmp_path)
    with pytest.raises(StoreError):
        again.watch(CM, "", None, rvs["lost"][0], False)
    w, events = again.watch(CM, "", None, rvs["acked"][-1], False)
    assert [(t, r.rv) for t, r in events] == [(ADDED, new.rv)]
    w.close()
    again.close_sync()


async def test_stored_compaction_keeps_the_state_and_expires_older_revisions(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    await store.start()
    a = store.create(CM, ("default", "a"), cm("a"))
    for v in range(1, 6):
        store.update(CM, ("default", "a"), cm("a", v))
    b = store.create(CM, ("default", "b"), cm("b"))
    store.delete(CM, ("default", "b"))
    await store.durable()
    keep = store.update(CM, ("default", "a"), cm("a", 6))
    await store.durable()
    # compact to just before the last write: everything older goes but each key's newest version
    (keep_at,) = (
        sqlite3.connect(tmp_path / DB_NAME)
        .execute("SELECT at FROM revisions WHERE rv = ?", (keep.rv,))
        .fetchone()
    )
    compacted = await store.compact_history(keep_at - 1e-6)
    assert compacted == b.rv + 1  # the delete of b
    await store.close()
    assert stored_rvs(tmp_path) == [compacted - 2, keep.rv]  # a's newest version at or below, then keep
    reopened = SQLiteStorage(tmp_path)
    try:
        assert reopened.get(CM, ("default", "a")).obj["data"] == {"v": "6"}
        assert reopened.get(CM, ("default", "b")) is None
        with pytest.raises(StoreError):
            reopened.watch(CM, "", None, a.rv, False)
        w, events = reopened.watch(CM, "", None, compacted, False)
        assert [(t, r.rv) for t, r in events] == [(MODIFIED, keep.rv)]
        w.close()
    finally:
        reopened.close_sync()


async def test_background_compaction_runs_on_its_interval(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path, history_window=0.05, compaction_interval=0.05)
    await store.start()
    try:
        store.create(CM, ("default", "a"), cm("a"))
        old = store.update(CM, ("default", "a"), cm("a", 1))
        await store.durable()
        async with asyncio.timeout(20):
            while store.compacted_rv < old.rv:
                store.compaction_ran.clear()
                await store.compaction_ran.wait()
        assert stored_rvs(tmp_path) == [old.rv]
    finally:
        await store.close()


def _sqlite_file(path: Path, script: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.close()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: (d / DB_NAME).write_bytes(b"not a database at all" * 100), "is not a gangplane database"),
        (
            lambda d: _sqlite_file(
                d / DB_NAME, "CREATE TABLE users (id INTEGER); INSERT INTO users VALUES (1);"
            ),
            "another program's database",
        ),
        (
            lambda d: _sqlite_file(
                d / DB_NAME,
                f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION + 1};",
            ),
            f"schema version {SCHEMA_VERSION + 1} (newer)",
        ),
        (lambda d: (d / "member").mkdir(), "is not empty and holds no gangplane database (member)"),
    ],
    ids=["not-sqlite", "foreign-sqlite", "newer-schema", "foreign-dir"],
)
def test_a_bad_data_dir_is_refused_with_a_clear_error(tmp_path: Path, setup, message: str) -> None:
    setup(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(DataDirError, match=re.escape(message)):
        SQLiteStorage(tmp_path)
    # nothing was initialized over it (a foreign dir is not even given a lock file)
    after = sorted(p.name for p in tmp_path.iterdir())
    assert after == before or (DB_NAME in before and after == sorted([*before, "gangplane.lock"]))
    with pytest.raises(DataDirError, match=re.escape(message)):  # the lock was released: not "in use"
        SQLiteStorage(tmp_path)


def test_a_data_dir_that_is_a_file_or_in_use_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(DataDirError, match="is not a directory"):
        SQLiteStorage(f)
    first = SQLiteStorage(tmp_path / "d")
    try:
        with pytest.raises(DataDirError, match=r"is in use by another gangplane process \(pid \d+\)"):
            SQLiteStorage(tmp_path / "d")
    finally:
        first.close_sync()
    SQLiteStorage(tmp_path / "d").close_sync()  # released on close


def test_an_empty_database_file_from_an_interrupted_creation_is_initialized(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).touch()
    store = SQLiteStorage(tmp_path)
    assert store.list(CM)[0] == []
    store.close_sync()


async def test_snapshot_save_while_writing_then_restore_into_a_new_dir(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "live")
    await store.start()
    try:
        for i in range(50):
            store.create(CM, ("default", f"cm{i}"), cm(f"cm{i}"))
        await store.durable()
        last = store.rv
        store.create(CM, ("default", "unacked"), cm("unacked"))  # not committed: not in the snapshot
        info = snapshot.save(tmp_path / "live", tmp_path / "snap.db")
        assert info.revision == last and info.objects == 50
    finally:
        await store.close()
    with pytest.raises(DataDirError, match="holds a gangplane database"):
        snapshot.restore(tmp_path / "snap.db", tmp_path / "live")
    restored_info = snapshot.restore(tmp_path / "snap.db", tmp_path / "restored")
    assert restored_info == snapshot.status(tmp_path / "snap.db")
    restored = SQLiteStorage(tmp_path / "restored")
    try:
        recs, _, _ = restored.list(CM, "default")
        assert len(recs) == 50 and restored.get(CM, ("default", "unacked")) is None
        assert restored.rv > last
    finally:
        restored.close_sync()


def test_snapshot_refuses_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_bytes(b"\x00" * 4096)
    with pytest.raises(DataDirError, match="is not a gangplane database"):
        snapshot.status(tmp_path / "junk.db")
    with pytest.raises(DataDirError, match="is not a gangplane database"):
        snapshot.restore(tmp_path / "junk.db", tmp_path / "new")
    assert not (tmp_path / "new").exists()
    with pytest.raises(DataDirError, match="no such file"):
        snapshot.save(tmp_path / "nothing-here", tmp_path / "s.db")


async def test_a_failed_commit_is_never_acknowledged_and_later_writes_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStorage(tmp_path)
    await store.start()
    try:
        ok = store.create(CM, ("default", "ok"), cm("ok"))
        await store.durable()

        def disk_full(rows: list) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(store, "_commit", disk_full)
        store.create(CM, ("default", "lost"), cm("lost"))
        with pytest.raises(RuntimeError, match="could not be made durable: database or disk is full"):
            await store.durable()
        with pytest.raises(RuntimeError, match="refuses writes"):
            store.create(CM, ("default", "next"), cm("next"))
        assert stored_rvs(tmp_path)[-1] == ok.rv
    finally:
        monkeypatch.undo()
        await store.close()


async def test_history_older_than_the_window_is_loaded_as_state_only(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path, history_window=300)
    a = store.create(CM, ("default", "a"), cm("a"))
    b = store.update(CM, ("default", "a"), cm("a", 1))
    store.close_sync()
    # an hour later: those writes are past the 5-minute window
    later = SQLiteStorage(tmp_path, history_window=300, wall=lambda: time.time() + 3600)
    try:
        assert later.get(CM, ("default", "a")).obj == b.obj
        assert later.loaded_events == 0
        with pytest.raises(StoreError):
            later.watch(CM, "", None, a.rv, False)
        w, events = later.watch(CM, "", None, b.rv, False)  # the newest stored revision: continues
        assert events == []
        w.close()
    finally:
        later.close_sync()
    # within the window the same rows are history again
    soon = SQLiteStorage(tmp_path, history_window=300)
    try:
        w, events = soon.watch(CM, "", None, a.rv, False)
        assert [(t, r.rv) for t, r in events] == [(MODIFIED, b.rv)]
        w.close()
    finally:
        soon.close_sync()


def test_a_corrupt_row_stops_the_load_with_its_revision(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path)
    rec = store.create(CM, ("default", "a"), cm("a"))
    store.close_sync()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE revisions SET value = ? WHERE rv = ?", (b"{not json", rec.rv))
    conn.commit()
    conn.close()
    with pytest.raises(DataDirError, match=f"revision {rec.rv} holds no valid JSON"):
        SQLiteStorage(tmp_path)


async def test_no_http_client_sees_a_write_before_it_is_committed(tmp_path: Path, monkeypatch) -> None:
    """A GET and a watch over HTTP wait for the commit of what they show (etcd shows only committed
    revisions): a client must never see a state that a crash of the server could still take back."""
    import threading

    import httpx

    from apiserver.client.interface import CONFIGMAPS
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    store = SQLiteStorage(tmp_path)
    await store.start()
    cp = ControlPlane(ControlPlaneOptions(storage=store))
    app = cp.app.asgi()
    gate = threading.Event()
    commit = store._commit

    def held_commit(rows: list) -> None:
        gate.wait(30)
        commit(rows)

    try:
        await store.durable()
        base_rv = store.rv
        monkeypatch.setattr(store, "_commit", held_commit)
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        disconnected = asyncio.Event()

        async def receive() -> dict:
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                chunks.put_nowait(message["body"])

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/v1/namespaces/default/configmaps",
            "raw_path": b"/api/v1/namespaces/default/configmaps",
            "query_string": f"watch=true&resourceVersion={base_rv}".encode(),
            "headers": [(b"host", b"gangplane")],
            "server": ("gangplane", 80),
            "client": ("127.0.0.1", 1),
            "root_path": "",
        }
        watch = asyncio.create_task(app(scope, receive, send))
        create = asyncio.create_task(cp.client("test").create(CONFIGMAPS, cm("held"), "default"))
        while store.rv == base_rv:  # the create is applied (and its commit held)
            await asyncio.sleep(0)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://gangplane"
        ) as http:
            get = asyncio.create_task(http.get("/api/v1/namespaces/default/configmaps/held"))
            done, _ = await asyncio.wait({create, get}, timeout=0.3)
            assert not done, "a write was acknowledged or shown before its commit"
            assert chunks.empty(), "a watch showed a write before its commit"
            gate.set()
            created = await create
            rv = int(created["metadata"]["resourceVersion"])
            assert rv in stored_rvs(tmp_path)
            got = await get
            assert got.status_code == 200 and got.json()["metadata"]["resourceVersion"] == str(rv)
        event = json.loads(await asyncio.wait_for(chunks.get(), 10))
        assert (event["type"], event["object"]["metadata"]["resourceVersion"]) == (ADDED, str(rv))
        disconnected.set()
        watch.cancel()
    finally:
        gate.set()
        await store.close()
