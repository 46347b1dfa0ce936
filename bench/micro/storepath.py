"""CPU per operation of the storage and fan-out path, alternating two source trees.

What each write costs after validation, and what each Event costs on the client side, on a bare
in-process API server (no controllers, no scheduler: only what is measured runs):

* ``store``: N creates, then N updates, then N deletes of Event-sized objects straight into the
  in-memory storage (stamp, serialization, the watch cache's index and history), no watcher;
* ``watched``: N pod creates through the in-process client while K shared-informer-style
  informers (``read_only`` list + watch, as every component's) watch pods; the clock stops when
  every informer holds all N pods, so storage, watch cache, fan-out and informer upserts count;
* ``updates``: N pod label updates (GET + PUT) with the same K informers watching;
* ``bindings``: N ``pods/binding`` writes (the pods created beforehand), the K informers watching;
* ``events``: N Events through an ``EventRecorder`` (a kubelet's three per pod: ``Pulled``,
  ``Created``, ``Started``), flushed: correlator, queue, client and server write;
* ``correlate``: the same N Events through the ``EventCorrelator`` alone.

``time.process_time`` per operation, in µs. Each round runs every tree once in a fresh process
(``PYTHONPATH`` set to the tree), alternating, so the load of a shared machine falls on both::

    python bench/micro/storepath.py --trees /work/tmp/base-4d5f143 . --rounds 5 [-n 3000] [-k 6]

Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

SCENARIOS = ("store", "watched", "updates", "bindings", "events", "correlate")


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "x", "idx": str(i)}},
        "spec": {
            "schedulerName": "none",
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
            ],
        },
    }


async def _child(scenario: str, n: int, k: int) -> float:
    """CPU seconds of ``n`` operations of ``scenario`` in this process."""
    from apiserver.client.eventcorrelator import EventCorrelator
    from apiserver.client.events import EventRecorder, object_reference
    from apiserver.client.informer import Informer
    from apiserver.client.interface import PODS
    from gangplane.controlplane import ControlPlane

    if scenario == "store":
        from apiserver.storage.memory import MemoryStorage

        st = MemoryStorage()
        skey = ("", "events")
        bodies = [
            {
                "kind": "Event",
                "metadata": {"name": f"p{i}.{i:x}", "namespace": f"ns{i % 7}"},
                "involvedObject": {"kind": "Pod", "name": f"p{i}", "namespace": f"ns{i % 7}"},
                "reason": "Started",
                "message": "Started container c",
                "count": 1,
            }
            for i in range(n)
        ]
        keys = [(b["metadata"]["namespace"], b["metadata"]["name"]) for b in bodies]
        gc.collect()
        t = time.process_time()
        for key, b in zip(keys, bodies, strict=True):
            st.create(skey, key, b)
        for key, b in zip(keys, bodies, strict=True):
            st.update(skey, key, dict(b, count=2))
        for key in keys:
            st.delete(skey, key)
        return (time.process_time() - t) / 3

    if scenario == "correlate":
        corr = EventCorrelator("kubelet", "n1")
        refs = [
            object_reference(
                {
                    "kind": "Pod",
                    "apiVersion": "v1",
                    "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                }
            )
            for i in range(n // 3 + 1)
        ]
        names = [f"e{j}" for j in range(n)]
        reasons = ("Pulled", "Created", "Started")
        gc.collect()
        t = time.process_time()
        for j in range(n):
            corr.correlate(refs[j // 3], "Normal", reasons[j % 3], "m", 1e9 + j, lambda j=j: names[j])
        return time.process_time() - t

    cp = ControlPlane()
    c = cp.client()
    informers = []
    for _ in range(k if scenario in ("watched", "updates", "bindings") else 0):
        inf = Informer(cp.client(), PODS)
        inf.add_event_handler(lambda o: None, lambda a, b: None, lambda o: None)
        inf.start()
        informers.append(inf)
    for inf in informers:
        await inf.wait_for_sync()
    try:
        if scenario in ("updates", "bindings"):
            for i in range(n):
                await c.create(PODS, _pod(i), "default")
            while any(len(inf) < n for inf in informers):
                await asyncio.sleep(0)
        gc.collect()
        t = time.process_time()
        if scenario == "watched":
            for i in range(n):
                await c.create(PODS, _pod(i), "default")
            while any(len(inf) < n for inf in informers):
                await asyncio.sleep(0)
        elif scenario == "updates":
            for i in range(n):
                p = await c.get(PODS, f"p{i}", "default")
                p["metadata"]["labels"]["v"] = "2"
                await c.update(PODS, p, "default")
            want = {inf: 0 for inf in informers}
            while want:
                for inf in list(want):
                    got = inf.get_by_name("default", f"p{n - 1}")
                    if got is not None and got["metadata"]["labels"].get("v") == "2":
                        del want[inf]
                await asyncio.sleep(0)
        elif scenario == "bindings":
            for i in range(n):
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": f"p{i}", "namespace": "default"},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": f"n{i % 50}"},
                }
                await c.create_subresource(PODS, f"p{i}", "binding", body, "default")
            want = set(informers)
            while want:
                for inf in list(want):
                    got = inf.get_by_name("default", f"p{n - 1}")
                    if got is not None and got["spec"].get("nodeName"):
                        want.discard(inf)
                await asyncio.sleep(0)
        elif scenario == "events":
            rec = EventRecorder(c, "kubelet", "n1")
            for i in range(n // 3 + 1):
                ref = {
                    "kind": "Pod",
                    "namespace": "default",
                    "name": f"p{i}",
                    "uid": f"u{i}",
                    "apiVersion": "v1",
                }
                for reason in ("Pulled", "Created", "Started"):
                    rec.event_ref(ref, "Normal", reason, f"{reason} container c")
            await rec.flush()
            await rec.stop()
        return time.process_time() - t
    finally:
        for inf in informers:
            await inf.stop()
        await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", nargs="+", default=["."], help="source trees to alternate (PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-n", type=int, default=3000, help="operations per scenario")
    ap.add_argument("-k", type=int, default=6, help="informers watching pods")
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    ap.add_argument("--child", choices=SCENARIOS, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        cpu = asyncio.run(_child(a.child, a.n, a.k))
        print(json.dumps({"us_per_op": cpu / a.n * 1e6}))
        return
    results: dict[tuple[str, str], list[float]] = {}
    for r in range(a.rounds):
        for tree in a.trees if r % 2 == 0 else list(reversed(a.trees)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), GANGPLANE_CACHE_MUTATION_DETECTOR="")
            for s in a.scenarios:
                cmd = [sys.executable, __file__, "--child", s, "-n", str(a.n), "-k", str(a.k)]
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
                us = json.loads(out.strip().splitlines()[-1])["us_per_op"]
                results.setdefault((s, tree), []).append(us)
                print(f"round {r} {s:10s} {tree}: {us:8.1f} µs/op", flush=True)
    print(
        f"\n{'scenario':10s} " + " ".join(f"{t[-24:]:>26s}" for t in a.trees) + "   (min / median µs per op)"
    )
    for s in a.scenarios:
        cells = []
        for tree in a.trees:
            v = results[(s, tree)]
            cells.append(f"{min(v):10.1f} / {statistics.median(v):10.1f}")
        ratio = ""
        if len(a.trees) == 2:
            ratio = f"   new/base {min(results[(s, a.trees[1])]) / min(results[(s, a.trees[0])]):.2f}"
        print(f"{s:10s} " + " ".join(f"{c:>26s}" for c in cells) + ratio)


if __name__ == "__main__":
    main()
