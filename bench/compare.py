"""``gangplane bench compare A.json B.json``: how B's medians relate to A's, metric by metric."""

from __future__ import annotations

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


def table(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str) -> Table:
    t = Table(title=f"{b_name} vs {a_name}")
    for col in ("scenario", "metric", a_name, b_name, "ratio"):
        t.add_column(col, justify="left" if col in ("scenario", "metric") else "right")
    for name, metric, old, new, ratio, better in compare(a, b):
        colour = "green" if better else "red" if abs(ratio - 1) > 0.05 else "white"
        t.add_row(name, metric, f"{old:,.3g}", f"{new:,.3g}", f"[{colour}]{ratio:.2f}x")
    return t
