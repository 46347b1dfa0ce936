"""CPU per in-process write of what a gang set's plane writes, storage and client copy included
(a script, not a test):

    python bench/micro/storewrite_cpu.py [--writes 1500]              # this tree (or PYTHONPATH's)
    python bench/micro/storewrite_cpu.py --pairs BASE NEW [--rounds 5]

Each write goes through ``LocalClient`` exactly as its writer in the plane sends it, on a plane
without controllers but with one ``read_only`` watch per resource consuming every event as an
informer does (each new revision's shared dict is made in any case, :meth:`Record.shared`):

* ``gangpod``, ``workload``, ``podgroup``, ``revision``: the StatefulSet controller's creates,
  answers ``read_only`` (bodies of :mod:`bench.micro.create_cpu` / ``create_answer_cpu``);
* ``event``: the recorder's Event create (``handoff=True, answer=False``);
* ``statefulset``: the gang bench's create of a set (answer decoded);
* ``sts-status``: the controller's one status write per set (``_write_status``): its informer's
  shared set with a new ``status``, ``read_only``;
* ``pg-condition``: the scheduler's condition write per gang
  (:func:`scheduler.podgroup_status.update_pod_group_condition`: a strategic merge patch of
  ``podgroups/status`` from its informer's shared PodGroup, ``read_only``), on the PodGroups the
  ``podgroup`` kind created.

Printed: process CPU (``time.process_time``) per write in µs, the watch's delivery included.
``--pairs`` runs this script on two trees alternately in fresh processes (swapped order each
round) and prints per kind the median and the spread (min-max) of each tree's rounds and the
ratio of the medians. Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

KINDS = ("gangpod", "workload", "podgroup", "revision", "event", "statefulset", "sts-status", "pg-condition")
NS = "default"
NOW = "2026-12-05T08:00:00Z"


async def _us_per_write(
    bodies: list[dict[str, Any]],
    write: Callable[[dict[str, Any]], Awaitable[Any]],
    seen: dict[Any, int],
    gvr: Any,
) -> float:
    """Process CPU µs per write of ``bodies``, from a collected heap until the watch has seen them all."""
    from gangplane.controlplane import tune_gc

    want = seen[gvr] + len(bodies)
    gc.collect()
    tune_gc()
    t = time.process_time()
    for body in bodies:
        await write(body)
    while seen[gvr] < want:
        await asyncio.sleep(0)
    return (time.process_time() - t) / len(bodies) * 1e6


async def _measure(writes: int) -> dict[str, float]:
    from apiserver.client.interface import (
        CONTROLLERREVISIONS,
        EVENTS,
        PODGROUPS,
        PODS,
        STATEFULSETS,
        WORKLOADS,
    )
    from bench.micro.create_answer_cpu import pod_group, revision
    from bench.micro.create_cpu import event, gangpod, statefulset, workload
    from bench.micro.update_path import _sts_status  # the status the controller writes for a new set of 3
    from gangplane.controlplane import ControlPlane
    from scheduler.podgroup_status import update_pod_group_condition

    plane = ControlPlane()
    c = plane.client("statefulset-controller")
    has_ro = "read_only" in inspect.signature(c.create).parameters
    ro = {"read_only": True} if has_ro else {}
    ev_opts = {"handoff": True, "answer": False} if "answer" in inspect.signature(c.create).parameters else {}
    gvrs = {
        "gangpod": PODS,
        "workload": WORKLOADS,
        "podgroup": PODGROUPS,
        "revision": CONTROLLERREVISIONS,
        "event": EVENTS,
        "statefulset": STATEFULSETS,
    }
    seen: dict[Any, int] = dict.fromkeys(gvrs.values(), 0)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    groups: dict[tuple[str, str], dict[str, Any]] = {}

    async def consume(gvr: Any) -> None:
        async for ev in c.watch(gvr, NS, resource_version="0", read_only=True):
            seen[gvr] += 1
            if gvr is STATEFULSETS or gvr is PODGROUPS:
                md = ev.object["metadata"]
                (latest if gvr is STATEFULSETS else groups)[(md["namespace"], md["name"])] = ev.object

    tasks = [asyncio.create_task(consume(gvr)) for gvr in gvrs.values()]
    await asyncio.sleep(0)
    makers: dict[str, tuple[Any, Callable[[int], dict[str, Any]], dict[str, bool]]] = {
        "gangpod": (PODS, gangpod, ro),
        "workload": (WORKLOADS, workload, ro),
        "podgroup": (PODGROUPS, pod_group, ro),
        "revision": (CONTROLLERREVISIONS, revision, ro),
        "event": (EVENTS, event, ev_opts),
        "statefulset": (STATEFULSETS, statefulset, {}),
    }
    out: dict[str, float] = {}
    try:
        # warm every shape's memo first (a running plane has met each shape long before)
        for _kind, (gvr, make, opts) in makers.items():
            for i in range(30):
                await c.create(gvr, make(10_000_000 + i), NS, **opts)
        for kind, (gvr, make, opts) in makers.items():
            todo = [make(i) for i in range(writes)]
            out[kind] = await _us_per_write(
                todo, lambda body, gvr=gvr, opts=opts: c.create(gvr, body, NS, **opts), seen, gvr
            )
        # the controller's status write: the informer's set with a new status
        bodies = []
        for i in range(writes):
            name = statefulset(i)["metadata"]["name"]
            sts = latest[(NS, name)]
            body = {k: v for k, v in sts.items() if k != "status"}
            body["status"] = _sts_status(sts)
            bodies.append(body)
        out["sts-status"] = await _us_per_write(
            bodies, lambda body: c.update_status(STATEFULSETS, body, NS, **ro), seen, STATEFULSETS
        )
        # the scheduler's condition write on each PodGroup as its informer holds it
        sched = plane.client("kube-scheduler")
        held = [groups[(NS, pod_group(i)["metadata"]["name"])] for i in range(writes)]
        out["pg-condition"] = await _us_per_write(
            held,
            lambda g: update_pod_group_condition(sched, g, "True", "Scheduled", "", NOW),
            seen,
            PODGROUPS,
        )
        return out
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await plane.stop()


def _pairs(base: str, new: str, rounds: int, writes: int) -> None:
    from bench.micro.alternating import alternated_runs

    runs = alternated_runs(os.path.abspath(__file__), base, new, rounds, writes)
    print(f"{'write':<12}{'base median (min-max)':>26}{'new median (min-max)':>26}{'new/base':>10}")
    for kind in KINDS:
        b = [x[kind] for x in runs[base]]
        n = [x[kind] for x in runs[new]]
        mb, mn = statistics.median(b), statistics.median(n)
        print(
            f"{kind:<12}{mb:>10.1f} ({min(b):.1f}-{max(b):.1f})"
            f"{mn:>12.1f} ({min(n):.1f}-{max(n):.1f}){mn / mb:>10.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--writes", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for --pairs)")
    ap.add_argument("--pairs", nargs=2, metavar=("BASE", "NEW"))
    args = ap.parse_args()
    if args.pairs:
        _pairs(args.pairs[0], args.pairs[1], args.rounds, args.writes)
        return
    out = asyncio.run(_measure(args.writes))
    if args.json:
        print(json.dumps(out))
        return
    for kind in KINDS:
        print(f"{kind:<12} {out[kind]:>7.1f} µs")


if __name__ == "__main__":
    main()
