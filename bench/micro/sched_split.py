"""Where the scheduler's CPU goes per set in the whole in-process plane (a script):

    python -m bench.micro.sched_split [SCENARIO] [--per SETS] [--out DIR]

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
as it moves the bench's own CPU reading; compare trees alternately.
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import inspect
import sys
import time
import types
from collections.abc import Callable, Generator
from typing import Any

#: ``module:qualname`` of every function accounted (a class method as ``Class.method``); the
#: names a module imported from another are patched there too (:data:`ALSO_IN`)
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

#: modules that imported a spot's function by name: patched with the same wrapper
ALSO_IN = {
    "scheduler.schedule_one:schedule_pod": ["scheduler.podgroup_algorithm"],
}

#: per-resource figures for these (their first argument after ``self`` is a ResourceDef)
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
            if by_resource and len(args) > 1 and hasattr(args[1], "plural"):
                name = f"{label}[{args[1].plural}]"
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

    def install(self, spots: list[str]) -> list[str]:
        """Wrap every spot that exists; the ones missing from this tree."""
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
            label = qualname if owners else f"{module_name.rsplit('.', 1)[-1]}.{qualname}"
            if inspect.iscoroutinefunction(fn):
                wrapped = self.coroutine(fn, label)
            else:
                wrapped = self.plain(fn, label, spot in BY_RESOURCE)
            setattr(owner, attr, wrapped)
            for other in ALSO_IN.get(spot, []):
                mod = importlib.import_module(other)
                if getattr(mod, attr, None) is fn:
                    setattr(mod, attr, wrapped)
        return missing

    def report(self, per: int) -> str:
        lines = [f"thread CPU while each ran, per set ({per} sets), inclusive of the spots it calls:"]
        for label, ns in sorted(self.ns.items(), key=lambda kv: -kv[1]):
            lines.append(f"{ns / per / 1000:9.1f} µs/set {self.calls[label] / per:7.2f} calls/set  {label}")
        return "\n".join(lines)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", nargs="?", default="gangs-1000x3")
    ap.add_argument("--per", type=int, default=1000, help="sets to divide by (the scenario's set count)")
    ap.add_argument("--out", default="/tmp/sched_split", help="the bench's output directory")
    args = ap.parse_args(argv)
    acct = Accountant()
    missing = acct.install(SPOTS)
    from bench.cli import main as bench_main

    bench_main(["--exact", args.scenario, "--out", args.out])
    print(acct.report(args.per))
    if missing:
        print("not in this tree:", ", ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:])
