"""``gangplane bench compare A.json B.json``: how B's medians relate to A's, metric by metric."""

from __future__ import annotations

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


def table(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> Table:
    """B's medians against A's: ``A`` and ``B`` name the runs, ``better`` says which way is better,
    the spread columns give each median's min..max range over its repetitions, relative to it."""
    t = Table(title=f"B = {b_name}  vs  A = {a_name}   (ratio = B/A)")
    for col in ("scenario", "metric", "better", "A", "A spread", "B", "B spread", "B/A"):
        t.add_column(col, justify="left" if col in ("scenario", "metric", "better") else "right")
    for name, metric, old, new, ratio, better in compare(a, b):
        higher = _higher_is_better(b, name, metric)
        colour = "green" if better else "red" if abs(ratio - 1) > 0.05 else "white"
        t.add_row(
            name,
            metric,
            "higher" if higher else "lower",
            f"{old:,.3g}",
            _spread(a, name, metric),
            f"{new:,.3g}",
            _spread(b, name, metric),
            f"[{colour}]{ratio:.2f}x",
        )
    return t


def _higher_is_better(doc: dict[str, Any], scenario: str, metric: str) -> bool:
    for s in doc["scenarios"]:
        if s["name"] == scenario:
            return bool(s["units"].get(metric, {}).get("higherIsBetter", True))
    return True
