"""``gangplane bench``: run scenarios and write results, or compare two result files."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench import compare, report
from bench.results import ScenarioResult, read_results, write_results
from bench.runner import run_scenarios
from bench.scenario import ScenarioError, load_scenarios, select, shipped_scenarios


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gangplane bench",
        description="Run benchmark scenarios (bench/scenarios/*.yaml, or your own files) and write "
        "results.json, report.md and PNG plots. 'gangplane bench compare A.json B.json' compares two runs.",
    )
    p.add_argument(
        "names", nargs="*", help="run the shipped scenarios whose name contains one of these (see --exact)"
    )
    p.add_argument(
        "--file", "-f", action="append", default=[], help="a scenario YAML file of your own (repeatable)"
    )
    p.add_argument("--out", default="bench/results", help="folder for results.json, report.md and plots")
    p.add_argument("--repeat", type=int, default=None, help="override every scenario's repeat count")
    p.add_argument("--quick", action="store_true", help="smoke run: each scenario's 'quick' sizes, once")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--exact", action="store_true", help="NAMES are whole scenario names, not parts of names")
    p.add_argument(
        "--pairs",
        nargs=2,
        metavar=("A", "B"),
        default=None,
        help="measure two builds (source trees or git revisions) in alternation, NAMES as with --exact, "
        "and print B/A",
    )
    p.add_argument("--rounds", type=int, default=3, help="--pairs: rounds of A and B (default 3)")
    p.add_argument(
        "--kubeconfig",
        default=None,
        help="run the HTTP-level scenarios against this API server (e.g. a kind cluster)",
    )
    p.add_argument(
        "--ui",
        action="store_true",
        help="serve gangplane's live view of each control plane the run starts and print its login URL, "
        "to watch a scenario unfold (it costs CPU: the numbers of such a run are not for comparison)",
    )
    p.add_argument(
        "--ui-port",
        type=int,
        default=6444,
        help="with --ui: the view's port, kept from plane to plane (6444)",
    )
    p.add_argument(
        "--thresholds",
        default=None,
        metavar="FILE",
        help="YAML of {scenario, metric, min/max}: exit 1 when a median misses one (bench/thresholds.py)",
    )
    p.add_argument(
        "--scheduler-config",
        action="append",
        default=[],
        metavar="FILE",
        help="run each scenario under this KubeSchedulerConfiguration (repeat it to compare "
        "configurations: speed and quality side by side)",
    )
    return p


def main(argv: list[str]) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=140)  # a log file gets full scenario names, not an 80-column cut
    if argv and argv[0] == "compare":
        p = argparse.ArgumentParser(prog="gangplane bench compare", description="B's medians relative to A's")
        p.add_argument("a")
        p.add_argument("b")
        args = p.parse_args(argv[1:])
        try:
            a, b = read_results(Path(args.a)), read_results(Path(args.b))
        except ValueError as e:
            console.print(f"[red]gangplane bench: {e}")
            return 2
        console.print(
            compare.table(a, b, compare.run_label(Path(args.a), a), compare.run_label(Path(args.b), b))
        )
        return 0
    args = _run_parser().parse_args(argv)
    if args.pairs:
        from bench.pairs import run_pairs

        try:
            pa, pb = run_pairs(*args.pairs, args.names, args.rounds, args.quick, Path(args.out))
        except (ValueError, OSError) as e:
            console.print(f"[red]gangplane bench: {e}")
            return 2
        a, b = read_results(pa), read_results(pb)
        out = Path(args.out)
        pngs = report.plots(b, out)  # B's numbers, with error bars over its rounds
        (out / "report.md").write_text(report.markdown(b, pngs))
        console.print(compare.table(a, b, f"{args.pairs[0]} ({pa.name})", f"{args.pairs[1]} ({pb.name})"))
        return 0
    try:
        scenarios = [s for f in args.file for s in load_scenarios(f)] if args.file else shipped_scenarios()
        scenarios = select(scenarios, args.names, exact=args.exact)
    except (ScenarioError, OSError) as e:
        console.print(f"[red]gangplane bench: {e}")
        return 2
    scenarios = [s.with_params(quick=args.quick, repeat=args.repeat) for s in scenarios]
    thresholds = None
    try:
        if args.thresholds:
            from bench.thresholds import load_thresholds

            thresholds = load_thresholds(args.thresholds)
        if args.scheduler_config:
            from bench.configs import per_config

            scenarios = per_config(scenarios, args.scheduler_config)
    except (ScenarioError, ValueError) as e:
        console.print(f"[red]gangplane bench: {e}")
        return 2
    if args.list:
        for s in scenarios:
            console.print(f"{s.name:<32} {s.kind:<18} x{s.repeat}  {s.description}")
        return 0
    kubeconfig = Path(args.kubeconfig).resolve() if args.kubeconfig else None
    out = Path(args.out)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = out / f"results-{stamp}.json"
    target = str(kubeconfig) if kubeconfig else "gangplane"

    def checkpoint(so_far: list[ScenarioResult]) -> None:
        # rewritten after each scenario: a run stopped part way keeps what it measured
        write_results(path, so_far, target)

    watching = None
    if args.ui:
        from gangplane.controlplane import PLANE_STARTED
        from gangplane.ui.watch import PlaneWatcher

        watcher = PlaneWatcher(args.ui_port, lambda line: console.print(line, markup=False, highlight=False))
        watching = PLANE_STARTED.set(watcher.serve)
    try:
        results = run_scenarios(scenarios, console, kubeconfig, checkpoint)
    finally:
        if watching is not None:
            PLANE_STARTED.reset(watching)
    doc = write_results(path, results, target)
    (out / "results.json").write_bytes(path.read_bytes())
    pngs = report.plots(doc, out)
    (out / "report.md").write_text(report.markdown(doc, pngs))
    console.print(report.table(doc))
    console.print(f"wrote {path}, {out / 'report.md'} and {len(pngs)} plot(s) in {out}")
    code = 1 if any(r.error for r in results) else 0
    if len(args.scheduler_config) > 1:
        from bench.configs import comparison

        console.print(
            _table(
                "scheduler configurations side by side (medians)", *comparison(results, args.scheduler_config)
            )
        )
    if thresholds is not None:
        from bench.thresholds import check, failed, rows

        verdicts = check(thresholds, results)
        console.print(
            _table(
                f"thresholds ({args.thresholds})",
                ["scenario", "metric", "median", "bound", "outcome"],
                rows(verdicts),
            )
        )
        if failed(verdicts):
            console.print("[red]gangplane bench: thresholds missed")
            code = 1
    return code


def _table(title: str, headers: list[str], rows: list[list[str]]) -> Table:
    t = Table(title=title)
    for h in headers:
        t.add_column(h)
    for r in rows:
        t.add_row(*r)
    return t
