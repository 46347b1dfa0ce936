"""A thresholds file for ``gangplane bench --thresholds FILE``: a run that misses one exits 1 (for users' CI).

```yaml
- scenario: "GangScheduling-*"        # a scenario name, or an fnmatch pattern
  metric: pods_per_s
  min: 100                            # the median must be at least this ...
- scenario: TopologyAwareScheduling-100Nodes_10Gangs
  metric: gangs_waiting
  max: 0                              # ... or at most this
```

A threshold whose scenario did not run is reported as not run (a partial run stays useful); one
naming a metric its scenario does not report is an error, so that a typo never passes silently.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.results import ScenarioResult


class ThresholdsError(ValueError):
    """The thresholds file cannot be used; the message names the entry and field."""


@dataclass(frozen=True)
class Threshold:
    scenario: str
    metric: str
    min: float | None = None
    max: float | None = None


def load_thresholds(path: str | Path) -> list[Threshold]:
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ThresholdsError(f"{path}: {e}") from e
    if isinstance(doc, dict):
        doc = doc.get("thresholds")
    if not isinstance(doc, list):
        raise ThresholdsError(f"{path}: expected a list of thresholds (or thresholds: [...])")
    out: list[Threshold] = []
    for i, e in enumerate(doc):
        where = f"{path}: [{i}]"
        if not isinstance(e, dict):
            raise ThresholdsError(f"{where}: must be a mapping")
        unknown = set(e) - {"scenario", "metric", "min", "max"}
        if unknown:
            raise ThresholdsError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        for k in ("scenario", "metric"):
            if not isinstance(e.get(k), str) or not e[k]:
                raise ThresholdsError(f"{where}.{k}: required (a string)")
        bounds: dict[str, Any] = {}
        for k in ("min", "max"):
            v = e.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ThresholdsError(f"{where}.{k}: must be a number, got {v!r}")
            bounds[k] = None if v is None else float(v)
        if bounds["min"] is None and bounds["max"] is None:
            raise ThresholdsError(f"{where}: give min, max or both")
        out.append(Threshold(e["scenario"], e["metric"], bounds["min"], bounds["max"]))
    return out


@dataclass(frozen=True)
class Verdict:
    threshold: Threshold
    scenario: str
    value: float | None
    #: "ok", "missed", "not run", "no such metric", "failed" (the scenario errored)
    outcome: str


def check(thresholds: list[Threshold], results: list[ScenarioResult]) -> list[Verdict]:
    out: list[Verdict] = []
    for t in thresholds:
        matched = [r for r in results if fnmatch.fnmatchcase(r.name, t.scenario)]
        if not matched:
            out.append(Verdict(t, t.scenario, None, "not run"))
            continue
        for r in matched:
            if r.error:
                out.append(Verdict(t, r.name, None, "failed"))
                continue
            summary = r.summary()
            if t.metric not in summary:
                out.append(Verdict(t, r.name, None, "no such metric"))
                continue
            v = summary[t.metric]["median"]
            ok = (t.min is None or v >= t.min) and (t.max is None or v <= t.max)
            out.append(Verdict(t, r.name, v, "ok" if ok else "missed"))
    return out


def failed(verdicts: list[Verdict]) -> bool:
    return any(v.outcome in ("missed", "no such metric", "failed") for v in verdicts)


def rows(verdicts: list[Verdict]) -> list[list[str]]:
    """Table rows: scenario, metric, median, bound, outcome."""
    out = []
    for v in verdicts:
        t = v.threshold
        bound = " and ".join(
            b
            for b in (
                f">= {t.min:g}" if t.min is not None else "",
                f"<= {t.max:g}" if t.max is not None else "",
            )
            if b
        )
        out.append(
            [
                v.scenario,
                t.metric,
                "-" if v.value is None else f"{v.value:.4g}",
                bound,
                v.outcome.upper() if v.outcome == "missed" else v.outcome,
            ]
        )
    return out
