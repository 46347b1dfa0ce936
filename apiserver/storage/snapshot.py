"""``gangplane snapshot save|restore|status``: a data dir's database as one file, as ``etcdctl snapshot``.

``save`` copies the database with SQLite's online backup API from a read-only connection: the
copy is one consistent revision even while ``gangplane serve`` keeps writing (WAL readers see a
snapshot and never block the writer). ``restore`` puts a snapshot into a new, empty data dir.
Both check that the file is a gangplane database of a schema this version reads and pass
``PRAGMA integrity_check`` before anything is written where a server would read it.

A server started on a restored data dir continues the revision counter beyond every revision it
can have handed out (the clock), so a client that watched the original server past the
snapshot's revision gets 410 Expired and re-lists instead of silently missing the difference
(what ``etcdutl snapshot restore --bump-revision --mark-compacted`` is for).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from apiserver.storage.sqlite import DB_NAME, OWN_FILES, DataDirError, check_database, db_path


@dataclass(frozen=True)
class SnapshotInfo:
    """What ``gangplane snapshot status`` shows (etcdctl's hash/revision/total keys/total size)."""

    revision: int
    compacted_revision: int
    objects: int
    revisions: int
    size: int


def _open_ro(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise DataDirError(f"{path}: no such file")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)


def _verify(conn: sqlite3.Connection, where: str) -> None:
    check_database(conn, where)
    try:
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as e:
        raise DataDirError(f"{where} is damaged: {e}") from None
    if problems != ["ok"]:
        raise DataDirError(f"{where} is damaged: {'; '.join(problems[:3])}")


def _copy(src: sqlite3.Connection, dest: Path) -> None:
    """Back ``src`` up into ``dest`` (a rollback-journal database: one self-contained file), fsynced."""
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    out = sqlite3.connect(tmp, isolation_level=None)
    try:
        src.backup(out)
        out.execute("PRAGMA journal_mode = DELETE")
    finally:
        out.close()
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, dest)
    dfd = os.open(dest.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def status(file: str | os.PathLike[str]) -> SnapshotInfo:
    path = Path(file)
    conn = _open_ro(path)
    try:
        _verify(conn, str(path))
        (last,) = conn.execute("SELECT coalesce(max(rv), 0) FROM revisions").fetchone()
        (compacted,) = conn.execute("SELECT v FROM meta WHERE k = 'compacted_rv'").fetchone() or (0,)
        (revs,) = conn.execute("SELECT count(*) FROM revisions").fetchone()
        (objects,) = conn.execute(
            "SELECT count(*) FROM revisions AS r WHERE r.type != 2 AND r.rv = (SELECT max(n.rv) FROM"
            " revisions AS n WHERE n.grp = r.grp AND n.res = r.res AND n.ns = r.ns AND n.name = r.name)"
        ).fetchone()
    finally:
        conn.close()
    return SnapshotInfo(max(last, compacted), compacted, objects, revs, path.stat().st_size)


def save(data_dir: str | os.PathLike[str], file: str | os.PathLike[str]) -> SnapshotInfo:
    """Copy the data dir's database into ``file`` (works while a server runs on it)."""
    src_path = db_path(data_dir)
    dest = Path(file)
    if not dest.parent.is_dir():
        raise DataDirError(f"cannot write {dest}: {dest.parent} is not a directory")
    src = _open_ro(src_path)
    try:
        check_database(src, str(src_path))
        _copy(src, dest)
    except sqlite3.Error as e:
        raise DataDirError(f"cannot copy {src_path}: {e}") from None
    finally:
        src.close()
    try:
        return status(dest)
    except DataDirError:
        dest.unlink(missing_ok=True)
        raise


def restore(file: str | os.PathLike[str], data_dir: str | os.PathLike[str]) -> SnapshotInfo:
    """Put snapshot ``file`` into ``data_dir``, which must not exist yet or be empty."""
    path = Path(file)
    info = status(path)  # refuses a foreign, newer or damaged file before touching the data dir
    d = Path(data_dir)
    if d.exists():
        if not d.is_dir():
            raise DataDirError(f"data dir {d} is not a directory")
        present = sorted(p.name for p in d.iterdir())
        if present:
            what = "holds a gangplane database" if set(present) & OWN_FILES else "is not empty"
            raise DataDirError(f"data dir {d} {what}; restore into a new or empty directory")
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    src = _open_ro(path)
    try:
        _copy(src, d / DB_NAME)
    except sqlite3.Error as e:
        raise DataDirError(f"cannot restore {path}: {e}") from None
    finally:
        src.close()
    return info


__all__ = ["SnapshotInfo", "restore", "save", "status"]
