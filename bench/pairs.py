"""``gangplane bench --pairs A B NAMES``: two builds measured in alternation, with ratios.

On a shared machine the load drifts during a run, so "old numbers, then new numbers" compares
the weather. Here each round runs every chosen scenario once on A and once on B, scenario by
scenario, in the order A B, then B A the next round (so a drift in either direction costs both
sides alike), each run a fresh process of its own build. The two runs of a scenario in a round
follow each other: on this machine one build's CPU per gang pod went from 1.5 to 2.3 ms within
fifteen minutes (session 27), so running all of A's scenarios and then all of B's put minutes,
and much of that drift, between them. The runs of each side are merged into one result file per side, and the compare table
(B/A, with spreads) is printed.

A and B are source trees (a checkout root, holding ``bench/`` and the command's module) or git
revisions of the repository the command runs from; a revision is checked out into a temporary
worktree that is removed afterwards.

Builds from before the product-face moves run too, so a build can be set against the commit an
issue was measured on (issue #22's ``9be3a0d``): their command is ``apiserver/cli.py`` rather
than ``gangplane/cli.py``, and a build without ``--exact`` (which matches NAMES as parts of
names: ``gangs-1000x3`` would run ``gangs-1000x3-rack`` too) is handed each chosen scenario as a
scenario file made from its own ``bench/scenarios/`` definitions. A scenario such a build does not
have is left out of its side (said on standard error), and its row out of the compare table.
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
#: where a build keeps its command: ``gangplane/`` since the product-face moves, ``apiserver/`` before
_CLI_MODULES = (("gangplane", "gangplane.cli"), ("apiserver", "apiserver.cli"))


def cli_module(tree: Path) -> str | None:
    """The module of the build's ``gangplane`` command (run as ``python -m``), or None."""
    for folder, module in _CLI_MODULES:
        if (tree / folder / "cli.py").is_file():
            return module
    return None


def exact_scenario_file(tree: Path, names: list[str], path: Path) -> list[str]:
    """Write the build's own definitions of ``names`` (whole names) from its ``bench/scenarios/``
    to ``path``, as one YAML stream, and return the names it has (in its files' order); where it
    has none, nothing is written."""
    import yaml

    docs = []
    for f in sorted((tree / "bench" / "scenarios").glob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and doc.get("name") in names:
                docs.append(doc)
    if docs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return [str(d["name"]) for d in docs]


@contextmanager
def source_tree(spec: str, scratch: Path) -> Iterator[Path]:
    """A folder holding the build ``spec`` names (a folder as it is, or a git revision checked out)."""
    p = Path(spec)
    if (p / "bench").is_dir() and cli_module(p) is not None:
        yield p.resolve()
        return
    rev = subprocess.run(
        ["git", "-C", str(_REPO), "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if rev.returncode != 0:
        raise ValueError(
            f"{spec!r} is neither a source tree (bench/ and gangplane/cli.py or apiserver/cli.py) "
            "nor a git revision"
        )
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


class _Build:
    """One side's command: its module, how its bench selects scenarios, which it has."""

    def __init__(self, tree: Path, names: list[str], scratch: Path) -> None:
        module = cli_module(tree)
        if module is None:
            raise ValueError(f"{tree}: no gangplane command (gangplane/cli.py or apiserver/cli.py)")
        self.tree = tree
        self.env = {**os.environ, "PYTHONPATH": str(tree)}
        self.cmd = [sys.executable, "-m", module, "bench", "--repeat", "1"]
        helptext = subprocess.run(
            [*self.cmd[:4], "--help"], cwd=tree, env=self.env, capture_output=True, text=True, timeout=120
        ).stdout
        #: scenario name -> the arguments that run exactly it
        self.selects: dict[str, list[str]] = {}
        if "--exact" in helptext:
            self.selects = {n: ["--exact", n] for n in names}
        elif "--file" in helptext:
            # a build from before --exact matches names as parts of names: it gets its own
            # definition of each scenario, as a file
            for n in names:
                path = scratch / f"{tree.name}-{n}.yaml"
                if exact_scenario_file(tree, [n], path):
                    self.selects[n] = ["--file", str(path)]
            missing = [n for n in names if n not in self.selects]
            if missing:
                print(f"{tree.name}: no scenario {', '.join(missing)}: left out of its side", file=sys.stderr)
            if not self.selects:
                raise ValueError(f"{tree.name} has none of the scenarios {', '.join(names)}")
        else:
            self.selects = {n: [n] for n in names}

    def run(self, name: str, quick: bool, out: Path) -> dict[str, Any] | None:
        """One run of scenario ``name`` in a fresh process; None where the build lacks it."""
        select = self.selects.get(name)
        if select is None:
            return None
        cmd = [*self.cmd, "--out", str(out), *(["--quick"] if quick else []), *select]
        subprocess.run(cmd, cwd=self.tree, env=self.env, check=False, timeout=6 * 3600)
        return read_results(out / "results.json")


def _merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One result document from several single-repetition runs of the same build."""
    from bench.results import summarize

    first = docs[0]
    by_name: dict[str, dict[str, Any]] = {}
    for d in docs:
        for s in d["scenarios"]:
            m = by_name.setdefault(s["name"], {**s, "runs": [], "series": {}, "load1m": []})
            m["runs"].extend(s["runs"])
            # the load as each repetition ended: one per run, in the runs' order (a build
            # from before session 26 records none)
            m["load1m"].extend(s.get("load1m") or [])
            if s.get("error"):
                m["error"] = s["error"]
    for s in by_name.values():
        if not s["load1m"]:
            del s["load1m"]
        names = sorted({k for r in s["runs"] for k in r})
        s["summary"] = {k: summarize([r[k] for r in s["runs"] if k in r]) for k in names}
    return {"machine": first["machine"], "target": first["target"], "scenarios": list(by_name.values())}


def run_pairs(a: str, b: str, names: list[str], rounds: int, quick: bool, out: Path) -> tuple[Path, Path]:
    """Alternate A and B for ``rounds`` rounds, scenario by scenario; returns the merged result
    files of A and B."""
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
            builds = {"A": _Build(tree_a, names, scratch), "B": _Build(tree_b, names, scratch)}
            for r in range(rounds):
                order = ("A", "B") if r % 2 == 0 else ("B", "A")
                for k, name in enumerate(names):
                    for side in order:
                        doc = builds[side].run(name, quick, scratch / f"{side}-{r}-{k}")
                        if doc is not None:
                            docs[side].append(doc)
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
