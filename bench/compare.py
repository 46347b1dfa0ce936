"""``gangplane bench compare A.json B.json``: how B's medians relate to A's, metric by metric.

For the two files of one ``--pairs`` run, also each round's own ratio (B's run over A's run of the
same round): the two ran minutes apart, so a drift of the machine's speed between rounds, which
widens both spreads, cancels in the round's ratio. The median of those ratios and their range say
whether a difference outlasts the noise (session 24: two builds of the same plane read 0.94x by
medians, with rounds from 0.74x to 1.18x)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from rich.table import Table


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, float, float, float, bool]]:
    """(scenario, metric, A median, B median, B/A, B is better) for metrics present in both."""
    index = {
        (s["name"], m): (v["median"], s["units"].get(m, {}))
        for s in a["scenarios"]
        for m, v in s["summary"].items()
    }
    out = []
    for s in b["scenarios"]:
        for m, v in s["summary"].items():
            if (s["name"], m) not in index:
                continue
            old, unit = index[(s["name"], m)]
            new = v["median"]
            ratio = new / old if old else float("inf")
            higher = unit.get("higherIsBetter", s["units"].get(m, {}).get("higherIsBetter", True))
            better = ratio > 1 if higher else ratio < 1
            out.append((s["name"], m, old, new, ratio, better))
    return out


def run_label(path: Path, doc: dict[str, Any]) -> str:
    """How a result file is named in a header: its folder and file, and the commit it measured."""
    commit = (doc.get("machine") or {}).get("commit") or "no commit"
    return f"{path.parent.name}/{path.name} ({commit})"


def _spread(doc: dict[str, Any], scenario: str, metric: str) -> str:
    for s in doc["scenarios"]:
        if s["name"] == scenario and metric in s["summary"]:
            st = s["summary"][metric]
            return f"±{st['spread'] * 100:.0f}% n={int(st['n'])}"
    return ""


def pairwise(a: dict[str, Any], b: dict[str, Any], scenario: str, metric: str) -> list[float] | None:
    """B's run over A's run of the same round, round by round, when ``a`` and ``b`` are the two
    sides of one ``--pairs`` run (each side's runs are in round order); None otherwise, or when a
    round lacks the metric on either side (a failed run: the rounds no longer line up)."""
    if not (a.get("pairs") and b.get("pairs")):
        return None
    runs_a, runs_b = scenario_runs(a, scenario), scenario_runs(b, scenario)
    if not runs_a or runs_b is None or len(runs_a) != len(runs_b):
        return None
    out = []
    for x, y in zip(runs_a, runs_b, strict=True):
        if not x.get(metric) or metric not in y:
            return None
        out.append(y[metric] / x[metric])
    return out


def scenario_runs(doc: dict[str, Any], scenario: str) -> list[dict[str, Any]] | None:
    """A result document's runs of ``scenario`` (one per repetition; in round order for a side of
    a ``--pairs`` run), or None when it has no such scenario."""
    for s in doc["scenarios"]:
        if s["name"] == scenario:
            return list(s["runs"])
    return None


def table(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> Table:
    """B's medians against A's: ``A`` and ``B`` name the runs, ``better`` says which way is better,
    the spread columns give each median's min..max range over its repetitions, relative to it.
    For the two sides of one ``--pairs`` run a last column gives the rounds' own ratios: their
    median and their range (see the module docstring)."""
    rows = compare(a, b)
    rounds = {(name, metric): pairwise(a, b, name, metric) for name, metric, *_ in rows}
    paired = any(v for v in rounds.values())
    t = Table(title=f"B = {b_name}  vs  A = {a_name}   (ratio = B/A)")
    columns = ["scenario", "metric", "better", "A", "A spread", "B", "B spread", "B/A"]
    if paired:
        columns.append("B/A by round")
    for col in columns:
        t.add_column(col, justify="left" if col in ("scenario", "metric", "better") else "right")
    for name, metric, old, new, ratio, better in rows:
        higher = _higher_is_better(b, name, metric)
        colour = "green" if better else "red" if abs(ratio - 1) > 0.05 else "white"
        cells = [
            name,
            metric,
            "higher" if higher else "lower",
            f"{old:,.3g}",
            _spread(a, name, metric),
            f"{new:,.3g}",
            _spread(b, name, metric),
            f"[{colour}]{ratio:.2f}x",
        ]
        if paired:
            got = rounds[(name, metric)]
            cells.append(f"{statistics.median(got):.2f}x ({min(got):.2f}-{max(got):.2f})" if got else "")
        t.add_row(*cells)
    return t


def _higher_is_better(doc: dict[str, Any], scenario: str, metric: str) -> bool:
    for s in doc["scenarios"]:
        if s["name"] == scenario:
            return bool(s["units"].get(metric, {}).get("higherIsBetter", True))
    return True
