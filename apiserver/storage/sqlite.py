"""The embedded SQLite backend (``gangplane serve --data-dir DIR``): the cluster outlives the process.

Layout. One table of *revisions*, as etcd's MVCC store keeps them: every write is one row
``(rv, group, resource, namespace, name, type, at, value)`` with the object's JSON at that revision
(a delete's row carries the last state, as the DELETED event does). The current state is each
key's newest row unless that row is a delete; the rows above the *compacted* revision are the
watch history. Compaction (in the background, every ``compaction_interval``) drops what etcd's
drops: rows at or below the compaction revision that a newer row of the same key supersedes, and
deletes. ``PRAGMA application_id`` marks the file as gangplane's and ``PRAGMA user_version`` is
the schema version, so a foreign or newer database is refused instead of half-read.

Durability. The database runs in WAL mode with ``synchronous=FULL``: a commit returns once the
WAL is fsynced, so a committed write survives kill -9 and power loss alike. Writes stay
synchronous on the event loop (the registry's read-check-write is atomic), are applied to the
watch cache at once and queued here; a commit takes everything queued so far in one transaction
and one fsync (*group commit*), and :meth:`SQLiteStorage.durable`, which the API server awaits
before it answers a write, returns when the commit holding the writes applied so far is done.
The commit runs on one writer thread (sqlite3 releases the GIL), so the event loop keeps serving
while the disk syncs, and the writes that arrive meanwhile form the next, larger batch. Writes
made before :meth:`start` (bootstrap) or without a running loop are committed by the first
``durable()``/``flush()``.

Restart. :meth:`open` (run by the constructor, before the registry bootstraps) loads the state and
the stored history into the watch cache, keeping every resourceVersion, UID, generation and
creationTimestamp as stored. The counter continues from ``max(last stored revision, clock)``:
revisions the previous run handed out to its cache but never committed (the writes in flight at a
kill -9, never acknowledged) are thereby never reused. A client may still hold one of them (a
watch event it saw before the crash); resuming from a revision in that gap gets ``410 Expired``,
so it re-lists instead of missing the lost write's undoing. A watch from a committed revision
continues with the stored history, or gets 410 when it is older than the compacted revision.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import fcntl
import gc
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.storage.cache import Watcher
from apiserver.storage.interface import ADDED, DELETED, MODIFIED, Key, Record, StorageKey, StoreError
from apiserver.storage.memory import MemoryStorage, clock_revision

log = logging.getLogger("gangplane.storage.sqlite")

DB_NAME = "gangplane.db"
LOCK_NAME = "gangplane.lock"
#: the files gangplane keeps in a data dir (SQLite adds the WAL and shared-memory files)
#: the service-account signing key ``gangplane serve --data-dir`` keeps beside the database
SA_KEY_NAME = "sa.key"
OWN_FILES = frozenset(
    {
        DB_NAME,
        f"{DB_NAME}-wal",
        f"{DB_NAME}-shm",
        f"{DB_NAME}-journal",
        LOCK_NAME,
        SA_KEY_NAME,
        f"{SA_KEY_NAME}.tmp",
    }
)
#: ``PRAGMA application_id``: "gpln", the mark of a gangplane database
APPLICATION_ID = 0x67706C6E
SCHEMA_VERSION = 1

_TYPE_CODE = {ADDED: 0, MODIFIED: 1, DELETED: 2}
_CODE_TYPE = {v: k for k, v in _TYPE_CODE.items()}

_SCHEMA = """
CREATE TABLE revisions (
    rv INTEGER PRIMARY KEY,
    grp TEXT NOT NULL,
    res TEXT NOT NULL,
    ns TEXT NOT NULL,
    name TEXT NOT NULL,
    type INTEGER NOT NULL,
    at REAL NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX revisions_by_key ON revisions (grp, res, ns, name, rv);
CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
CREATE TABLE gaps (after_rv INTEGER NOT NULL, before_rv INTEGER NOT NULL);
"""
_INSERT = "INSERT INTO revisions (rv, grp, res, ns, name, type, at, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"

Row = tuple[int, str, str, str, str, int, float, bytes]


class DataDirError(ValueError):
    """The data dir cannot be used (foreign files, another program's database, a newer schema, in use)."""


def db_path(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / DB_NAME


def check_database(conn: sqlite3.Connection, where: str) -> None:
    """Raise DataDirError unless ``conn`` is a gangplane database of a schema this version reads."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as e:
        raise DataDirError(f"{where} is not a gangplane database: {e}") from None
    if app_id != APPLICATION_ID:
        what = f"application_id {app_id:#x}" if app_id else "no application_id"
        names = ", ".join(sorted(tables)) or "no tables"
        raise DataDirError(
            f"{where} is not a gangplane database ({what}, tables: {names}): another program's database?"
        )
    if version != SCHEMA_VERSION:
        newer = "newer" if version > SCHEMA_VERSION else "unknown"
        raise DataDirError(
            f"{where} has schema version {version} ({newer}); this gangplane reads version {SCHEMA_VERSION}"
        )
    missing = {"revisions", "meta", "gaps"} - tables
    if missing:
        raise DataDirError(f"{where} is damaged: tables {', '.join(sorted(missing))} are missing")


def _is_empty(conn: sqlite3.Connection) -> bool:
    """A database file with nothing in it (its creation was interrupted): safe to initialize."""
    try:
        header = (
            conn.execute("PRAGMA application_id").fetchone()[0],
            conn.execute("PRAGMA user_version").fetchone()[0],
        )
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError:
        return False  # check_database names the problem
    return header == (0, 0) and tables == 0


def _decode(where: Path, rv: int, value: bytes) -> Record:
    try:
        return Record(orjson.loads(value), bytes(value), rv)
    except orjson.JSONDecodeError as e:
        raise DataDirError(f"{where}: revision {rv} holds no valid JSON: {e}") from None


def _connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}?mode=ro" if readonly else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    return conn


class SQLiteStorage(MemoryStorage):
    """The in-memory store and watch cache, with every write committed to ``DIR/gangplane.db``."""

    #: a write is acknowledged once committed (:meth:`durable` waits for the commit)
    acknowledged_at_apply = False

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        compaction_interval: float | None = None,
        commit_thread: bool = True,
        wall: Callable[[], float] = time.time,
        **cache_options: Any,
    ) -> None:
        super().__init__(initial_rv=0, **cache_options)
        self.data_dir = Path(data_dir)
        #: seconds between background compactions (kube compacts etcd every 5 minutes); each
        #: compacts to the newest revision older than the watch history window
        self.compaction_interval = compaction_interval or self.history_window
        #: commit on a writer thread (default) or on the event loop (for comparison in bench/)
        self.commit_thread = commit_thread
        #: the wall clock dating each stored revision (for compaction by age, and at load)
        self._wall = wall
        self._conn: sqlite3.Connection | None = None
        self._lock_fd: int | None = None
        self._pending: list[Row] = []
        self._pending_done: asyncio.Future[None] | None = None
        self._inflight_done: asyncio.Future[None] | None = None
        self._kick_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._compactor: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None
        self._closed = False
        #: revisions handed out by an earlier run but never committed: ``(after, before)`` open intervals
        self._gaps: list[tuple[int, int]] = []
        #: revision the stored history is compacted to
        self.compacted_rv = 0
        #: revision of the newest committed write
        self.committed_rv = 0
        self.loaded_objects = 0
        self.loaded_events = 0
        #: transactions committed (each one fsync): writes / commits is the group-commit batch size
        self.commits = 0
        #: set after each background compaction (a waiter clears it first)
        self.compaction_ran = asyncio.Event()
        self.open()

    # -- opening -------------------------------------------------------------------------------
    def open(self) -> None:
        """Lock the data dir, create or check the database, and load it into the cache."""
        self._prepare_dir()
        path = db_path(self.data_dir)
        fresh = not path.exists()
        try:
            if fresh:  # the cluster's secrets live here: owner-only, as the WAL SQLite adds beside it
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
            conn = _connect(path)
        except (OSError, sqlite3.Error) as e:
            self._unlock()
            raise DataDirError(f"cannot open {path}: {e}") from None
        try:
            if fresh or _is_empty(conn):
                self._create_schema(conn)
            else:
                check_database(conn, str(path))
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            self._conn = conn
            self._load(conn)
        except BaseException:
            conn.close()
            self._conn = None
            self._unlock()
            raise

    def _prepare_dir(self) -> None:
        d = self.data_dir
        if d.exists() and not d.is_dir():
            raise DataDirError(f"data dir {d} is not a directory")
        try:
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as e:
            raise DataDirError(f"cannot create data dir {d}: {e.strerror}") from None
        try:
            foreign = sorted(p.name for p in d.iterdir() if p.name not in OWN_FILES)
        except OSError as e:
            raise DataDirError(f"cannot read data dir {d}: {e.strerror}") from None
        if foreign and not (d / DB_NAME).exists():
            shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
            raise DataDirError(
                f"data dir {d} is not empty and holds no gangplane database ({shown}); "
                "use an empty or new directory"
            )
        try:
            fd = os.open(d / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise DataDirError(f"cannot use data dir {d}: {e.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES):
                who = f" (pid {holder})" if holder else ""
                raise DataDirError(f"data dir {d} is in use by another gangplane process{who}") from None
            raise DataDirError(f"cannot lock data dir {d}: {e.strerror}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    @staticmethod
    def _create_schema(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        for stmt in _SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        conn.execute("INSERT INTO meta (k, v) VALUES ('compacted_rv', 0)")
        conn.execute("COMMIT")

    def _load(self, conn: sqlite3.Connection) -> None:
        """Rebuild the cache: rows up to the compacted revision are state, newer ones history.

        The cyclic garbage collector is paused meanwhile: loading allocates one dict tree per
        stored revision and nothing cyclic, and its collections would otherwise rescan the
        growing heap again and again (twice the load time at 50,000 objects).
        """
        paused = gc.isenabled()
        gc.disable()
        try:
            self._load_rows(conn)
        finally:
            if paused:
                gc.enable()

    def _load_rows(self, conn: sqlite3.Connection) -> None:
        where = db_path(self.data_dir)
        wall_now, mono_now = self._wall(), self._monotonic()
        try:
            (compacted,) = conn.execute("SELECT v FROM meta WHERE k = 'compacted_rv'").fetchone() or (0,)
            # History older than the watch window would leave the cache at once: such rows are
            # loaded as state only, as if compacted (the next compaction removes them from disk).
            (aged,) = conn.execute(
                "SELECT coalesce(max(rv), 0) FROM revisions WHERE rv > ? AND at < ?",
                (compacted, wall_now - self.history_window),
            ).fetchone()
            base_rv = max(compacted, aged)
            # (skey, key) -> its newest Record, or (rv, JSON) not decoded yet (superseded ones never are)
            state: dict[tuple[StorageKey, Key], Record | tuple[int, bytes]] = {}
            history: list[tuple[StorageKey, str, Key, Record, Record | None, float]] = []
            last = compacted
            rows = conn.execute("SELECT rv, grp, res, ns, name, type, at, value FROM revisions ORDER BY rv")
            for rv, grp, res, ns, name, code, at, value in rows:
                etype = _CODE_TYPE.get(code)
                if etype is None:
                    raise DataDirError(f"{where}: revision {rv} has unknown type {code}")
                k = ((grp, res), (ns, name))
                last = rv
                if rv <= base_rv:
                    if etype == DELETED:
                        state.pop(k, None)
                    else:
                        state[k] = (rv, value)
                    continue
                prev = state.get(k)
                if isinstance(prev, tuple):
                    prev = _decode(where, *prev)
                rec = _decode(where, rv, value)
                if etype == DELETED:
                    state.pop(k, None)
                else:
                    state[k] = rec
                history.append((k[0], etype, k[1], rec, prev, mono_now - max(0.0, wall_now - at)))
            gaps = conn.execute(
                "SELECT after_rv, before_rv FROM gaps WHERE before_rv > ? ORDER BY after_rv", (base_rv,)
            ).fetchall()
        except sqlite3.DatabaseError as e:
            raise DataDirError(f"cannot read {where}: {e}") from None
        self.compacted_rv = compacted
        # The state as stored, then the history that led to it: replayed in order it leaves each
        # key as it is (the newest event of a key is its stored state), and fills the history.
        by_resource: dict[StorageKey, dict[Key, Record]] = {}
        for (skey, key), item in state.items():
            by_resource.setdefault(skey, {})[key] = (
                item if isinstance(item, Record) else _decode(where, *item)
            )
        for skey, records in by_resource.items():
            self.load_many(skey, records)
        self.loaded(base_rv)
        for skey, etype, key, rec, prev, at in history:
            self.apply(skey, etype, key, rec, prev, at)
        self.compact()
        self.loaded_objects = len(state)
        self.loaded_events = len(history)
        self.committed_rv = last
        self._gaps = [(a, b) for a, b in gaps]
        # Never reuse a revision: the previous run may have handed out revisions above the last
        # committed one (writes in flight at a crash), and the clock is beyond them.
        start = max(last, clock_revision())
        self._rv = start
        if start > last + 1:
            self._gaps.append((last, start))
            conn.execute("INSERT INTO gaps (after_rv, before_rv) VALUES (?, ?)", (last, start))

    # -- reads that must refuse a revision the store never committed --------------------------
    def _check_revision(self, rv: int | None) -> None:
        if rv is None:
            return
        for after, before in self._gaps:
            if after < rv < before:
                raise StoreError("Expired")

    def list(
        self,
        skey: StorageKey,
        namespace: str = "",
        flt: Any = None,
        limit: int = 0,
        start: Key | None = None,
        at_rv: int | None = None,
    ) -> tuple[list[Record], int, Key | None]:
        self._check_revision(at_rv)
        return super().list(skey, namespace, flt, limit, start, at_rv)

    def watch(
        self, skey: StorageKey, namespace: str, flt: Any, since_rv: int | None, initial: bool
    ) -> tuple[Watcher, list[tuple[str, Record]]]:
        if not initial:
            self._check_revision(since_rv)
        return super().watch(skey, namespace, flt, since_rv, initial)

    # -- writes ------------------------------------------------------------------------------
    def create(self, skey: StorageKey, key: Key, obj: Obj) -> Record:
        self._writable()
        return super().create(skey, key, obj)

    def update(self, skey: StorageKey, key: Key, obj: Obj, expected_rv: int | None = None) -> Record:
        self._writable()
        return super().update(skey, key, obj, expected_rv)

    def delete(self, skey: StorageKey, key: Key, expected_rv: int | None = None) -> Record:
        self._writable()
        return super().delete(skey, key, expected_rv)

    def _writable(self) -> None:
        if self._closed:
            raise RuntimeError("the SQLite storage is closed")
        if self._failed is not None:
            raise RuntimeError(f"the SQLite storage failed to commit and refuses writes: {self._failed}")

    def _persist(self, skey: StorageKey, etype: str, key: Key, rec: Record) -> None:
        grp, res = skey
        self._pending.append((rec.rv, grp, res, key[0], key[1], _TYPE_CODE[etype], self._wall(), rec.raw))
        if self._loop is not None and not self._kick_scheduled:
            # the end of this event-loop turn: every write of the turn joins one commit
            self._kick_scheduled = True
            self._loop.call_soon(self._kick)

    # -- group commit ------------------------------------------------------------------------
    def _commit(self, rows: list[Row]) -> None:
        """One transaction and one fsync for ``rows`` (runs on the writer thread)."""
        conn = self._conn
        assert conn is not None
        conn.execute("BEGIN")
        try:
            conn.executemany(_INSERT, rows)
            conn.execute("COMMIT")
            self.commits += 1
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise

    def _kick(self) -> None:
        self._kick_scheduled = False
        if self._inflight_done is not None or not self._pending or self._loop is None:
            return
        rows, self._pending = self._pending, []
        done = self._pending_done or self._loop.create_future()
        self._pending_done = None
        self._inflight_done = done
        if self.commit_thread and self._executor is not None:
            fut = self._loop.run_in_executor(self._executor, self._commit, rows)
            fut.add_done_callback(lambda f: self._committed(rows, done, f.exception()))
        else:
            err: BaseException | None = None
            try:
                self._commit(rows)
            except Exception as e:
                err = e
            self._committed(rows, done, err)

    def _committed(self, rows: list[Row], done: asyncio.Future[None], err: BaseException | None) -> None:
        self._inflight_done = None
        if err is not None:
            log.critical("commit of %d writes to %s failed: %s", len(rows), self.data_dir, err)
            self._failed = err
            if not done.done():
                done.set_exception(RuntimeError(f"the write could not be made durable: {err}"))
                done.exception()  # retrieved here; waiters re-raise it
            if self._pending_done is not None and not self._pending_done.done():
                self._pending_done.set_exception(RuntimeError(f"the write could not be made durable: {err}"))
                self._pending_done.exception()
            return
        self.committed_rv = max(self.committed_rv, rows[-1][0])
        if not done.done():
            done.set_result(None)
        if self._pending:
            self._kick()

    async def durable(self) -> None:
        """Return once every write applied so far is committed (raises if the commit failed)."""
        if self._loop is None or self._loop is not asyncio.get_running_loop():
            self.flush()
            return
        if self._failed is not None:
            raise RuntimeError(f"the write could not be made durable: {self._failed}")
        if self._pending:
            if self._pending_done is None:
                self._pending_done = self._loop.create_future()
            await asyncio.shield(self._pending_done)
        elif self._inflight_done is not None:
            await asyncio.shield(self._inflight_done)

    async def check(self) -> str | None:
        """Unhealthy once a commit failed (writes are refused from then on) or when closed."""
        if self._failed is not None:
            return f"the SQLite storage failed to commit: {self._failed}"
        if self._closed:
            return "the SQLite storage is closed"
        return None

    def flush(self) -> None:
        """Commit everything queued, now (before start, at close, in tests); blocks the caller."""
        if self._failed is not None:
            raise RuntimeError(f"the write could not be made durable: {self._failed}")
        rows, self._pending = self._pending, []
        if not rows:
            if self._inflight_done is not None and self._executor is not None:
                self._executor.submit(lambda: None).result()  # the batch in flight is committed then
            return
        try:
            if self._executor is not None:
                self._executor.submit(self._commit, rows).result()  # in order after the batch in flight
            else:
                self._commit(rows)
        except Exception as e:
            self._failed = e
            log.critical("commit of %d writes to %s failed: %s", len(rows), self.data_dir, e)
            raise RuntimeError(f"the write could not be made durable: {e}") from e
        self.committed_rv = max(self.committed_rv, rows[-1][0])
        if self._pending_done is not None and not self._pending_done.done():
            self._pending_done.set_result(None)
        self._pending_done = None

    # -- compaction --------------------------------------------------------------------------
    async def compact_history(self, before: float | None = None) -> int:
        """Compact the stored history to the newest revision written before ``before`` (wall
        seconds; default: the watch history window ago), on the writer thread, in order with
        the commits. Returns the compaction revision."""
        if self._loop is not None and self._executor is not None:
            return await self._loop.run_in_executor(self._executor, self._compact_stored, before)
        return self._compact_stored(before)

    def _compact_stored(self, before: float | None = None) -> int:
        conn = self._conn
        assert conn is not None
        horizon = self._wall() - self.history_window if before is None else before
        (rv,) = conn.execute("SELECT coalesce(max(rv), 0) FROM revisions WHERE at < ?", (horizon,)).fetchone()
        rv = min(rv, self.committed_rv)
        if rv <= self.compacted_rv:
            return self.compacted_rv
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "DELETE FROM revisions AS r WHERE r.rv <= :c AND (r.type = 2 OR EXISTS ("
                " SELECT 1 FROM revisions AS n WHERE n.grp = r.grp AND n.res = r.res AND n.ns = r.ns"
                " AND n.name = r.name AND n.rv > r.rv AND n.rv <= :c))",
                {"c": rv},
            )
            conn.execute("UPDATE meta SET v = ? WHERE k = 'compacted_rv'", (rv,))
            conn.execute("DELETE FROM gaps WHERE before_rv <= ?", (rv,))
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        self.compacted_rv = rv
        return rv

    async def _compact_loop(self) -> None:
        assert self._loop is not None
        while True:
            await asyncio.sleep(self.compaction_interval)
            try:
                await self.compact_history()
            except sqlite3.Error as e:
                log.error("compaction of %s failed: %s", self.data_dir, e)
            self.compaction_ran.set()

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        if self.commit_thread:
            self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sqlite-commit")
        self._compactor = self._loop.create_task(self._compact_loop(), name="sqlite-compaction")
        if self._pending:
            self._kick()

    async def close(self) -> None:
        if self._closed:
            return
        await super().close()
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
            self._compactor = None
        while self._inflight_done is not None:  # its completion may start the next batch
            with contextlib.suppress(RuntimeError):
                await asyncio.shield(self._inflight_done)
        self.close_sync()

    def close_sync(self) -> None:
        """Commit what is queued and release the database and the data dir's lock."""
        if self._closed:
            return
        try:
            if self._executor is not None:
                self._executor.shutdown(wait=True)  # a compaction in flight finishes
                self._executor = None
            if self._conn is not None and self._failed is None:
                self.flush()
        finally:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._unlock()
            self._loop = None


def iter_state(path: Path) -> Iterator[tuple[StorageKey, Key, int, Obj]]:
    """The current objects of a (closed or live) database, read-only: (skey, key, rv, object)."""
    conn = _connect(path, readonly=True)
    try:
        check_database(conn, str(path))
        rows = conn.execute(
            "SELECT r.grp, r.res, r.ns, r.name, r.rv, r.value FROM revisions AS r"
            " WHERE r.type != 2 AND r.rv = (SELECT max(n.rv) FROM revisions AS n WHERE n.grp = r.grp"
            " AND n.res = r.res AND n.ns = r.ns AND n.name = r.name) ORDER BY r.grp, r.res, r.ns, r.name"
        )
        for grp, res, ns, name, rv, value in rows:
            yield (grp, res), (ns, name), rv, orjson.loads(value)
    finally:
        conn.close()


__all__ = ["APPLICATION_ID", "DB_NAME", "SCHEMA_VERSION", "DataDirError", "SQLiteStorage", "check_database"]
