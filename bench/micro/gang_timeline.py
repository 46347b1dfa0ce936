"""When each gang set of a gang scenario is created, scheduled and bound (a script):

    cd /tmp && PYTHONPATH=TREE python TREE/bench/micro/gang_timeline.py [SETS] [REPLICAS]

Runs gangs-SETSxREPLICAS on 5,000 nodes in-process (default 10 x 5,000: ``gangs-10x5000``) under
the bench's collector settings and prints, per set, in seconds from the first StatefulSet
create: the StatefulSet controller's syncs of it, the first and last of its pods created and
bound as the API server stored them, and its PodGroup cycles in the scheduler (wall time, and
the process's CPU over that span), and inside each cycle its placement search and its submit
(assume, Reserve, Permit, the binding tasks started), then when the set's binding tasks took their
first step. ``placed`` is the bench's ``set_placed_s`` (last pod created to last pod bound) from
the server's own stamps. Last, how many KEP-5501 ``NotReadyForScheduling`` reports fell due and
how many were written (a report is written only if PreEnqueue still holds its pod: session 28).

Why: the bench's ``set_placed_s_max`` says how long the slowest set waited, not why. Its pod
watch stamps an event when the watcher's task runs, seconds after the write when the loop is
busy (5,000 bindings seen within 10 ms that took 0.3 s); the stamps here are taken in the
writes themselves. Session 24 read from it: the five StatefulSet workers finish creating sets
together, so their gangs queue at the scheduler, which places them one after another (a
PodGroup cycle of 1.0-1.9 s wall each, twice its own CPU while the next sets' pods are created
beside it); the fourth and fifth of a batch wait for the others.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Stamps = dict[str, Any]


@contextmanager
def stamped() -> Iterator[Stamps]:
    """Record, while inside, every pod create and binding the API server stores (by pod name),
    every StatefulSet sync (by key) and every PodGroup cycle (by PodGroup name), with
    ``time.perf_counter`` stamps; the methods are restored on the way out."""
    import apiserver.registry.subresources as subresources
    import scheduler.scheduler as scheduler_module
    from apiserver.registry.generic import GenericStore
    from controllers.statefulset.controller import StatefulSetController
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.preenqueue_status import REASON_NOT_READY_FOR_SCHEDULING
    from scheduler.schedule_one_podgroup import PodGroupCycle
    from scheduler.scheduler import Scheduler

    out: Stamps = {
        "create": {},
        "bind": {},
        "syncs": collections.defaultdict(list),
        "cycles": [],
        "searches": [],
        "submits": [],
        "binding_starts": collections.defaultdict(list),
        "reports": {"due": 0, "written": 0},
    }
    create, bind = GenericStore.create, subresources.bind
    sync, cycle = StatefulSetController.sync, PodGroupCycle.schedule_one_podgroup
    search, submit = PodGroupAlgorithm.run_async, PodGroupCycle._submit_success
    binding_cycle, report = Scheduler._binding_cycle, Scheduler._report_held_pod
    patch_status = scheduler_module.patch_pod_status

    def stamped_create(self: Any, rd: Any, ns: str, body: Any, opts: Any = None) -> Any:
        res = create(self, rd, ns, body, opts)
        if rd.plural == "pods":
            out["create"][body["metadata"]["name"]] = time.perf_counter()
        return res

    def stamped_bind(api: Any, ns: str, name: str, binding: Any) -> Any:
        res = bind(api, ns, name, binding)
        out["bind"][name] = time.perf_counter()
        return res

    async def stamped_sync(self: Any, key: str) -> None:
        start = time.perf_counter()
        try:
            await sync(self, key)
        finally:
            out["syncs"][key].append((start, time.perf_counter()))

    async def stamped_cycle(self: Any, fw: Any, qpi: Any, pg: Any) -> None:
        start, cpu = time.perf_counter(), time.process_time()
        await cycle(self, fw, qpi, pg)
        out["cycles"].append((pg["metadata"]["name"], start, time.perf_counter(), time.process_time() - cpu))

    async def stamped_search(self: Any, state: Any, group: Any, snapshot: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        result = await search(self, state, group, snapshot, **kw)
        out["searches"].append((group.name, start, time.perf_counter()))
        return result

    async def stamped_submit(self: Any, fw: Any, queued: Any, group: Any, result: Any, start: float) -> None:
        begun = time.perf_counter()
        await submit(self, fw, queued, group, result, start)
        out["submits"].append((group.name, begun, time.perf_counter()))

    def stamped_binding_cycle(self: Any, fw: Any, state: Any, qpi: Any, *args: Any) -> Any:
        inner = binding_cycle(self, fw, state, qpi, *args)

        async def first_step() -> None:  # stamped when the task takes its first step
            out["binding_starts"][qpi.pod["metadata"]["name"].rsplit("-", 1)[0]].append(time.perf_counter())
            await inner

        return first_step()

    async def counted_report(self: Any, pod: Any, message: str) -> None:
        out["reports"]["due"] += 1
        await report(self, pod, message)

    async def counted_patch(client: Any, pod: Any, condition: Any = None, **kw: Any) -> Any:
        if condition is not None and condition.get("reason") == REASON_NOT_READY_FOR_SCHEDULING:
            out["reports"]["written"] += 1
        return await patch_status(client, pod, condition, **kw)

    GenericStore.create = stamped_create  # type: ignore[method-assign]
    subresources.bind = stamped_bind  # type: ignore[assignment]
    StatefulSetController.sync = stamped_sync  # type: ignore[method-assign]
    PodGroupCycle.schedule_one_podgroup = stamped_cycle  # type: ignore[method-assign]
    PodGroupAlgorithm.run_async = stamped_search  # type: ignore[method-assign]
    PodGroupCycle._submit_success = stamped_submit  # type: ignore[method-assign]
    Scheduler._binding_cycle = stamped_binding_cycle  # type: ignore[method-assign]
    Scheduler._report_held_pod = counted_report  # type: ignore[method-assign]
    scheduler_module.patch_pod_status = counted_patch  # type: ignore[assignment]
    try:
        yield out
    finally:
        GenericStore.create = create  # type: ignore[method-assign]
        subresources.bind = bind  # type: ignore[assignment]
        StatefulSetController.sync = sync  # type: ignore[method-assign]
        PodGroupCycle.schedule_one_podgroup = cycle  # type: ignore[method-assign]
        PodGroupAlgorithm.run_async = search  # type: ignore[method-assign]
        PodGroupCycle._submit_success = submit  # type: ignore[method-assign]
        Scheduler._binding_cycle = binding_cycle  # type: ignore[method-assign]
        Scheduler._report_held_pod = report  # type: ignore[method-assign]
        scheduler_module.patch_pod_status = patch_status  # type: ignore[assignment]


def timeline(stamps: Stamps, t0: float) -> list[dict[str, Any]]:
    """Per set (``gang-<i>``, in creation order): its pods' first and last create and binding,
    ``placed`` (last create to last binding), its syncs and its PodGroup cycles, from ``t0``."""
    per: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: {"create": [], "bind": []})
    for what in ("create", "bind"):
        for pod, at in stamps[what].items():
            per[pod.rsplit("-", 1)[0]][what].append(at - t0)
    rows = []
    for name, got in per.items():
        created, bound = got["create"], got["bind"]
        rows.append(
            {
                "set": name,
                "created": (min(created), max(created)),
                "bound": (min(bound), max(bound)) if bound else None,
                "placed": max(bound) - max(created) if bound else None,
                "syncs": [(a - t0, b - t0) for a, b in stamps["syncs"].get(f"bench/{name}", [])],
                "cycles": [
                    (a - t0, b - t0, cpu) for pg, a, b, cpu in stamps["cycles"] if pg.startswith(f"{name}-")
                ],
                "searches": [
                    (a - t0, b - t0) for pg, a, b in stamps["searches"] if pg.startswith(f"{name}-")
                ],
                "submits": [(a - t0, b - t0) for pg, a, b in stamps["submits"] if pg.startswith(f"{name}-")],
                "binding_starts": (
                    (min(starts) - t0, max(starts) - t0)
                    if (starts := stamps["binding_starts"].get(name))
                    else None
                ),
            }
        )
    return sorted(rows, key=lambda r: r["created"][0])


async def run(sets: int, replicas: int, nodes: int = 5000) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The scenario with its stamps, as :func:`timeline` rows, and the KEP-5501 reports that fell
    due and were written (``{"due": n, "written": n}``)."""
    import bench.workloads.statefulsets as workload

    marks: dict[str, float] = {}

    class Env:
        def progress(self, message: str) -> None:
            pass

        def start_cpu(self) -> None:
            marks["t0"] = time.perf_counter()

        def stop_cpu(self, pods: int = 0) -> None:
            pass

    params = {"nodes": nodes, "racks": 50, "sets": sets, "replicas": replicas, "gang": True}
    with stamped() as stamps:
        await workload.run(params, Env())  # type: ignore[arg-type]
    return timeline(stamps, marks["t0"]), dict(stamps["reports"])


