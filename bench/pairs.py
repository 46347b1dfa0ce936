"""``gangplane bench --pairs A B NAMES``: two builds measured in alternation, with ratios.

On a shared machine the load drifts during a run, so "old numbers, then new numbers" compares
the weather. Here each round runs every chosen scenario once on A and once on B, in the order
A B, then B A the next round (so a drift in either direction costs both sides alike), each in a
fresh process of its own build. The repetitions of each side are merged into one result file per
side, and the compare table (B/A, with spreads) is printed.

A and B are source trees (a checkout root, holding ``gangplane/`` and ``bench/``) or git
revisions of the repository the command runs from; a revision is checked out into a temporary
worktree that is removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.results import read_results

_REPO = Path(__file__).resolve().parent.parent


@contextmanager
def source_tree(spec: str, scratch: Path) -> Iterator[Path]:
    """A folder holding the build ``spec`` names (a folder as it is, or a git revision checked out)."""
    p = Path(spec)
    if (p / "gangplane").is_dir() and (p / "bench").is_dir():
        yield p.resolve()
        return
    rev = subprocess.run(
        ["git", "-C", str(_REPO), "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if rev.returncode != 0:
        raise ValueError(f"{spec!r} is neither a source tree (gangplane/ and bench/) nor a git revision")
    tree = scratch / f"tree-{rev.stdout.strip()[:12]}"
    subprocess.run(
        ["git", "-C", str(_REPO), "worktree", "add", "--detach", str(tree), rev.stdout.strip()],
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(_REPO), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
            timeout=120,
        )


def _run_once(tree: Path, names: list[str], quick: bool, out: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, "-m", "gangplane.cli", "bench", "--repeat", "1", "--out", str(out)]
    helptext = subprocess.run(
        [*cmd[:4], "--help"], cwd=tree, env=env, capture_output=True, text=True, timeout=120
    ).stdout
    if "--exact" in helptext:
        cmd.append("--exact")  # a build from before --exact matches names as parts of names
    if quick:
        cmd.append("--quick")
    subprocess.run([*cmd, *names], cwd=tree, env=env, check=False, timeout=6 * 3600)
    return read_results(out / "results.json")


def _merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One result document from several single-repetition runs of the same build."""
    from bench.results import summarize

    first = docs[0]
    by_name: dict[str, dict[str, Any]] = {}
    for d in docs:
        for s in d["scenarios"]:
            m = by_name.setdefault(s["name"], {**s, "runs": [], "series": {}})
            m["runs"].extend(s["runs"])
            if s.get("error"):
                m["error"] = s["error"]
    for s in by_name.values():
        names = sorted({k for r in s["runs"] for k in r})
        s["summary"] = {k: summarize([r[k] for r in s["runs"] if k in r]) for k in names}
    return {"machine": first["machine"], "target": first["target"], "scenarios": list(by_name.values())}


def run_pairs(a: str, b: str, names: list[str], rounds: int, quick: bool, out: Path) -> tuple[Path, Path]:
    """Alternate A and B for ``rounds`` rounds; returns the merged result files of A and B."""
    import orjson

    if not names:
        raise ValueError("--pairs needs the scenario names to run (whole names, as with --exact)")
    # each build runs with its own tree as the working folder: a relative --out would land in it
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="pairs-", dir=out))
    docs: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    try:
        with source_tree(a, scratch) as tree_a, source_tree(b, scratch) as tree_b:
            trees = {"A": tree_a, "B": tree_b}
            for r in range(rounds):
                order = ("A", "B") if r % 2 == 0 else ("B", "A")
                for side in order:
                    docs[side].append(_run_once(trees[side], names, quick, scratch / f"{side}-{r}"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    paths = []
    for side, label in (("A", a), ("B", b)):
        doc = _merge(docs[side])
        doc["pairs"] = {"side": side, "build": label, "rounds": rounds}
        path = out / f"pairs-{side}.json"
        path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        paths.append(path)
    return paths[0], paths[1]
