"""``gangplane snapshot save|restore|status`` as a user types them: messages and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.storage.sqlite import SQLiteStorage
from gangplane.cli import main

CM = ("", "configmaps")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    store = SQLiteStorage(tmp_path / "data")
    for i in range(3):
        store.create(CM, ("default", f"cm{i}"), {"metadata": {"name": f"cm{i}", "namespace": "default"}})
    store.close_sync()
    return tmp_path / "data"


def test_save_status_restore(tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snap = tmp_path / "snap.db"
    assert main(["snapshot", "save", str(snap), "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Snapshot saved at {snap} (revision ") and out.endswith(", 3 objects)\n")
    assert main(["snapshot", "status", str(snap)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["REVISION", "COMPACTED", "OBJECTS", "REVISIONS", "SIZE"]
    assert row.split()[2:4] == ["3", "3"]
    assert main(["snapshot", "restore", str(snap), "--data-dir", str(tmp_path / "new")]) == 0
    assert "restored into" in capsys.readouterr().out
    restored = SQLiteStorage(tmp_path / "new")
    assert restored.count(CM) == 3
    restored.close_sync()


def test_bad_files_exit_2_naming_the_problem(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("hello")
    assert main(["snapshot", "status", str(junk)]) == 2
    assert (
        capsys.readouterr().err == f"gangplane: {junk} is not a gangplane database: file is not a database\n"
    )
    assert main(["snapshot", "restore", str(junk), "--data-dir", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    capsys.readouterr()
    assert main(["snapshot", "save", str(tmp_path / "s.db"), "--data-dir", str(tmp_path / "nope")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # argparse: --data-dir is required
        main(["snapshot", "save", str(tmp_path / "s.db")])
    assert e.value.code == 2