def _span(pair: tuple[float, float] | None) -> str:
    return "-" if pair is None else f"{pair[0]:6.2f}-{pair[1]:6.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("sets", type=int, nargs="?", default=10)
    ap.add_argument("replicas", type=int, nargs="?", default=5000)
    args = ap.parse_args()
    try:
        from bench.workloads.common import server_gc
    except ImportError:  # a tree from before session 24, run by PYTHONPATH: only its runner has it
        from bench.runner import server_gc

    with server_gc():
        rows, reports = asyncio.run(run(args.sets, args.replicas))
    for r in rows:
        placed = "-" if r["placed"] is None else f"{r['placed']:5.2f}"
        print(f"{r['set']:8s} created {_span(r['created'])}  bound {_span(r['bound'])}  placed {placed}")
        print("         syncs  " + ", ".join(_span(s) for s in r["syncs"]))
        for a, b, cpu in r["cycles"]:
            print(f"         PodGroup cycle {a:6.2f}-{b:6.2f}: {b - a:5.2f} s wall, {cpu:5.2f} s CPU")
        searches = ", ".join(_span(x) for x in r["searches"]) or "-"
        submits = ", ".join(_span(x) for x in r["submits"]) or "-"
        print(
            f"           search {searches}  submit {submits}  binding tasks start {_span(r['binding_starts'])}"
        )
    print(f"KEP-5501 reports: {reports['due']} fell due, {reports['written']} written")


if __name__ == "__main__":
    main()
