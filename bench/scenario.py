"""Scenario files: what to run and how often (pure: parsing and validation only, no I/O but reads).

```yaml
name: gang-3x1000-rack          # unique in a run; the results are keyed by it
description: 3 gang StatefulSets of 1,000 pods, one rack each
kind: gang-statefulsets         # the workload (bench/workloads/, see WORKLOADS)
repeat: 3                       # repetitions; medians and spread are taken over them
params: {nodes: 5000, sets: 3, replicas: 1000, topology: rack}
http: false                     # true: runs against --kubeconfig when one is given
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

#: the workload kinds, each a module in ``bench.workloads`` exporting ``PARAMS`` and ``run``
WORKLOADS = {
    "cold-start": "bench.workloads.cold_start",
    "api": "bench.workloads.api",
    "storage": "bench.workloads.storage",
    "scheduling-basic": "bench.workloads.scheduling",
    "scheduling-records-overhead": "bench.workloads.records_overhead",
    "workload-scheduling": "bench.workloads.workload_perf",
    "gang-statefulsets": "bench.workloads.statefulsets",
    "scheduler-overhead": "bench.workloads.scheduler_overhead",
    "preemption": "bench.workloads.preemption",
    "lifecycle": "bench.workloads.lifecycle",
    "dra": "bench.workloads.dra",
    "jobs": "bench.workloads.jobs",
    "fuzz": "bench.workloads.fuzz",
    "big-list": "bench.workloads.big_list",
    "idle-watches": "bench.workloads.idle_watches",
    "memory": "bench.workloads.memory",
    "memory-writes": "bench.workloads.memory_writes",
}
_KEYS = frozenset({"name", "description", "kind", "repeat", "params", "http", "quick"})


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message names the file and the field."""


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    description: str = ""
    repeat: int = 3
    params: Mapping[str, Any] = field(default_factory=dict)
    #: the scenario talks to the API over HTTP only, so it can run against any cluster
    http: bool = False
    #: parameter overrides for ``--quick`` (a smoke run that finishes in seconds)
    quick: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def with_params(self, quick: bool = False, repeat: int | None = None) -> Scenario:
        """The scenario as run: ``quick`` applies the quick sizes and says so in the name
        (``scheduling-basic-5000@quick(nodes=50,pods=100)``), so a smoke run's numbers are
        never read, or compared, as the full size's."""
        params = {**self.params, **(self.quick if quick else {})}
        name = self.name
        if quick and self.quick:
            name += "@quick(" + ",".join(f"{k}={v}" for k, v in self.quick.items()) + ")"
        return Scenario(
            name,
            self.kind,
            self.description,
            repeat if repeat is not None else (1 if quick else self.repeat),
            params,
            self.http,
            self.quick,
            self.source,
        )


def parse_scenario(data: Any, source: str = "<memory>") -> Scenario:
    """Validate one decoded scenario document."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping, got {type(data).__name__}")
    unknown = set(data) - _KEYS
    if unknown:
        raise ScenarioError(f"{source}: unknown field(s) {', '.join(sorted(unknown))}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{source}: name: required, a non-empty string")
    kind = data.get("kind")
    if kind not in WORKLOADS:
        raise ScenarioError(f"{source}: kind: must be one of {', '.join(WORKLOADS)}, got {kind!r}")
    repeat = data.get("repeat", 3)
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise ScenarioError(f"{source}: repeat: must be a positive integer, got {repeat!r}")
    params = data.get("params", {})
    quick = data.get("quick", {})
    params = {} if params is None else params
    quick = {} if quick is None else quick
    for fname, value in (("params", params), ("quick", quick)):
        if not isinstance(value, dict):
            raise ScenarioError(f"{source}: {fname}: must be a mapping")
    http = data.get("http", False)
    if not isinstance(http, bool):
        raise ScenarioError(f"{source}: http: must be true or false")
    return Scenario(name, kind, str(data.get("description", "")), repeat, params, http, quick, source)


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Every scenario in a YAML file (one or more documents)."""
    p = Path(path)
    try:
        docs = list(yaml.safe_load_all(p.read_text()))
    except yaml.YAMLError as e:
        raise ScenarioError(f"{p}: invalid YAML: {e}") from e
    return [
        parse_scenario(d, f"{p}[{i}]" if len(docs) > 1 else str(p))
        for i, d in enumerate(docs)
        if d is not None
    ]


def shipped_scenarios() -> list[Scenario]:
    """The scenarios under ``bench/scenarios/``, in file-name order."""
    out: list[Scenario] = []
    folder = resources.files("bench") / "scenarios"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            with resources.as_file(entry) as f:
                out.extend(load_scenarios(f))
    names = [s.name for s in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ScenarioError(f"duplicate scenario names: {', '.join(sorted(dupes))}")
    return out


def select(scenarios: list[Scenario], patterns: list[str], exact: bool = False) -> list[Scenario]:
    """Scenarios whose name contains any of ``patterns`` (all of them when none is given);
    with ``exact``, whose name is one of them."""
    if not patterns:
        return scenarios
    if exact:
        chosen = [s for s in scenarios if s.name in patterns]
    else:
        chosen = [s for s in scenarios if any(p in s.name for p in patterns)]
    if not chosen:
        raise ScenarioError(
            f"no scenario matches {', '.join(patterns)}; known: {', '.join(s.name for s in scenarios)}"
        )
    return chosen
