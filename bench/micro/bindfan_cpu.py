"""A gang pod's ``pods/binding`` write and its fan-out to the gang benches' pod watches (a script):

    python -m bench.micro.bindfan_cpu [--pods 6000] [--rounds 1] [--trees BASE .]

A bare plane (no components: nothing acts on the writes) holds ``--pods`` pods shaped as the gang
benches' StatefulSet pods (two owners, a PodGroup, the default tolerations, the controller's
managedFields entry), watched by the three pod informers the gang benches run, each
``read_only`` as every component's: the scheduler's (``status.phase`` field selector, so the
server checks both revisions of every write), the controller-manager's (no selector) and the
bench tracker's (one namespace). Then every pod is bound through the in-process client
(``create_subresource(..., "binding", ...)``, the scheduler's call), ``--batch`` at once as the
scheduler's binding tasks of one gang (3: gangs-1000x3; 1000 stands for gangs-10x5000's 5,000), and the clock runs until
every informer holds the last bound pod: the server's write (``bind``, the store's stamp, the
watch cache) and each watch's delivery (wake-up, drain, the shared decoded revision, the
informer's cache) are timed, in process CPU (``time.process_time``) per binding.

Prints, per tree, CPU µs per binding and a digest of what a client sees: every stored pod with
its volatile fields (uid, resourceVersion, times) masked, the binding answers, and what each
informer's handlers received in order. Two builds that behave alike print the same digest.
``--trees`` alternates source trees (``PYTHONPATH``) in fresh processes, ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from gangplane.controlplane import GC_THRESHOLD  # the plane's own collector thresholds

NAMESPACE = "bindfan"
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"


def gang_pod(i: int, size: int = 3) -> dict[str, Any]:
    """The body the StatefulSet controller creates for pod ``i`` (of gang sets of ``size``)."""
    set_name, member = f"gang-{i // size}", i % size
    group = f"{set_name}-pg"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{set_name}-{member}",
            "generateName": f"{set_name}-",
            "labels": {
                "app": set_name,
                "statefulset.kubernetes.io/pod-name": f"{set_name}-{member}",
                "apps.kubernetes.io/pod-index": str(member),
                "controller-revision-hash": f"{set_name}-6dcdd4dc6c",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": set_name,
                    "uid": f"00000000-0000-0000-0000-{i // size:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "name": group,
                    "uid": f"11111111-0000-0000-0000-{i // size:012d}",
                },
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m"}},
                }
            ],
            "hostname": f"{set_name}-{member}",
            "subdomain": set_name,
        },
    }


def _masked(obj: Any) -> Any:
    """``obj`` without what differs between two runs of one build (uids, revisions, times)."""
    if isinstance(obj, dict):
        return {
            k: "*"
            if k in ("uid", "resourceVersion", "creationTimestamp", "time", "lastTransitionTime")
            else _masked(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [_masked(v) for v in obj]
    return obj


async def _child(pods: int, batch: int) -> dict[str, Any]:
    size = max(batch, 3)  # a batch binds one gang set's pods
    import orjson

    from apiserver.client.informer import Informer
    from apiserver.client.interface import NAMESPACES, PODS
    from gangplane.controlplane import ControlPlane

    cp = ControlPlane()
    client = cp.client("bench")
    await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    )
    seen: list[list[Any]] = []
    informers = []
    for namespace, selector in (("", NON_TERMINAL_PODS), ("", ""), (NAMESPACE, "")):
        inf = Informer(cp.client(), PODS, namespace, field_selector=selector)
        log: list[Any] = []
        seen.append(log)
        # the objects handed out are read-only and never change: kept as they come, hashed after
        inf.add_event_handler(lambda o: None, lambda old, new, log=log: log.append(new), lambda o: None)
        inf.start()
        informers.append(inf)
    for inf in informers:
        await inf.wait_for_sync()
    for i in range(pods):
        await client.create(PODS, gang_pod(i, size), NAMESPACE, field_manager="statefulset-controller")
    names = [gang_pod(i, size)["metadata"]["name"] for i in range(pods)]
    while any(len(inf) < pods for inf in informers):
        await asyncio.sleep(0)
    answers = []
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)  # the plane's (``gangplane.controlplane.tune_gc``)
    t = time.process_time()

    async def one(i: int) -> Any:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": names[i], "namespace": NAMESPACE},
            "target": {"apiVersion": "v1", "kind": "Node", "name": f"node-{i % 5000}"},
        }
        return await client.create_subresource(PODS, names[i], "binding", body, NAMESPACE)

    for first in range(0, pods, batch):
        if batch == 1:
            answers.append(await one(first))
        else:  # the scheduler's binding tasks of one gang, each its own task
            answers.extend(await asyncio.gather(*(one(i) for i in range(first, min(first + batch, pods)))))
    last = names[-1]
    want = set(informers)
    while want:
        for inf in list(want):
            got = inf.get_by_name(NAMESPACE, last)
            if got is not None and got["spec"].get("nodeName"):
                want.discard(inf)
        await asyncio.sleep(0)
    cpu = time.process_time() - t
    h = hashlib.sha256()
    stored = await client.list(PODS, NAMESPACE)
    for p in stored["items"]:
        h.update(orjson.dumps(_masked(p), option=orjson.OPT_SORT_KEYS))
    h.update(orjson.dumps(answers))
    for log in seen:
        h.update(b"|".join(orjson.dumps(_masked(o), option=orjson.OPT_SORT_KEYS) for o in log))
    for inf in informers:
        await inf.stop()
    await cp.stop()
    return {"us_per_binding": cpu / pods * 1e6, "digest": h.hexdigest()[:12]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", type=int, default=6000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--batch", type=int, default=3, help="bindings issued at once (a gang's members)")
    ap.add_argument("--trees", nargs="*", default=[], help="source trees to alternate (PYTHONPATH)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child or not a.trees:
        out = asyncio.run(_child(a.pods, a.batch))
        print(
            json.dumps(out)
            if a.child
            else f"{out['us_per_binding']:.2f} µs CPU per binding  digest {out['digest']}"
        )
        return
    results: dict[str, list[float]] = {tree: [] for tree in a.trees}
    for r in range(a.rounds):
        for tree in a.trees if r % 2 == 0 else list(reversed(a.trees)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), GANGPLANE_CACHE_MUTATION_DETECTOR="")
            cmd = [
                sys.executable,
                os.path.abspath(__file__),
                "--child",
                "--pods",
                str(a.pods),
                "--batch",
                str(a.batch),
            ]
            got = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
            results[tree].append(got["us_per_binding"])
            print(
                f"round {r} {tree}: {got['us_per_binding']:.2f} µs per binding  digest {got['digest']}",
                flush=True,
            )
    for tree, xs in results.items():
        print(
            f"{tree}: median {statistics.median(xs):.2f} µs  min {min(xs):.2f}  max {max(xs):.2f}  (n={len(xs)})"
        )


if __name__ == "__main__":
    main()
