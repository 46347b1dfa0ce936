"""CPU per in-process create of what the StatefulSet controller creates, its answer copied or
shared read-only (a script, not a test):

    python bench/micro/create_answer_cpu.py [--writes 1500]          # this tree (or PYTHONPATH's)
    python bench/micro/create_answer_cpu.py --pairs BASE NEW [--rounds 3]

The four creates a gang StatefulSet makes through ``LocalClient.create`` (a pod of the set, its
Workload, its PodGroup, its ControllerRevision; bodies as :mod:`bench.micro.create_cpu` and the
controller build them), each on a plane without controllers but with one ``read_only`` watch per
resource consuming every event as an informer does: the informers of a running plane make each
new revision's shared dict anyway (:meth:`Record.shared`), so a read-only answer is measured
against what the plane pays in any case, not against a bare store.

For each kind two loops of ``--writes`` creates on distinct objects, alternated in one process
(the copied one first in odd rounds, second in even ones; each kind's best round is kept):

* ``<kind>``: the answer decoded for the caller (``create(...)``), as before session 14;
* ``<kind>-ro``: ``create(..., read_only=True)`` where the tree's client has it (else as above):
  the stored object's shared dict, the one the watch then delivers.

Printed: process CPU (``time.process_time``) per create in µs, the watch's delivery included
(the loop waits until the watch has seen every object). ``--pairs`` runs this script against
two trees alternately (:mod:`bench.micro.alternating`). Numbers go in docs/bench.md, never into
assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import os
import time
from collections.abc import Callable
from typing import Any

KINDS = ("pod", "workload", "podgroup", "revision")
NS = "default"
_SET_UID = "00000000-0000-4000-8000-{:012d}"


def _owner(kind: str, name: str, uid: str) -> dict[str, Any]:
    api = "apps/v1" if kind == "StatefulSet" else "scheduling.k8s.io/v1beta1"
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_group(i: int) -> dict[str, Any]:
    """The PodGroup of gang set ``w{i}`` (owned by the set, linked to its Workload)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": f"w{i}-w{i}",
            "namespace": NS,
            "annotations": {"scheduling.k8s.io/managed-by": "statefulset-controller"},
            "ownerReferences": [_owner("StatefulSet", f"w{i}", _SET_UID.format(i))],
        },
        "spec": {
            "workloadRef": {"workloadName": f"w{i}", "templateName": f"w{i}"},
            "schedulingPolicy": {"gang": {"minCount": 3}},
        },
    }


def revision(i: int) -> dict[str, Any]:
    """The first ControllerRevision of set ``w{i}`` (its pod template as ``data``)."""
    from bench.micro.create_cpu import pod

    template = pod(3 * i)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": f"w{i}-5d8f7c9b4",
            "namespace": NS,
            "labels": {"app": "w", "controller.kubernetes.io/hash": "5d8f7c9b4"},
            "ownerReferences": [_owner("StatefulSet", f"w{i}", _SET_UID.format(i))],
        },
        "data": {
            "spec": {
                "template": {"metadata": {"labels": {"app": "w"}}, "spec": template["spec"]},
                "$patch": "replace",
            }
        },
        "revision": 1,
    }


def _bodies() -> dict[str, tuple[Any, Callable[[int], dict[str, Any]]]]:
    from apiserver.client.interface import CONTROLLERREVISIONS, PODGROUPS, PODS, WORKLOADS
    from bench.micro.create_cpu import pod, workload

    return {
        "pod": (PODS, pod),
        "workload": (WORKLOADS, workload),
        "podgroup": (PODGROUPS, pod_group),
        "revision": (CONTROLLERREVISIONS, revision),
    }


async def _measure(writes: int, rounds: int) -> dict[str, float]:
    from gangplane.controlplane import ControlPlane, tune_gc

    plane = ControlPlane()
    c = plane.client("statefulset-controller")
    has_read_only = "read_only" in inspect.signature(c.create).parameters
    seen: dict[str, int] = dict.fromkeys(KINDS, 0)
    tasks = []

    async def consume(kind: str, gvr: Any) -> None:
        async for ev in c.watch(gvr, NS, resource_version="0", read_only=True):
            if ev.type == "ADDED":
                seen[kind] += 1

    bodies = _bodies()
    try:
        for kind, (gvr, _) in bodies.items():
            tasks.append(asyncio.create_task(consume(kind, gvr)))
        await asyncio.sleep(0)
        best: dict[str, float] = {}
        made = 0
        for r in range(rounds * 2):
            for kind, (gvr, make) in bodies.items():
                read_only = (r % 2 == 1) if (r // 2) % 2 == 0 else (r % 2 == 0)
                opts = {"read_only": True} if read_only and has_read_only else {}
                todo = [make(made + i) for i in range(writes)]
                want = seen[kind] + writes
                gc.collect()
                tune_gc()
                t = time.process_time()
                for body in todo:
                    await c.create(gvr, body, NS, **opts)
                while seen[kind] < want:
                    await asyncio.sleep(0)
                us = (time.process_time() - t) / writes * 1e6
                name = f"{kind}-ro" if read_only else kind
                best[name] = min(best.get(name, us), us)
            made += writes
        return best
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await plane.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--writes", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON line (for --pairs)")
    ap.add_argument("--pairs", nargs=2, metavar=("BASE", "NEW"))
    args = ap.parse_args()
    names = [n for k in KINDS for n in (k, f"{k}-ro")]
    if args.pairs:
        from bench.micro.alternating import alternate  # the parent only: this tree's helper

        alternate(os.path.abspath(__file__), args.pairs[0], args.pairs[1], args.rounds, args.writes, names)
        return
    out = asyncio.run(_measure(args.writes, 1 if args.json else args.rounds))
    if args.json:
        print(json.dumps(out))
        return
    for kind in KINDS:
        base, ro = out[kind], out[f"{kind}-ro"]
        print(f"{kind:<10} copied {base:>7.1f} µs  read-only {ro:>7.1f} µs  ratio {ro / base:.3f}")


if __name__ == "__main__":
    main()
