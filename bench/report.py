"""The human side of a run: a rich table, a Markdown report and PNG plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def rows(doc: dict[str, Any]) -> list[tuple[str, str, str, str, str, str]]:
    """(scenario, metric, median, unit, spread, runs) for every metric of every scenario."""
    out = []
    for sc in doc["scenarios"]:
        if sc.get("error") and not sc["runs"]:
            out.append((sc["name"], "error", sc["error"].splitlines()[0], "", "", "0"))
            continue
        for metric, s in sc["summary"].items():
            unit = sc["units"].get(metric, {}).get("unit", "")
            out.append(
                (sc["name"], metric, _fmt(s["median"]), unit, f"±{s['spread'] * 100:.0f}%", str(int(s["n"])))
            )
    return out


def table(doc: dict[str, Any]) -> Table:
    t = Table(
        title=f"gangplane bench — {doc['machine']['commit'] or 'no commit'} on {doc['machine']['cores']} cores"
    )
    for col, justify in (
        ("scenario", "left"),
        ("metric", "left"),
        ("median", "right"),
        ("unit", "left"),
        ("spread", "right"),
        ("runs", "right"),
    ):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for r in rows(doc):
        t.add_row(*r)
    return t


def _model(m: dict[str, Any]) -> str:
    """`` (<model>)`` where the results name the processor (files from before session 26 do not)."""
    return f" ({m['cpuModel']})" if m.get("cpuModel") else ""


def _build(m: dict[str, Any]) -> str:
    """`` (<build>, <executable>)`` where the results name the interpreter's build."""
    if not m.get("pythonBuild"):
        return ""
    return f" ({m['pythonBuild']}, `{m.get('pythonExecutable', '')}`)"


def markdown(doc: dict[str, Any], plots: list[Path]) -> str:
    m = doc["machine"]
    lines = [
        "# gangplane bench report",
        "",
        f"Commit `{m['commit']}`, {m['cores']} cores{_model(m)}, {m['memoryBytes'] / 2**30:.0f} GiB, "
        f"{m['implementation']} {m['python']}{_build(m)}, {m['platform']}, {m['time']}. "
        f"Target: {doc['target']}.",
        "",
        "| scenario | metric | median | unit | spread | runs |",
        "|---|---|---:|---|---:|---:|",
    ]
    lines += [f"| {' | '.join(r)} |" for r in rows(doc)]
    lines.append("")
    for sc in doc["scenarios"]:
        if sc.get("description") or sc.get("params"):
            params = ", ".join(f"{k}={v}" for k, v in sc["params"].items())
            loads = sc.get("load1m") or []
            load = f"; load (1 min) after each run: {', '.join(f'{v:.2f}' for v in loads)}" if loads else ""
            lines.append(f"- **{sc['name']}**: {sc.get('description', '')} ({params}){load}")
    lines.append("")
    for p in plots:
        lines += [f"![{p.stem}]({p.name})", ""]
    return "\n".join(lines)


def plots(doc: dict[str, Any], out_dir: Path) -> list[Path]:
    """time-to-placed vs replicas, pods/s vs nodes, and latency percentiles, where the data has them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: list[Path] = []
    scs = [s for s in doc["scenarios"] if s["runs"]]

    def save(fig: Any, name: str) -> None:
        path = out_dir / f"{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)

    # pods/s vs nodes, one line per kind (basic scheduling, gangs, gangs in racks); the error
    # bars span the repetitions' min..max
    series: dict[str, list[tuple[float, float, float, float]]] = {}
    for s in scs:
        if "pods_per_s" in s["summary"] and "nodes" in s["params"]:
            pr = s["params"]
            label = s["kind"]
            if s["kind"] == "gang-statefulsets":
                shape = f"{pr.get('sets')}x{pr.get('replicas')}"
                label = f"gangs {shape}" if pr.get("gang", True) else f"{shape} without gangs"
                label += f" ({pr['topology']})" if pr.get("topology") else ""
            st = s["summary"]["pods_per_s"]
            series.setdefault(label, []).append((pr["nodes"], st["median"], st["min"], st["max"]))
    if series:
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

        fig, ax = plt.subplots(figsize=(6, 4))
        xs: set[float] = set()
        for label, pts in sorted(series.items()):
            pts.sort()
            xs.update(p[0] for p in pts)
            ax.errorbar(
                [p[0] for p in pts],
                [p[1] for p in pts],
                yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                marker="o",
                capsize=3,
                label=label,
            )
        if max(xs) / max(min(xs), 1) >= 10:
            ax.set_xscale("log")
        # ticks at the cluster sizes measured, written as plain numbers (not 2x10^1)
        ax.xaxis.set_major_locator(FixedLocator(sorted(xs)))
        ax.xaxis.set_minor_locator(NullLocator())
        fmt = ScalarFormatter()
        fmt.set_scientific(False)
        ax.xaxis.set_major_formatter(fmt)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("nodes")
        ax.set_ylabel("pods/s (median, min..max)")
        ax.set_title("Placement throughput vs cluster size")
        ax.legend(fontsize=8)
        save(fig, "pods_per_s_vs_nodes")

    # per scenario: seconds until every pod Running (node agent) or until the slowest set was placed
    bars = []
    for s in scs:
        summ = s["summary"]
        for key, what in (
            ("all_running_s", "first create → all Running"),
            ("set_placed_s_max", "slowest set: its last create → last bound"),
        ):
            if key in summ and "replicas" in s["params"]:
                st = summ[key]
                bars.append((s["params"]["replicas"], s["name"], what, st["median"], st["min"], st["max"]))
                break
    if bars:
        fig, ax = plt.subplots(figsize=(7, 4))
        bars.sort()
        labels = [f"{b[1]}\n({b[2]})" for b in bars]
        ax.bar(
            labels,
            [b[3] for b in bars],
            yerr=[[b[3] - b[4] for b in bars], [b[5] - b[3] for b in bars]],
            capsize=3,
        )
        ax.set_ylabel("seconds (median; bars: min..max)")
        ax.set_title("Time until a set is placed / all pods Running")
        ax.tick_params(axis="x", rotation=45, labelsize=6)
        save(fig, "time_to_running")

    # latency percentiles of any series a workload recorded
    lat = {(s["name"], k): v for s in scs for k, v in s.get("series", {}).items() if v}
    if lat:
        fig, ax = plt.subplots(figsize=(6, 4))
        qs = [50, 90, 95, 99, 99.9]
        for (name, k), values in sorted(lat.items()):
            vs = sorted(values)
            ax.plot(
                qs,
                [vs[min(len(vs) - 1, int(q / 100 * (len(vs) - 1)))] * 1000 for q in qs],
                marker="o",
                label=f"{name}:{k}",
            )
        ax.set_xlabel("percentile")
        ax.set_ylabel("ms")
        ax.set_title("Latency percentiles")
        ax.legend(fontsize=7)
        save(fig, "latency_percentiles")
    return made
