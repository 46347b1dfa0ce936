"""The API server's CPU per scheduler status patch, on a bare in-process API (a script).

    python bench/micro/patch_path.py [--writes 600]             # this tree (or PYTHONPATH's)
    python bench/micro/patch_path.py --pairs BASE NEW [--rounds 3]
    python bench/micro/patch_path.py --profile pod-held         # cProfile of one kind's loop

The three condition patches the scheduler sends, each on distinct objects shaped as the
controllers make them (read ``read_only`` first, as the informers of a running plane hold them):

* ``pod-held``: KEP-5501's strategic-merge patch of ``pods/status`` with ``PodScheduled=False``,
  reason ``NotReadyForScheduling`` (a pending pod a PreEnqueue plugin holds);
* ``pod-unsched``: the same patch shape replacing that condition with reason ``Unschedulable``
  (``scheduler/podstatus.py``: a condition already on the pod, merged by its type);
* ``pg-condition``: a JSON merge patch on ``podgroups/status`` of the ``PodGroupScheduled``
  condition, with the resourceVersion read as a precondition (the scheduler's request until
  session 14, kept as is so that figures stay comparable);
* ``pg-scheduler``: the scheduler's own ``update_pod_group_condition`` (of the tree under test)
  setting ``PodGroupInitiallyScheduled=True`` on a gang's fresh PodGroup, as a placed gang does:
  the request it builds and sends (since session 14 upstream's strategic merge patch) and the
  server's write; under ``--pairs`` each tree sends its own request.

Printed is the process CPU per write (``time.process_time``) in µs; ``--pairs`` alternates two
trees in child processes and prints the minimum over rounds. Numbers go in docs/bench.md only.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
from typing import Any

KINDS = ("pod-held", "pod-unsched", "pg-condition", "pg-scheduler")
NS = "default"
NOW = "2026-12-05T08:00:00Z"
SMP = "application/strategic-merge-patch+json"


def _condition(reason: str, message: str) -> dict[str, Any]:
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": NOW,
        "reason": reason,
        "message": message,
    }


async def _measure(writes: int, profile: str | None = None) -> dict[str, float]:
    from apiserver.client.interface import PODGROUPS, PODS, STATEFULSETS
    from bench.micro.update_path import _pod, _pod_group, _share, _statefulset, _Timer
    from gangplane.controlplane import ControlPlane, tune_gc
    from scheduler.podgroup_status import update_pod_group_condition

    plane = ControlPlane()
    try:
        c = plane.client("bench")
        sets = [await c.create(STATEFULSETS, _statefulset(i), NS) for i in range(writes)]
        groups = [
            await c.create(PODGROUPS, _pod_group(i, s["metadata"]["uid"][::-1]), NS)
            for i, s in enumerate(sets)
        ]
        pods = [await c.create(PODS, _pod(i, s["metadata"]["uid"]), NS) for i, s in enumerate(sets)]
        fresh = []  # a second PodGroup per set, for pg-scheduler (pg-condition writes the first)
        for i, s in enumerate(sets):
            body = _pod_group(i, s["metadata"]["uid"][::-1])
            body["metadata"]["name"] = f"s{i}-1"
            fresh.append(await c.create(PODGROUPS, body, NS))
        await _share(c, STATEFULSETS, PODGROUPS, PODS)
        out: dict[str, float] = {}
        held = "waiting for 2 more pods of gang default/s-0 (minCount 3)"
        for kind, reason, msg in (
            ("pod-held", "NotReadyForScheduling", held),
            ("pod-unsched", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu."),
        ):
            patches = [{"status": {"conditions": [_condition(reason, msg)]}} for _ in pods]
            gc.collect()
            tune_gc()
            with _Timer(kind, profile) as t:
                for p, body in zip(pods, patches, strict=True):
                    await c.patch(PODS, p["metadata"]["name"], body, NS, patch_type=SMP, subresource="status")
            out[kind] = t.cpu / writes * 1e6
        pg_patches = [
            {
                "metadata": {"resourceVersion": g["metadata"]["resourceVersion"]},
                "status": {
                    "conditions": [
                        {
                            "type": "PodGroupScheduled",
                            "status": "True",
                            "reason": "Scheduled",
                            "message": "",
                            "observedGeneration": 1,
                            "lastTransitionTime": NOW,
                        }
                    ]
                },
            }
            for g in groups
        ]
        gc.collect()
        tune_gc()
        with _Timer("pg-condition", profile) as t:
            for g, body in zip(groups, pg_patches, strict=True):
                await c.patch(
                    PODGROUPS,
                    g["metadata"]["name"],
                    body,
                    NS,
                    patch_type="application/merge-patch+json",
                    subresource="status",
                )
        out["pg-condition"] = t.cpu / writes * 1e6
        sched = plane.client("kube-scheduler")
        gc.collect()
        tune_gc()
        with _Timer("pg-scheduler", profile) as t:
            for g in fresh:
                await update_pod_group_condition(sched, g, "True", "Scheduled", "", NOW)
        out["pg-scheduler"] = t.cpu / writes * 1e6
        return out
    finally:
        await plane.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=600)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for --pairs)")
    ap.add_argument("--pairs", nargs=2, metavar=("BASE", "NEW"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", choices=KINDS, help="cProfile one kind's loop (to stderr)")
    args = ap.parse_args()
    if args.pairs:
        from bench.micro.alternating import alternate  # the parent only: this tree's helper

        alternate(os.path.abspath(__file__), args.pairs[0], args.pairs[1], args.rounds, args.writes, KINDS)
        return
    out = asyncio.run(_measure(args.writes, args.profile))
    if args.json:
        print(json.dumps(out))
    else:
        for kind in KINDS:
            print(f"{kind:<14}{out[kind]:>10.1f} µs")


if __name__ == "__main__":
    main()
