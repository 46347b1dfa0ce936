"""What a gang set's second, writing-nothing StatefulSet sync costs once its pods are bound
(a script, not a test):

    python bench/micro/stsecho_cpu.py [--sets 300] [--replicas 3] [--rounds 5]

In ``gangs-1000x3`` each set is synced twice: the first sync writes its ControllerRevision,
Workload, PodGroup, pods and status; by the second, the scheduler has bound the pods
(``pods/binding``: new pod versions, ``spec.nodeName`` and the PodScheduled condition) and
written the PodGroup's ``PodGroupScheduled`` condition, and the sync writes nothing.
:mod:`bench.micro.stsgang_cpu`'s second sync sees the pods as created instead. This script
runs the StatefulSet controller alone (its work queue cut off), drives the first sync of every
set, then binds each pod and patches each PodGroup's status as the scheduler does, waits for the
informers, and times the second syncs (process CPU, the collector off; every second sync must
make no API call). One fresh namespace per round.

Compare trees by alternating them, running this file by path from a neutral directory with
``PYTHONPATH=<tree>``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time

from apiserver.client.interface import NAMESPACES, PODGROUPS, PODS, STATEFULSETS
from bench.workloads.common import start_plane
from bench.workloads.statefulsets import statefulset

STRATEGIC = "application/strategic-merge-patch+json"


async def _until(check: object, what: str) -> None:
    for _ in range(10_000):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise RuntimeError(f"timed out waiting for {what}")


async def run(sets: int, replicas: int, rounds: int, bind: bool = True) -> list[float]:
    cp = await start_plane(["statefulset-controller"])
    ctrl = cp.components["statefulset-controller"]
    ctrl.enqueue = lambda *a, **k: None
    ctrl.enqueue_after = lambda *a, **k: None
    hook = ctrl.scheduling_hook
    client = cp.client("bench")
    out = []
    for r in range(rounds):
        ns = f"stsecho-{r}"
        await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for i in range(sets):
            await client.create(STATEFULSETS, statefulset(f"g{i}", replicas, True, ""), ns)
        await _until(lambda: len(ctrl.sets.list(ns)) >= sets, "sets")  # noqa: B023
        keys = [f"{ns}/g{i}" for i in range(sets)]
        for key in keys:
            await ctrl.sync(key)
        await _until(lambda: len(hook.pod_groups.list(ns)) >= sets, "pod groups")  # noqa: B023
        # the scheduler's part: the PodGroup's condition, then the bindings
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for pg in hook.pod_groups.list(ns):
            cond = {
                "type": "PodGroupScheduled",
                "status": "True",
                "reason": "Scheduled",
                "message": "",
                "lastTransitionTime": now,
            }
            await client.patch(
                PODGROUPS,
                pg["metadata"]["name"],
                {"status": {"conditions": [cond]}},
                ns,
                patch_type=STRATEGIC,
                subresource="status",
            )
        for n, pod in enumerate(ctrl.pods.list(ns) if bind else []):
            md = pod["metadata"]
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": md["name"], "namespace": ns, "uid": md["uid"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": f"node-{n}"},
            }
            await client.create_subresource(PODS, md["name"], "binding", binding, ns)

        def bound() -> bool:
            pods = ctrl.pods.list(ns)  # noqa: B023
            return (
                len(pods) >= sets * replicas
                and not bind
                or all((p.get("spec") or {}).get("nodeName") for p in pods)
            )

        await _until(bound, "bindings")
        await ctrl.recorder.flush()
        await asyncio.sleep(0.05)
        calls = ctrl.client.calls
        gc.collect()
        gc.disable()
        start = time.process_time()
        for key in keys:
            await ctrl.sync(key)
        spent = time.process_time() - start
        gc.enable()
        if ctrl.client.calls != calls:
            raise RuntimeError("a second sync made an API call")
        out.append(spent * 1e6 / sets)
        print(f"round {r}: second sync {out[-1]:.1f} us CPU per set")
    await cp.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sets", type=int, default=300)
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--no-bind", action="store_true", help="leave the pods unbound (the PodGroup still patched)"
    )
    args = ap.parse_args()
    got = asyncio.run(run(args.sets, args.replicas, args.rounds, not args.no_bind))
    print(f"second sync: median {statistics.median(got):.1f} us CPU per set (min {min(got):.1f})")


if __name__ == "__main__":
    main()
