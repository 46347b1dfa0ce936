"""Runs scenarios with a progress bar and collects their results.

Each repetition of a scenario runs in a fresh event loop (``asyncio.run``), so one repetition's
leftovers cannot slow the next; a repetition that fails records the error on the scenario and the
run goes on with the next scenario.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.results import CPU_METRICS, ScenarioResult, cpu_metrics, load_1m
from bench.scenario import WORKLOADS, Scenario
from bench.workloads.common import Env, server_gc


def run_scenarios(
    scenarios: list[Scenario],
    console: Console,
    kubeconfig: Path | None = None,
    checkpoint: Callable[[list[ScenarioResult]], None] | None = None,
) -> list[ScenarioResult]:
    """Run ``scenarios`` in order; ``checkpoint(results so far)`` after each one, so a long run
    that is stopped keeps what it measured."""
    results: list[ScenarioResult] = []
    total = sum(s.repeat for s in scenarios)
    target = str(kubeconfig) if kubeconfig else "gangplane (in this process)"
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[step]}"),
    )
    # auto_refresh off: rich's refresh thread re-renders the bars ten times a second in this
    # process, and a measured phase's process CPU counted it (with its GIL hand-offs): ~5 % of
    # gangs-1000x3's CPU per pod (docs/bench.md, session 22). The bars are redrawn when a step
    # is reported or a repetition ends instead, so no thread of the harness runs beside a plane.
    with Progress(*columns, console=console, transient=False, auto_refresh=False) as progress:
        overall = progress.add_task("all scenarios", total=total, step="")
        for sc in scenarios:
            if kubeconfig is not None and not sc.http:
                progress.advance(overall, sc.repeat)
                console.print(
                    f"[yellow]skipped {sc.name}: it needs gangplane in-process (not an HTTP-only scenario)"
                )
                continue
            try:
                module = importlib.import_module(WORKLOADS[sc.kind])
            except Exception as e:  # a broken workload is a failed scenario, not a lost run
                res = ScenarioResult(sc.name, sc.kind, sc.description, dict(sc.params), target, units={})
                res.error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"
                console.print(f"[red]{sc.name} failed: {type(e).__name__}: {e}")
                progress.advance(overall, sc.repeat)
                results.append(res)
                if checkpoint is not None:
                    checkpoint(results)
                continue
            res = ScenarioResult(
                sc.name,
                sc.kind,
                sc.description,
                dict(sc.params),
                target,
                units={**module.METRICS, **CPU_METRICS},
            )
            task = progress.add_task(sc.name, total=sc.repeat, step="")

            def step(msg: str, task_id: int = task) -> None:
                progress.update(task_id, step=msg, refresh=True)

            for _ in range(sc.repeat):
                env = Env(kubeconfig=kubeconfig, progress=step)
                gc.collect()
                cpu0 = time.process_time()
                try:
                    with server_gc():
                        metrics = asyncio.run(module.run(dict(sc.params), env))
                    res.cpu_scope = cpu_metrics(metrics, env, time.process_time() - cpu0)
                except Exception as e:  # a failing scenario is reported, the run goes on
                    res.error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}"
                    console.print(f"[red]{sc.name} failed: {type(e).__name__}: {e}")
                    progress.advance(overall, sc.repeat - len(res.runs))
                    break
                res.runs.append(metrics)
                res.load_1m.append(load_1m())
                for k in metrics:  # ``<metric>.<part>`` (a breakdown of one) reads as its metric
                    base = k.split(".", 1)[0]
                    if k not in res.units and base in res.units:
                        res.units[k] = res.units[base]
                for k, v in env.series.items():
                    res.series.setdefault(k, []).extend(v)
                progress.advance(task)
                progress.advance(overall)
                progress.refresh()
            progress.update(task, step="done" if not res.error else "failed", refresh=True)
            results.append(res)
            if checkpoint is not None:
                checkpoint(results)
    return results
