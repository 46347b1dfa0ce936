"""Where the scheduler's CPU goes per set in the whole in-process plane (a script):

    python -m bench.micro.sched_split [SCENARIO] [--per SETS] [--out DIR]
    python -m bench.micro.sched_split [SCENARIO] --pairs TREE_A TREE_B [--rounds 3]

Runs ``gangplane bench --exact SCENARIO`` (default ``gangs-1000x3``) in this process with an
accountant around a fixed list of the scheduler's functions (:data:`SPOTS`: the queue and the
informer handlers, the PodGroup cycle and its search, the pod cycle's extension points, the
snapshot's catch-ups, the binding cycle, and the API server's steps of the PodGroup condition
write) and prints, for each, the loop thread's CPU it spent while it itself ran, per set
(``--per``, default 1,000: the gang scenarios' set count), and its calls per set. Setup runs
before the measured phase and is included where a spot runs during it (node adds).

Why not a sampling profile: py-spy's samples of the plane land preferentially in system calls
(the search's clock read, 0.2 µs a call, held 4.6 % of the scheduler's samples in session 15),
and a coroutine's stack is sampled while it is suspended in ``await`` only as far as it runs.
Here a plain function is timed from call to return, and a coroutine is driven step by step:
the CPU from each resumption to the next suspension counts, the time it is suspended (the loop
running other tasks) does not. So a PodGroup cycle's figure is its own work, though the
condition write inside it yields to the loop once.

Read the figures as inclusive (a spot's time holds the spots it calls) and slightly high: every
wrapped call adds the accountant's own ~0.5-1 µs to itself and to each wrapped caller. A spot a
tree lacks is skipped (the list is printed), so the script runs against older trees too:
``PYTHONPATH=<tree> python -m bench.micro.sched_split``. The machine's load moves the figures
as it moves the bench's own CPU reading: ``--pairs`` compares two source trees (``git archive``
copies) alternately, each run a separate process with ``PYTHONPATH`` at its tree (the first tree
of each round alternating), and prints each spot's median per tree, their ratio and each tree's
spread ((max - min) / median).
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Generator
from typing import Any

#: ``module:qualname`` of every function accounted (a class method as ``Class.method``); a
#: module-level function is patched wherever it was imported by name too (:meth:`Accountant.install`)
SPOTS = [
    "scheduler.scheduler:Scheduler._on_pod_add",
    "scheduler.scheduler:Scheduler._on_pod_update",
    "scheduler.scheduler:Scheduler._on_pod_group_update",
    "scheduler.queue:SchedulingQueue.add",
    "scheduler.queue:SchedulingQueue._move_to_active",
    "scheduler.framework:Framework.run_pre_enqueue_plugins",
    "scheduler.cache:Cache.add_pod",
    "scheduler.scheduler:Scheduler.schedule_one",
    "scheduler.schedule_one_podgroup:PodGroupCycle.schedule_one_podgroup",
    "scheduler.cache:Cache.update_snapshot",
    "scheduler.podgroup_algorithm:PodGroupAlgorithm.run_async",
    "scheduler.schedule_one:schedule_pod",
    "scheduler.schedule_one:find_nodes_that_fit",
    "scheduler.framework:Framework.run_pre_filter_plugins",
    "scheduler.framework:Framework.run_filter_hints",
    "scheduler.framework:Framework.run_pre_score_plugins",
    "scheduler.plugins.pod_topology_spread:PodTopologySpread.pre_score",
    "scheduler.schedule_one:fused_totals",
    "scheduler.schedule_one:select_from_totals",
    "scheduler.cache:Snapshot.assume_pod",
    "scheduler.cache:Snapshot._catch_up",
    "scheduler.cache:Snapshot.node_table",
    "scheduler.framework:Framework.run_placement_feasible_plugins",
    "scheduler.schedule_one_podgroup:PodGroupCycle._submit_success",
    "scheduler.scheduler:Scheduler.assume_and_bind",
    "scheduler.cache:Cache.assume_pod",
    "scheduler.framework:Framework.run_permit_plugins",
    "scheduler.schedule_one_podgroup:PodGroupCycle._set_pod_group_condition",
    "apiserver.server.localclient:LocalClient.patch",
    "apiserver.registry.generic:GenericStore._patch_once",
    "apiserver.registry.generic:GenericStore._update_from",
    "apiserver.patch.tracker:FieldTracker.on_update",
    "scheduler.scheduler:Scheduler._binding_cycle",
    "scheduler.framework:Framework.run_bind_plugins",
]

#: per-resource figures for these (a ResourceDef is their first argument after ``self``; see
#: :meth:`Accountant.plain` for functions taking it first)
BY_RESOURCE = {
    "apiserver.registry.generic:GenericStore._patch_once",
    "apiserver.registry.generic:GenericStore._update_from",
    "apiserver.patch.tracker:FieldTracker.on_update",
}


class Accountant:
    """CPU (``clock``: the loop thread's, in ns) and calls per spot label."""

    def __init__(self, clock: Callable[[], int] = time.thread_time_ns) -> None:
        self.clock = clock
        self.ns: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()

    def plain(self, fn: Callable[..., Any], label: str, by_resource: bool) -> Callable[..., Any]:
        clock, ns, calls = self.clock, self.ns, self.calls

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            name = label
            if by_resource:
                # the ResourceDef after ``self`` (a method's), else first (``check_body(rd, …)``)
                if len(args) > 1 and hasattr(args[1], "plural"):
                    name = f"{label}[{args[1].plural}]"
                elif args and hasattr(args[0], "plural"):
                    name = f"{label}[{args[0].plural}]"
            start = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                ns[name] += clock() - start
                calls[name] += 1

        return timed

    def coroutine(self, fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        clock, ns, calls = self.clock, self.ns, self.calls

        @types.coroutine
        def drive(coro: Any) -> Generator[Any, Any, Any]:
            """Run ``coro`` as ``await`` would, counting only the CPU of its own steps."""
            spent = 0
            send: Any = None
            thrown: BaseException | None = None
            try:
                while True:
                    start = clock()
                    try:
                        step = coro.throw(thrown) if thrown is not None else coro.send(send)
                    except StopIteration as done:
                        spent += clock() - start
                        return done.value
                    spent += clock() - start
                    try:
                        send, thrown = (yield step), None
                    except BaseException as e:  # cancellation and the like: passed in
                        send, thrown = None, e
            finally:
                ns[label] += spent
                calls[label] += 1

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            return await drive(fn(*args, **kwargs))

        return timed

    def install(self, spots: list[str], by_resource: bool = False) -> list[str]:
        """Wrap every spot that exists; the ones missing from this tree. A module-level function
        is replaced wherever it was imported by name too (``from scheduler.schedule_one import
        schedule_pod``); a static or class method is refused (SystemExit): its wrapper would
        become an instance method. ``by_resource``: every plain spot is reported per resource
        where a call names a ResourceDef (as :data:`BY_RESOURCE`'s always are), so a create's
        cost in the plane splits by kind (``GenericStore.create[pods]``)."""
        missing = []
        for spot in spots:
            module_name, _, qualname = spot.partition(":")
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                missing.append(spot)
                continue
            *owners, attr = qualname.split(".")
            owner: Any = module
            for part in owners:
                owner = getattr(owner, part, None)
            fn = getattr(owner, attr, None) if owner is not None else None
            if fn is None:
                missing.append(spot)
                continue
            if isinstance(owner, type) and isinstance(owner.__dict__.get(attr), (staticmethod, classmethod)):
                raise SystemExit(f"{spot}: a static or class method cannot be timed here")
            label = qualname if owners else f"{module_name.rsplit('.', 1)[-1]}.{qualname}"
            if inspect.iscoroutinefunction(fn):
                wrapped = self.coroutine(fn, label)
            else:
                wrapped = self.plain(fn, label, by_resource or spot in BY_RESOURCE)
            setattr(owner, attr, wrapped)
            if not owners:
                for other in list(sys.modules.values()):
                    if other is not None and getattr(other, attr, None) is fn:
                        setattr(other, attr, wrapped)
        return missing

    def report(self, per: int) -> str:
        lines = [
            f"thread CPU while each ran, per set ({per} sets) and per call, inclusive of the spots it calls:"
        ]
        for label, ns in sorted(self.ns.items(), key=lambda kv: -kv[1]):
            calls = self.calls[label]
            per_call = ns / calls / 1000 if calls else 0.0
            lines.append(
                f"{ns / per / 1000:9.1f} µs/set {calls / per:7.2f} calls/set {per_call:8.1f} µs/call  {label}"
            )
        return "\n".join(lines)


#: the line a child run (``--json``) prints its figures on
JSON_MARK = "SCHED_SPLIT_JSON "


def _one_run(tree: str, scenario: str, per: int, out: str) -> dict[str, float]:
    """µs per set by spot of one run of this script in a child process against ``tree``."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    cmd = [sys.executable, os.path.abspath(__file__), scenario, "--per", str(per), "--out", out, "--json"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    for line in done.stdout.splitlines():
        if line.startswith(JSON_MARK):
            got: dict[str, float] = json.loads(line[len(JSON_MARK) :])
            return got
    raise RuntimeError(f"no figures from the run against {tree}:\n{done.stderr[-2000:]}")


def pairs(trees: list[str], scenario: str, per: int, rounds: int, out: str) -> str:
    """Each tree ``rounds`` times, alternately; the table of medians, ratio and spreads."""
    runs: list[list[dict[str, float]]] = [[] for _ in trees]
    for r in range(rounds):
        order = list(range(len(trees)))
        if r % 2:
            order.reverse()
        for i in order:
            runs[i].append(_one_run(trees[i], scenario, per, os.path.join(out, f"t{i}-r{r}")))
    spots = sorted({k for rs in runs for run in rs for k in run}, key=lambda k: -runs[0][0].get(k, 0.0))
    lines = [f"µs per set, median of {rounds} alternated runs: A={trees[0]}  B={trees[1]}"]
    lines.append(f"{'A':>9} {'B':>9} {'B/A':>6} {'spread A':>9} {'spread B':>9}  spot")
    for spot in spots:
        a = [run.get(spot, 0.0) for run in runs[0]]
        b = [run.get(spot, 0.0) for run in runs[1]]
        ma, mb = statistics.median(a), statistics.median(b)
        ratio = f"{mb / ma:6.2f}" if ma else "     -"
        sa = f"{(max(a) - min(a)) / ma:8.0%}" if ma else "       -"
        sb = f"{(max(b) - min(b)) / mb:8.0%}" if mb else "       -"
        lines.append(f"{ma:9.1f} {mb:9.1f} {ratio} {sa} {sb}   {spot}")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", default="gangs-1000x3")
    ap.add_argument("--per", type=int, default=1000, help="sets to divide by (the scenario's set count)")
    ap.add_argument("--out", default="/tmp/sched_split", help="the bench's output directory")
    ap.add_argument("--pairs", nargs=2, metavar="TREE", help="compare two source trees alternately")
    ap.add_argument("--rounds", type=int, default=3, help="runs per tree with --pairs")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a --pairs child
    args = ap.parse_args(argv)
    if args.pairs:
        print(pairs(args.pairs, args.scenario, args.per, args.rounds, args.out))
        return
    acct = Accountant()
    missing = acct.install(SPOTS)
    from bench.cli import main as bench_main

    bench_main(["--exact", args.scenario, "--out", args.out])
    if args.json:
        figures = {label: ns / args.per / 1000 for label, ns in acct.ns.items()}
        print(JSON_MARK + json.dumps(figures))
        return
    print(acct.report(args.per))
    if missing:
        print("not in this tree:", ", ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:])
