"""Several ``gangplane bench --pairs`` runs of one scenario pooled, and read at a reference speed (a script):

    python -m bench.micro.pairs_pool RUN [RUN ...] [--scenario gangs-1000x3] [--reference 245]
        [--target 1000] [--cpu-target 1.0]

Each RUN is one ``--pairs`` run: its folder (holding ``pairs-A.json`` and ``pairs-B.json``) or
its A file kept under another name ending in ``-A.json``, whose B file ends in ``-B.json``
(``docs/bench/results-20261207-s33-m1-A.json``). A is the reference build (such as an issue's
commit), B the one under test. Every round of every run is one pair: A's figure and B's,
measured minutes apart in swapped order.

Why: on this shared machine a build's speed moves by a factor of two within an hour, and both
builds move together. A target stated in absolute figures (issue #22: ≥ 1,000 pods/s at ≤ 1.0 ms
of CPU per pod, where the issue's commit ran 245 pods/s) therefore holds or not depending on the
hour. The script reads B where the machine ran A at the reference figure, three ways, so that the
reading does not rest on one selection:

* **factor**: the median of the rounds' own B/A ratios (and how many reach the target's factor,
  target / reference), which assumes the two builds slow down alike;
* **bins**: the rounds grouped by A's speed (quartiles), each with its median factor, B and CPU
  per pod: whether the factor itself depends on the machine's speed;
* **band** and **fit**: the rounds with A within ±10 % of the reference, and a least-squares line
  of B's pods/s on A's (and of B's CPU per pod on 1 / A's pods/s, CPU being proportional to time
  per pod) evaluated at the reference. Rounds selected by A at or above the reference read
  faster machines than the reference: not used for that reason.

Prints one block of text; ``--json`` prints the figures as one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.compare import scenario_runs

#: one round: A's pods/s, B's pods/s, B's CPU ms per pod
Round = tuple[float, float, float]


def files_of(run: Path) -> tuple[Path, Path] | None:
    """A run's A and B result files (see the module docstring), or None where it has none."""
    if run.is_dir():
        a_path, b_path = run / "pairs-A.json", run / "pairs-B.json"
    elif run.name.endswith("-A.json"):
        a_path, b_path = run, run.with_name(run.name[: -len("-A.json")] + "-B.json")
    else:
        return None
    return (a_path, b_path) if a_path.is_file() and b_path.is_file() else None


def rounds_of(runs: Sequence[Path], scenario: str) -> list[Round]:
    """Every round of ``scenario`` in ``runs`` (a run's A and B results pair by position).

    A run whose two sides hold different numbers of the scenario's runs (a repetition that
    failed on one side) is left out, with a line on stderr: its positions no longer name rounds."""
    out: list[Round] = []
    for run in runs:
        files = files_of(run)
        if files is None:
            continue
        a_path, b_path = files
        a_runs = scenario_runs(json.loads(a_path.read_text()), scenario) or []
        b_runs = scenario_runs(json.loads(b_path.read_text()), scenario) or []
        if len(a_runs) != len(b_runs):
            print(f"{run}: {len(a_runs)} runs of A, {len(b_runs)} of B: left out", file=sys.stderr)
            continue
        for a, b in zip(a_runs, b_runs, strict=True):
            if "pods_per_s" in a and "pods_per_s" in b and "cpu_ms_per_pod" in b:
                out.append((float(a["pods_per_s"]), float(b["pods_per_s"]), float(b["cpu_ms_per_pod"])))
    return out


