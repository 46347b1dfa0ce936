"""Benchmark results: metrics per repetition, summary statistics, the JSON file and the machine."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson


@dataclass(frozen=True)
class Metric:
    """How a metric reads: its unit and whether more is better (pods/s) or less (seconds)."""

    unit: str
    higher_is_better: bool


#: what every scenario reports beside its own metrics (see :func:`cpu_metrics`)
CPU_METRICS = {
    "cpu_s": Metric("s CPU", False),
    "cpu_ms_per_pod": Metric("ms CPU/pod", False),
}


def cpu_metrics(metrics: dict[str, float], env: Any, repetition_cpu_s: float) -> str:
    """Add ``cpu_s`` and ``cpu_ms_per_pod`` to one repetition's metrics; returns what ``cpu_s`` covers.

    In order of preference: the API server's CPU (``server_cpu_s``, HTTP scenarios, where this
    process only drives the load), this process's CPU in the phases the workload measured, or
    this process's CPU over the whole repetition (setup included) for workloads that mark none.
    """
    if "server_cpu_s" in metrics:
        cpu, scope = metrics["server_cpu_s"], "server"
    elif env.cpu_s is not None:
        cpu, scope = env.cpu_s, "measured phase"
    else:
        cpu, scope = repetition_cpu_s, "whole repetition"
    metrics["cpu_s"] = cpu
    if env.pods:
        metrics["cpu_ms_per_pod"] = cpu * 1000 / env.pods
    return scope


def summarize(values: list[float]) -> dict[str, float]:
    """Median and spread over repetitions (min, max, and the relative interquartile-ish range)."""
    med = statistics.median(values)
    lo, hi = min(values), max(values)
    return {
        "median": med,
        "min": lo,
        "max": hi,
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "spread": (hi - lo) / med if med else 0.0,
        "n": float(len(values)),
    }


@dataclass
class ScenarioResult:
    name: str
    kind: str
    description: str
    params: dict[str, Any]
    target: str
    runs: list[dict[str, float]] = field(default_factory=list)
    units: dict[str, Metric] = field(default_factory=dict)
    series: dict[str, list[float]] = field(default_factory=dict)
    error: str = ""
    #: what ``cpu_s`` measures: "measured phase", "server" or "whole repetition"
    cpu_scope: str = ""
    #: the machine's 1-minute load average as each repetition ended (:func:`load_1m`): on a
    #: shared machine the same build reads very differently under load, so a result says its weather
    load_1m: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, dict[str, float]]:
        names = sorted({k for r in self.runs for k in r})
        return {k: summarize([r[k] for r in self.runs if k in r]) for k in names}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "params": self.params,
            "target": self.target,
            "runs": self.runs,
            "summary": self.summary(),
            "units": {
                k: {"unit": m.unit, "higherIsBetter": m.higher_is_better} for k, m in self.units.items()
            },
            "series": self.series,
            "error": self.error,
            "cpuScope": self.cpu_scope,
            "load1m": self.load_1m,
        }


def git_commit(repo: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if out.returncode != 0:
        return ""
    dirty = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, timeout=5
    )
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def load_1m() -> float:
    """The machine's 1-minute load average (0.0 where the OS has none): this process counts as
    one while it runs a plane, so above ~1 something else shared the machine."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return 0.0


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; the platform's answer elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine() -> dict[str, Any]:
    """What the numbers depend on: cores and their model, memory, Python (and which build of
    it), OS, the commit measured, and the load as the results were written."""
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "cores": os.cpu_count() or 0,
        "cpuModel": cpu_model(),
        "load1m": load_1m(),
        "memoryBytes": mem,
        "python": sys.version.split()[0],
        # which build of it: two builds of one version differ by ~14 % in the plane's CPU here
        # (docs/bench.md, session 26: pyenv's shared, non-PGO 3.11.7 against Debian's 3.11.2)
        "pythonBuild": " ".join(sys.version.split()[1:]),
        "pythonExecutable": os.path.realpath(sys.executable),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "commit": git_commit(Path(__file__).resolve().parent.parent),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def write_results(path: Path, results: list[ScenarioResult], target: str) -> dict[str, Any]:
    doc = {"machine": machine(), "target": target, "scenarios": [r.to_json() for r in results]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return doc


def read_results(path: Path) -> dict[str, Any]:
    try:
        doc = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a gangplane bench result file: {e}") from e
    if not isinstance(doc, dict) or "scenarios" not in doc:
        raise ValueError(f"{path}: not a gangplane bench result file (no 'scenarios')")
    return doc
