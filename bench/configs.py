"""``gangplane bench --scheduler-config A.yaml --scheduler-config B.yaml``: one scenario, several configurations.

Each selected scenario runs once per configuration (named ``<scenario>@<file stem>``; the
workload loads the file as ``gangplane serve --scheduler-config`` does), then :func:`comparison`
puts every metric's medians side by side, speed and placement quality alike, with B/A ratios.
Only workloads that build their own scheduler take a configuration (``workload-scheduling``).
"""

from __future__ import annotations

from pathlib import Path

from bench.results import ScenarioResult
from bench.scenario import Scenario, ScenarioError

#: the workload kinds that honour ``params.scheduler_config``
CONFIGURABLE = frozenset({"workload-scheduling"})


def per_config(scenarios: list[Scenario], configs: list[str]) -> list[Scenario]:
    """Every scenario once per configuration file (validated first: a bad file stops the run)."""
    from scheduler.config import ConfigError, load_scheduler_config

    for c in configs:
        try:
            load_scheduler_config(c)
        except ConfigError as e:
            raise ScenarioError(f"--scheduler-config {c}: {e}") from e
    out = []
    for s in scenarios:
        if s.kind not in CONFIGURABLE:
            raise ScenarioError(
                f"scenario {s.name} ({s.kind}) does not take a scheduler configuration; "
                f"those that do: {', '.join(sorted(CONFIGURABLE))}"
            )
        for c in configs:
            out.append(
                Scenario(
                    name=f"{s.name}@{Path(c).stem}",
                    kind=s.kind,
                    description=f"{s.description} (scheduler configuration {c})",
                    repeat=s.repeat,
                    params={**s.params, "scheduler_config": str(Path(c).resolve())},
                    http=s.http,
                    quick=s.quick,
                    source=s.source,
                )
            )
    return out


def comparison(results: list[ScenarioResult], configs: list[str]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): per scenario and metric, each configuration's median and the ratio to the first."""
    stems = [Path(c).stem for c in configs]
    by_base: dict[str, dict[str, ScenarioResult]] = {}
    for r in results:
        base, _, stem = r.name.rpartition("@")
        by_base.setdefault(base, {})[stem] = r
    headers = ["scenario", "metric", *stems, *[f"{s}/{stems[0]}" for s in stems[1:]]]
    rows: list[list[str]] = []
    for base, runs in by_base.items():
        summaries = {stem: (r.summary() if not r.error else {}) for stem, r in runs.items()}
        metrics = sorted({m for s in summaries.values() for m in s})
        for m in metrics:
            vals = [summaries.get(stem, {}).get(m, {}).get("median") for stem in stems]
            cells = ["-" if v is None else f"{v:.4g}" for v in vals]
            ratios = []
            for v in vals[1:]:
                a = vals[0]
                ratios.append("-" if v is None or not a else f"{v / a:.2f}")
            rows.append([base, m, *cells, *ratios])
    return headers, rows
