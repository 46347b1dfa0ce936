"""The cyclic collector's CPU in a gang scenario, per generation (a script, not a test):

    python bench/micro/gc_share.py 4 5000                  # 4 gang sets of 5,000 on 5,000 nodes
    python bench/micro/gc_share.py 1000 3 --json            # gangs-1000x3's shape, one JSON line
    python bench/micro/gc_share.py --pairs BASE NEW --rounds 3 4 5000 --json   # two trees, alternated

It runs one repetition of ``gang-statefulsets`` under the harness's collector settings
(``bench.runner.server_gc``: the plane's ``GC_THRESHOLD`` of whichever tree is imported) and
times every collector pass with ``gc.callbacks`` in process CPU: the passes inside the measured
phase by generation, and how much of them falls inside the big gangs' serial windows (from
their PodGroup search's start to their set's last pod bound).

Why a debt: a generation-1 pass traverses everything that survived the young passes since the
last one, so thresholds that make it rarer only move its cost past the end of a run. At the end
of the measured phase the script runs ``gc.collect(1)`` itself and reports its CPU as ``debt``;
``owed`` (phase + debt) compares thresholds without crediting a pass that merely comes later.
The phase starts after an untimed ``gc.collect(1)`` for the same reason: nothing the set-up
left in the young generations is counted, whichever thresholds it ran under.
Run it by path from outside the trees (``--pairs`` does) so that ``PYTHONPATH`` picks the tree.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import time
from typing import Any


class _Passes:
    """Every collector pass: (generation, perf_counter at its start, process CPU it took)."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float, float]] = []
        self._start = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = (time.perf_counter(), time.process_time())
        else:
            t, c = self._start
            self.passes.append((info["generation"], t, time.process_time() - c))


def run(sets: int, replicas: int) -> dict[str, float]:
    import bench.workloads.statefulsets as sts
    import scheduler.podgroup_algorithm as pga
    from bench.runner import server_gc

    trackers: list[Any] = []
    tracker_init = sts.SetTracker.__init__

    def init(self: Any, *a: Any, **k: Any) -> None:
        tracker_init(self, *a, **k)
        trackers.append(self)

    searches: list[tuple[str, float]] = []
    run_async = pga.PodGroupAlgorithm.run_async

    async def timed(self: Any, state: Any, group: Any, snapshot: Any, **kw: Any) -> Any:
        searches.append((str(getattr(group, "name", "")), time.perf_counter()))
        return await run_async(self, state, group, snapshot, **kw)

    sts.SetTracker.__init__ = init  # type: ignore[method-assign]
    pga.PodGroupAlgorithm.run_async = timed  # type: ignore[method-assign]
    passes = _Passes()

    class PhaseEnv:
        series: dict[str, list[float]] = {}
        phase = (0.0, 0.0)
        cpu = debt = 0.0

        def progress(self, msg: str) -> None:
            pass

        def start_cpu(self) -> None:
            gc.callbacks.remove(passes)
            gc.collect(1)  # the phase starts with nothing owed from the set-up, whatever the thresholds
            gc.callbacks.append(passes)
            self.phase = (time.perf_counter(), 0.0)
            self._cpu0 = time.process_time()

        def stop_cpu(self, pods: int = 0) -> None:
            self.cpu = time.process_time() - self._cpu0
            self.phase = (self.phase[0], time.perf_counter())
            gc.callbacks.remove(passes)
            c = time.process_time()
            gc.collect(1)
            self.debt = time.process_time() - c
            gc.callbacks.append(passes)

    env = PhaseEnv()
    params = {"nodes": 5000, "racks": 50, "sets": sets, "replicas": replicas, "gang": True}
    gc.callbacks.append(passes)
    try:
        with server_gc():
            asyncio.run(sts.run(params, env))  # type: ignore[arg-type]
    finally:
        gc.callbacks.remove(passes)
    t0, t1 = env.phase
    inside = [p for p in passes.passes if t0 <= p[1] <= t1]
    out: dict[str, float] = {"cpu_s": round(env.cpu, 3)}
    for g in (0, 1, 2):
        out[f"gen{g}_n"] = sum(1 for p in inside if p[0] == g)
        out[f"gen{g}_s"] = round(sum(p[2] for p in inside if p[0] == g), 3)
    out["collector_s"] = round(sum(p[2] for p in inside), 3)
    out["debt_s"] = round(env.debt, 3)
    out["owed_s"] = round(out["collector_s"] + env.debt, 3)
    if replicas >= 1000 and trackers:
        # a gang's window: from the start of its last search (the one that placed it; an
        # earlier one may have found it incomplete) to its set's last pod bound
        windows: dict[str, tuple[float, float]] = {}
        for name, start in searches:
            end = next((t for k, t in trackers[0].last["bound"].items() if name.startswith(k + "-")), None)
            if end is not None and start <= end:
                windows[name] = (start, end)
        out["serial_windows_s"] = round(sum(b - a for a, b in windows.values()), 3)
        out["in_serial_windows_s"] = round(
            sum(p[2] for p in passes.passes if any(a <= p[1] <= b for a, b in windows.values())), 3
        )
    return out


def main(argv: list[str]) -> None:
    if "--pairs" in argv:
        from bench.micro.alternating import run_pairs

        run_pairs(__file__, argv)
        return
    args = [a for a in argv if not a.startswith("--")]
    res = run(int(args[0]) if args else 4, int(args[1]) if len(args) > 1 else 5000)
    print(json.dumps(res) if "--json" in argv else res)


if __name__ == "__main__":
    main(sys.argv[1:])