def summary(rounds: Sequence[Round], reference: float, target: float, cpu_target: float) -> dict[str, Any]:
    """The figures the module docstring lists (``rounds`` non-empty)."""
    a = [r[0] for r in rounds]
    b = [r[1] for r in rounds]
    cpu = [r[2] for r in rounds]
    factors = [r[1] / r[0] for r in rounds]
    wanted = target / reference
    # numpy's default quantiles (linear between order statistics); one round is its own quartiles
    quartiles = statistics.quantiles(factors, n=4, method="inclusive") if len(factors) > 1 else factors * 3
    out: dict[str, Any] = {
        "rounds": len(rounds),
        "a_median": statistics.median(a),
        "b_median": statistics.median(b),
        "cpu_median": statistics.median(cpu),
        "factor_median": statistics.median(factors),
        "factor_q1": quartiles[0],
        "factor_q3": quartiles[2],
        "factor_wanted": wanted,
        "rounds_reaching_factor": sum(f >= wanted for f in factors),
        "rounds_meeting_both": sum(1 for r in rounds if r[1] >= target and r[2] <= cpu_target),
    }
    ordered = sorted(rounds)
    bins = []
    for i in range(4):
        part = ordered[len(ordered) * i // 4 : len(ordered) * (i + 1) // 4]
        if part:
            bins.append(
                {
                    "a_from": part[0][0],
                    "a_to": part[-1][0],
                    "rounds": len(part),
                    "factor": statistics.median(r[1] / r[0] for r in part),
                    "b": statistics.median(r[1] for r in part),
                    "cpu": statistics.median(r[2] for r in part),
                }
            )
    out["bins"] = bins
    band = [r for r in rounds if abs(r[0] - reference) <= 0.1 * reference]
    if band:
        out["band"] = {
            "rounds": len(band),
            "a": statistics.median(r[0] for r in band),
            "b": statistics.median(r[1] for r in band),
            "cpu": statistics.median(r[2] for r in band),
            "factor": statistics.median(r[1] / r[0] for r in band),
        }
    if len(set(a)) > 1:
        k, m = statistics.linear_regression(a, b)
        kc, mc = statistics.linear_regression([1000.0 / x for x in a], cpu)
        out["fit"] = {
            "b_per_a": k,
            "b_at_zero": m,
            "b_at_reference": k * reference + m,
            "cpu_at_reference": kc * 1000.0 / reference + mc,
        }
    out["normalised_median"] = statistics.median(r[1] * reference / r[0] for r in rounds)
    return out


def render(s: dict[str, Any], reference: float, target: float, cpu_target: float) -> str:
    lines = [
        f"{s['rounds']} rounds: A {s['a_median']:.0f} pods/s, B {s['b_median']:.0f} pods/s at "
        f"{s['cpu_median']:.3f} ms per pod (medians); {s['rounds_meeting_both']} rounds reach both "
        f"≥ {target:g} and ≤ {cpu_target:g}",
        f"factor B/A {s['factor_median']:.2f} (quartiles {s['factor_q1']:.2f}–{s['factor_q3']:.2f}); "
        f"{target:g} / {reference:g} asks {s['factor_wanted']:.2f}, reached in {s['rounds_reaching_factor']} rounds",
        "by A's speed (quartiles of the rounds):",
    ]
    for b in s["bins"]:
        lines.append(
            f"  A {b['a_from']:.0f}–{b['a_to']:.0f} ({b['rounds']} rounds): factor {b['factor']:.2f}, "
            f"B {b['b']:.0f} pods/s at {b['cpu']:.3f} ms"
        )
    band = s.get("band")
    if band:
        lines.append(
            f"A within ±10 % of {reference:g} ({band['rounds']} rounds, A {band['a']:.0f}): B {band['b']:.0f} "
            f"pods/s at {band['cpu']:.3f} ms, factor {band['factor']:.2f}"
        )
    fit = s.get("fit")
    if fit:
        lines.append(
            f"least squares at A = {reference:g}: B {fit['b_at_reference']:.0f} pods/s "
            f"(B = {fit['b_per_a']:.2f} A {fit['b_at_zero']:+.0f}), {fit['cpu_at_reference']:.3f} ms per pod"
        )
    lines.append(
        f"each round scaled to A = {reference:g} (B × {reference:g} / A), median: {s['normalised_median']:.0f} pods/s"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("runs", nargs="+", type=Path, help="--pairs runs: folders, or their A files (*-A.json)")
    ap.add_argument("--scenario", default="gangs-1000x3")
    ap.add_argument("--reference", type=float, default=245.0, help="A's pods/s the target was set against")
    ap.add_argument("--target", type=float, default=1000.0, help="B's pods/s target")
    ap.add_argument("--cpu-target", type=float, default=1.0, help="B's CPU ms per pod target")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rounds = rounds_of(args.runs, args.scenario)
    if not rounds:
        print(f"no rounds of {args.scenario} in {', '.join(map(str, args.runs))}")
        return 1
    s = summary(rounds, args.reference, args.target, args.cpu_target)
    print(json.dumps(s) if args.json else render(s, args.reference, args.target, args.cpu_target))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
