"""The scheduler's work around a gang's member cycles, spot by spot, in the plane (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/pgcycle_split.py [SETS] [--spot module:qualname ...] [--by-resource]

Runs gangs-SETSx3 (default 400 sets of 3 on 5,000 nodes, in-process, as ``gangplane bench``
runs it) with a thread-CPU timer around each spot (:data:`SPOTS`, or ``--spot``) and prints
each one's µs per set, calls per set and µs per call, and the run's process CPU per set.

Why: ``loop_census.py`` says what ``task:Scheduler._run`` costs per set (~1 ms), and
``member_split.py`` what its three member cycles cost (~0.5 ms); this says where the other half
goes - the PodGroup cycle's set-up, the search between member cycles, the submit (assume,
Reserve, Permit, the binding task), the condition write, the metrics - and what the queue and
handlers spend on the gang's pods (their adds, PreEnqueue, the release of held members).
``--by-resource`` splits each plain spot by the ResourceDef its calls name: the API server's
steps are shared by every kind a set makes (pods, Events, the Workload, the revision), and one
figure per spot hides which kind pays (session 20's stsfirst map: ``GenericStore.create``,
``FieldTracker.on_create``, ``check_body``).

The timers are ``sched_split``'s :class:`~bench.micro.sched_split.Accountant` (a coroutine is
charged only for its own steps, not while other tasks run; a module-level function is timed
wherever it was imported by name). Nested spots each add ~0.5-1 µs of timer to their callers. The cyclic collector is off while
the phase runs. Compare builds by running this file from a neutral directory with
``PYTHONPATH`` set to each tree, alternately.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time

from bench.micro.sched_split import Accountant

#: ``module:qualname`` of the spots timed (a method as ``Class.method``)
SPOTS = [
    "scheduler.podgroup_algorithm:PodGroupAlgorithm.run_async",
    "scheduler.podgroup_algorithm:PodGroupAlgorithm._full_cycle",
    "scheduler.queue:SchedulingQueue.pop_group_members",
    "scheduler.scheduler:Scheduler.skip_pod_schedule",
    "scheduler.cache:Cache.update_snapshot",
    "scheduler.schedule_one_podgroup:validate_group",
    "scheduler.schedule_one_podgroup:PodGroupCycle.wants_pod_group_cycle",
    "scheduler.metrics:SchedulerMetrics.observe_pod_group_attempt",
    "scheduler.metrics:SchedulerMetrics.observe_pod_group_algorithm",
    "scheduler.loop_share:LoopShare.__init__",
    "scheduler.framework:Framework.run_placement_generate_plugins",
    "scheduler.framework:Framework.run_placement_feasible_plugins",
    "scheduler.cache:Snapshot.assume_pod",
    "scheduler.cycle_memo:forget_cycle_scratch",
    "scheduler.scheduler:Scheduler.assume_and_start",
    "scheduler.cache:Cache.assume_pod",
    "scheduler.framework:Framework.run_permit_plugins",
    "scheduler.podgroup_status:desired_conditions",
    "apiserver.registry.generic:GenericStore.patch",
    "scheduler.scheduler:Scheduler._on_pod_add",
    "scheduler.scheduler:Scheduler._on_pod_update",
    "scheduler.queue:SchedulingQueue.add",
    "scheduler.queue:SchedulingQueue._run_pre_enqueue",
    "scheduler.queue:SchedulingQueue._activate_held_members",
    "scheduler.queue:SchedulingQueue.move_all_to_active_or_backoff",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("sets", nargs="?", type=int, default=400)
    ap.add_argument("--spot", action="append", help="module:qualname to time instead of SPOTS")
    ap.add_argument(
        "--by-resource",
        action="store_true",
        help="report each plain spot per resource where a call names a ResourceDef "
        "(GenericStore.create[pods], check_body[events])",
    )
    a = ap.parse_args()
    spots = Accountant()
    # (the option only when asked: an older tree's Accountant, this file run against it, has none)
    missing = (
        spots.install(a.spot or SPOTS, by_resource=True) if a.by_resource else spots.install(a.spot or SPOTS)
    )
    if missing:
        raise SystemExit("not in this tree: " + ", ".join(missing))
    import bench.workloads.statefulsets as statefulsets
    from bench.runner import server_gc

    class Env:
        cpu = 0.0

        def progress(self, message: str) -> None:
            pass

        def start_cpu(self) -> None:
            spots.ns.clear()
            spots.calls.clear()
            gc.disable()
            self.cpu = time.process_time()

        def stop_cpu(self, n: int) -> None:
            self.cpu = time.process_time() - self.cpu

    env = Env()
    params = {"nodes": 5000, "racks": 50, "sets": a.sets, "replicas": 3, "gang": True}
    with server_gc():
        asyncio.run(statefulsets.run(params, env))  # type: ignore[arg-type]
    print(f"process CPU {env.cpu / a.sets * 1e6:.0f} µs per set (timers included)")
    print(spots.report(a.sets))


if __name__ == "__main__":
    main()
