"""The API server's CPU per write, by kind of write, on the default in-process plane.

Every controller and the scheduler run (their informers receive each write, as in a real
plane); the pods name no scheduler, so nothing but the writes below happens to them. For each
kind, N writes in a row, then the process CPU they took per write (``time.process_time``):

* ``create``: a pod of one template (each its own name and labels);
* ``owned``: a pod as a StatefulSet creates it (an owner reference naming its own set,
  ``hostname``, a ``pod-name`` label), one set per pod: nothing of it is shared but the template;
* ``binding``: ``pods/binding`` of each pod;
* ``status``: GET + ``update_status`` (phase Running, a Ready condition), as the node agent;
* ``patch``: a merge patch of ``status.podIP`` on ``/status``;
* ``event``: an Event create, as the scheduler's recorder writes them.

    python bench/bench_writes.py [--writes 2000] [--profile KIND]

Compare two trees by running it with each on ``PYTHONPATH``, alternately (docs/bench.md, "The
API path per write"). Numbers go in the docs, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import time
from collections.abc import Awaitable, Callable
from typing import Any

from apiserver.client.interface import EVENTS, PODS
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

KINDS = ("create", "owned", "binding", "status", "patch", "event")


def pod(i: int, owned: bool = False) -> dict[str, Any]:
    name = f"w-{i}" if owned else f"p{i}"
    meta: dict[str, Any] = {"name": name, "labels": {"app": "x", "idx": str(i)}}
    spec: dict[str, Any] = {
        "schedulerName": "none",
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
        ],
    }
    if owned:
        meta["labels"] = {"app": "x", "statefulset.kubernetes.io/pod-name": name}
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": f"w{i}",
                "uid": f"00000000-0000-4000-8000-{i:012d}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        spec["hostname"] = name
        spec["subdomain"] = "w"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def event(i: int, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"p{i}.18{i:010d}", "namespace": "default"},
        "involvedObject": {
            "kind": "Pod",
            "namespace": "default",
            "name": f"p{i}",
            "uid": uid,
            "apiVersion": "v1",
        },
        "reason": "Scheduled",
        "message": f"Successfully assigned default/p{i} to n-{i % 50}",
        "type": "Normal",
        "source": {"component": "default-scheduler"},
        "firstTimestamp": "2026-12-05T00:00:00Z",
        "lastTimestamp": "2026-12-05T00:00:00Z",
        "count": 1,
        "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler",
    }


async def run(writes: int, profile: str) -> None:
    cp = ControlPlane(ControlPlaneOptions())
    await cp.start()
    c = cp.client()
    uids: dict[int, str] = {}

    async def create(i: int) -> None:
        uids[i] = (await c.create(PODS, pod(i), "default"))["metadata"]["uid"]

    async def owned(i: int) -> None:
        await c.create(PODS, pod(i, owned=True), "default")

    async def binding(i: int) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": f"p{i}", "namespace": "default", "uid": uids[i]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": f"n-{i % 50}"},
        }
        await c.create_subresource(PODS, f"p{i}", "binding", body, "default")

    async def status(i: int) -> None:
        p = await c.get(PODS, f"p{i}", "default")
        p["status"]["phase"] = "Running"
        p["status"]["conditions"] = [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-05T00:00:00Z"}
        ]
        await c.update_status(PODS, p, "default")

    async def patch(i: int) -> None:
        ip = f"10.0.{i // 250}.{i % 250}"
        await c.patch(PODS, f"p{i}", {"status": {"podIP": ip}}, "default", subresource="status")

    async def ev(i: int) -> None:
        await c.create(EVENTS, event(i, uids[i]), "default")

    steps: dict[str, Callable[[int], Awaitable[None]]] = {
        "create": create,
        "owned": owned,
        "binding": binding,
        "status": status,
        "patch": patch,
        "event": ev,
    }
    try:
        for kind in KINDS:
            prof = cProfile.Profile() if profile == kind else None
            gc.collect()
            t = time.process_time()
            if prof is not None:
                prof.enable()
            for i in range(writes):
                await steps[kind](i)
            if prof is not None:
                prof.disable()
            print(f"{kind:8s} {(time.process_time() - t) / writes * 1e6:6.0f} us CPU per write")
            if prof is not None:
                pstats.Stats(prof).sort_stats("cumulative").print_stats(60)
    finally:
        await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--profile", choices=KINDS, default="", help="cProfile this kind's writes")
    args = ap.parse_args()
    asyncio.run(run(args.writes, args.profile))


if __name__ == "__main__":
    main()
