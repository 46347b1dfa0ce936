"""CPU per gang set with and without the Event backlog the phase leaves (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/set_cpu_drained.py [--sets 600] [--creators 2]
    cd /tmp && python TREE/bench/micro/set_cpu_drained.py --pairs BASE NEW --rounds 4 [--sets 600]

Runs gangs-SETSx3 on 5,000 nodes in-process, as ``gangplane bench`` runs it, and prints one JSON
line: ``phase`` (ms of process CPU per set from the first create to the last pod bound: the
bench's ``cpu_s``), ``drained`` (the same until every EventRecorder has also written its
backlog), the Events written per set in the phase and in all (``events_phase``,
``events_total``), and the median seconds a set waited to be placed.

Why: the recorders write one Event per loop pass (``apiserver.client.events``: kube's event
sink lags the same way), so of a set's eight Events (SuccessfulCreate x3, Scheduled x3,
WorkloadCreated, PodGroupCreated) only those written before the last pod is bound fall in the
phase: 2.8 per set on main in session 23. A change that makes the plane take fewer loop passes
per set leaves more of them for after the phase (1.4 per set with the StatefulSet controller's
creates in place), and the phase's CPU then falls by more than the plane's work does. Compare
builds by both figures; ``drained`` is the plane's whole work for the sets.

``--pairs A B --rounds N`` runs this script from each tree in turn (swapped order each round,
``PYTHONPATH`` set to the tree) and prints every run, then per figure the medians and B/A with
the pairwise ratios.

``--spy FILE`` samples the phase alone with py-spy (``pip install py-spy``; not a gangplane
dependency): it is attached to this process when the phase starts and stopped when the last pod
is bound, and writes its raw collapsed stacks to FILE (``--spy-rate`` samples per second;
``--spy-native`` adds the C frames: session 30 found a ``getpid`` system call per request that
way, which Python frames alone attribute to ``asyncio.current_task``). A
profile of the whole scenario is mostly its set-up (5,000 nodes, the imports) and the Events
written after the phase; this one is the phase the bench's ``cpu_s`` counts (session 29).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

FIGURES = ("phase", "drained")


def _spy(out: str, rate: int, native: bool = False) -> subprocess.Popen[bytes]:
    """py-spy attached to this process, writing raw collapsed stacks to ``out`` until stopped
    (``native``: with the C frames under the Python ones, py-spy's ``--native``)."""
    exe = shutil.which("py-spy")
    if exe is None:
        raise SystemExit("--spy needs py-spy on PATH (pip install py-spy)")
    cmd = [exe, "record", "--pid", str(os.getpid()), "--rate", str(rate), "--format", "raw", "--output", out]
    if native:
        cmd.append("--native")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # (attaching takes a moment: before the phase's CPU mark, so not counted)
    return proc


def _stop_spy(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        proc.wait()


async def measure(
    sets: int,
    nodes: int = 5000,
    creators: int = 2,
    spy: str | None = None,
    spy_rate: int = 400,
    spy_native: bool = False,
) -> dict[str, float]:
    """One run of gangs-``sets``x3 on ``nodes`` nodes: the figures of the module docstring
    (``spy``: the phase sampled by py-spy into that file, see the module docstring)."""
    import bench.workloads.statefulsets as workload
    from apiserver.client.events import EventRecorder

    recorders: list[EventRecorder] = []
    made = EventRecorder.__init__

    def remember(self: EventRecorder, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        recorders.append(self)

    marks: dict[str, float] = {}
    wait = workload.SetTracker.wait
    spying: list[subprocess.Popen[bytes]] = []

    async def then_drain(tracker: Any, count: int, stage: str, timeout: float) -> None:
        await wait(tracker, count, stage, timeout)
        marks["phase"] = time.process_time()
        _stop_spy(spying[0] if spying else None)
        marks["written"] = sum(r.written for r in recorders)
        await asyncio.gather(*(r.flush() for r in recorders))
        marks["written_total"] = sum(r.written for r in recorders)

    class Env:
        def progress(self, message: str) -> None:
            pass

        def start_cpu(self) -> None:
            if spy is not None:
                spying.append(_spy(spy, spy_rate, spy_native))
            marks["start"] = time.process_time()
            marks["written_before"] = sum(r.written for r in recorders)

        def stop_cpu(self, pods: int = 0) -> None:
            marks["drained"] = time.process_time()

    params = {"nodes": nodes, "racks": 50, "sets": sets, "replicas": 3, "gang": True, "creators": creators}
    EventRecorder.__init__ = remember  # type: ignore[method-assign]
    workload.SetTracker.wait = then_drain  # type: ignore[method-assign]
    try:
        out = await workload.run(params, Env())  # type: ignore[arg-type]
    finally:
        _stop_spy(spying[0] if spying else None)  # (a run that failed before the phase's end)
        EventRecorder.__init__ = made  # type: ignore[method-assign]
        workload.SetTracker.wait = wait  # type: ignore[method-assign]
    before = marks["written_before"]
    return {
        "phase": 1e3 * (marks["phase"] - marks["start"]) / sets,
        "drained": 1e3 * (marks["drained"] - marks["start"]) / sets,
        "events_phase": (marks["written"] - before) / sets,
        "events_total": (marks["written_total"] - before) / sets,
        "placed_median_s": out["set_placed_s_median"],
    }


def _pairs(script: str, trees: list[str], rounds: int, rest: list[str]) -> None:
    # (imported here: the parent's own tree has it; a measured tree runs only the child side)
    from bench.micro.alternating import by_rounds, ratios, rotated_json_runs

    a, b = trees
    commands = {
        t: ([sys.executable, script, *rest], {**os.environ, "PYTHONPATH": os.path.abspath(t)}) for t in trees
    }
    runs = rotated_json_runs(commands, rounds)
    for figure in FIGURES:
        got = ratios(runs, a, figure)
        (ma, _, _), (mb, ratio, pairwise) = got[a], got[b]
        print(
            f"{figure}: A {ma:.3f} B {mb:.3f} ms/set  B/A {ratio:.3f}"
            f"  by rounds {by_rounds(pairwise):.3f}  pairwise {pairwise}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=600)
    ap.add_argument("--creators", type=int, default=2)
    ap.add_argument("--pairs", nargs=2, metavar=("A", "B"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--spy", metavar="FILE", help="py-spy's raw stacks of the phase alone, to FILE")
    ap.add_argument("--spy-rate", type=int, default=400)
    ap.add_argument(
        "--spy-native", action="store_true", help="with --spy: the C frames too (py-spy --native)"
    )
    args = ap.parse_args()
    if args.pairs and args.spy:
        ap.error("--spy profiles one run: not with --pairs")
    if args.spy_native and not args.spy:
        ap.error("--spy-native goes with --spy FILE")
    if args.pairs:
        _pairs(
            os.path.abspath(__file__),
            args.pairs,
            args.rounds,
            ["--sets", str(args.sets), "--creators", str(args.creators)],
        )
        return
    try:
        from bench.workloads.common import server_gc
    except ImportError:  # a tree from before session 24, run by PYTHONPATH: only its runner has it
        from bench.runner import server_gc

    with server_gc():
        figures = measure(
            args.sets,
            creators=args.creators,
            spy=args.spy,
            spy_rate=args.spy_rate,
            spy_native=args.spy_native,
        )
        print(json.dumps(asyncio.run(figures)))


if __name__ == "__main__":
    main()
