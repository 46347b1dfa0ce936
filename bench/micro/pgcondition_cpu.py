"""CPU per gang of the scheduler's PodGroup condition write, the request of session 13 against
today's, alternated in one process on one in-process API (a script):

    python -m bench.micro.pgcondition_cpu [--groups 600] [--rounds 6]

Each round creates ``--groups`` fresh PodGroups per variant (shaped as the StatefulSet controller
makes them, read once as the informers hold them) and marks each ``PodGroupInitiallyScheduled=
True``, as a placed gang does:

* ``merge-rv``: session 13's request, a JSON merge patch of the whole condition list carrying
  the resourceVersion read, with a private (copied) answer;
* ``smp``: :func:`scheduler.podgroup_status.update_pod_group_condition` of this tree: upstream's
  two-way strategic merge patch without a resourceVersion, with a read-only answer;
* ``smp-copy``: the same request with a private (copied) answer, as before ``patch`` had
  ``read_only``;
* ``smp-rebuild``: ``smp`` with the server's strategic merge rebuilding a new subtree key by key
  (``strategic._plain`` off), as before session 14;
* ``smp-decoded``: ``smp`` merged into the registry's private decoding of the whole stored
  PodGroup (``registry.handoff.private_patch_base`` off), as before session 19.

The variants alternate round by round (each round starting with the next one), so the machine's load falls on both
alike; printed is each variant's best round in µs of process CPU (``time.process_time``) per
write, client and server together, and their ratio. Numbers go in docs/bench.md only.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

NS = "default"
NOW = "2026-12-05T08:00:00Z"
MERGE_PATCH = "application/merge-patch+json"


async def _merge_rv(client: Any, pod_group: dict[str, Any]) -> Any:
    """Session 13's ``update_pod_group_condition`` request (first attempt: no conflict here)."""
    from apiserver.client.interface import PODGROUPS
    from scheduler.podgroup_status import desired_conditions

    meta = pod_group["metadata"]
    conditions = desired_conditions(pod_group, "True", "Scheduled", "", NOW)
    patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": {"conditions": conditions}}
    return await client.patch(
        PODGROUPS, meta["name"], patch, NS, patch_type=MERGE_PATCH, subresource="status"
    )


async def _smp(client: Any, pod_group: dict[str, Any]) -> Any:
    from scheduler.podgroup_status import update_pod_group_condition

    return await update_pod_group_condition(client, pod_group, "True", "Scheduled", "", NOW)


async def _smp_copy(client: Any, pod_group: dict[str, Any]) -> Any:
    from apiserver.client.interface import PODGROUPS
    from scheduler.podgroup_status import STRATEGIC_MERGE_PATCH, desired_conditions, status_patch

    conditions = desired_conditions(pod_group, "True", "Scheduled", "", NOW)
    assert conditions is not None
    patch = status_patch(pod_group.get("status"), conditions)
    name = pod_group["metadata"]["name"]
    return await client.patch(
        PODGROUPS, name, patch, NS, patch_type=STRATEGIC_MERGE_PATCH, subresource="status"
    )


async def _smp_rebuild(client: Any, pod_group: dict[str, Any]) -> Any:
    from apiserver.patch import strategic

    plain, plain_list = strategic._plain, strategic._plain_list
    strategic._plain = strategic._plain_list = lambda value: False  # type: ignore[assignment]
    try:
        return await _smp(client, pod_group)
    finally:
        strategic._plain, strategic._plain_list = plain, plain_list


async def _smp_decoded(client: Any, pod_group: dict[str, Any]) -> Any:
    from apiserver.registry import generic

    base = getattr(generic, "private_patch_base", None)
    generic.private_patch_base = lambda *args: None  # type: ignore[attr-defined]
    try:
        return await _smp(client, pod_group)
    finally:
        if base is not None:
            generic.private_patch_base = base  # type: ignore[attr-defined]


VARIANTS = {
    "merge-rv": _merge_rv,
    "smp": _smp,
    "smp-copy": _smp_copy,
    "smp-rebuild": _smp_rebuild,
    "smp-decoded": _smp_decoded,
}


async def _measure(groups: int, rounds: int) -> dict[str, list[float]]:
    from apiserver.client.interface import PODGROUPS, STATEFULSETS
    from bench.micro.update_path import _pod_group, _share, _statefulset
    from gangplane.controlplane import ControlPlane, tune_gc

    plane = ControlPlane()
    out: dict[str, list[float]] = {v: [] for v in VARIANTS}
    try:
        c = plane.client("bench")
        sched = plane.client("kube-scheduler")
        sets = [await c.create(STATEFULSETS, _statefulset(i), NS) for i in range(groups)]
        n = 0
        for r in range(rounds):
            order = list(VARIANTS)[r % len(VARIANTS) :] + list(VARIANTS)[: r % len(VARIANTS)]
            for variant in order:
                made = []
                for s in sets:
                    body = _pod_group(n, s["metadata"]["uid"][::-1])
                    body["metadata"]["name"] = f"g{n}"
                    n += 1
                    made.append(await c.create(PODGROUPS, body, NS))
                await _share(c, PODGROUPS)
                # the scheduler writes on the object as its informer holds it (shared, read-only)
                held = [
                    plane.api.peek(PODGROUPS.group, PODGROUPS.resource, NS, g["metadata"]["name"])
                    for g in made
                ]
                write = VARIANTS[variant]
                gc.collect()
                tune_gc()
                t = time.process_time()
                for g in held:
                    await write(sched, g)
                out[variant].append((time.process_time() - t) / groups * 1e6)
        return out
    finally:
        await plane.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    out = asyncio.run(_measure(args.groups, args.rounds))
    best = {v: min(xs) for v, xs in out.items()}
    for v, xs in out.items():
        print(f"{v:<10}{best[v]:>9.1f} µs  (rounds: {', '.join(f'{x:.1f}' for x in xs)})")
    for v in VARIANTS:
        if v != "merge-rv":
            print(f"{v}/merge-rv {best[v] / best['merge-rv']:.2f}")
    print(f"smp/smp-decoded {best['smp'] / best['smp-decoded']:.3f}")


if __name__ == "__main__":
    main()
