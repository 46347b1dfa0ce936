"""What one pod event costs the controller-manager's shared pod informer (a script, not a test):

    python -m bench.micro.informer_cpu [--pods 1000] [--revisions 4] [--rounds 5] [--only NAMES]

A plane with every kube-controller-manager controller ``gangplane serve`` runs (no node agent,
no scheduler) and one gang StatefulSet of ``--pods`` replicas (the gang bench's own body), whose
pods the StatefulSet controller creates. Then, for each pod, ``--revisions`` successive
revisions of the kind a running pod goes through (bound to a node, then status writes: phase,
conditions, IPs; a label now and then) are built up front and delivered straight into the shared
pod informer, as its watch would: the cache and its eight indices are updated and the eleven
controllers' handlers run (the garbage collector's graph, the StatefulSet controller's owner
lookup and work-queue add, the other controllers' filters). The watch delivery itself and the
controllers' syncs are left out (no await between events): only the per-event work of the
informer and its handlers is timed, in process CPU (``time.process_time``). ``--only`` starts
just the named controllers instead (``statefulset-controller,garbage-collector-controller``: the
controller-manager part of the gang benches' plane, 2 handlers and 3 indices).

Compare builds by alternating them (``PYTHONPATH=<tree> python -m bench.micro.informer_cpu``);
each round re-delivers the same revisions after putting the first ones back, so rounds are alike.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

import orjson

from apiserver.client.interface import NAMESPACES, PODS, STATEFULSETS
from bench.workloads.statefulsets import statefulset
from gangplane.controlplane import ControlPlane, default_components

NAMESPACE = "informer-cpu"


def _shared_pod_informer(cp: ControlPlane) -> Any:
    for comp in cp.components.values():
        factory = getattr(comp, "informers", None)
        for inf in factory.informers() if factory is not None else ():
            shared = getattr(inf, "shared", inf)
            if shared.gvr == PODS and not shared.field_selector:
                return shared
    raise RuntimeError("no shared pod informer")


def _revisions(pod: dict[str, Any], n: int, base_rv: int) -> list[dict[str, Any]]:
    """``n`` successive revisions of ``pod``: bound, then status writes (a label at the third)."""
    out = []
    cur = orjson.loads(orjson.dumps(pod))
    for k in range(n):
        cur = orjson.loads(orjson.dumps(cur))
        md, status = cur["metadata"], cur.setdefault("status", {})
        md["resourceVersion"] = str(base_rv + k)
        if k == 0:
            cur["spec"]["nodeName"] = f"node-{base_rv % 97}"
            status["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        elif k == 2:
            md["labels"] = {**md.get("labels", {}), "step": str(k)}
        else:
            status["phase"] = "Running" if k > 1 else "Pending"
            status["podIP"] = f"10.0.{k}.{base_rv % 250}"
            status["conditions"] = [*status.get("conditions", []), {"type": f"C{k}", "status": "True"}]
        out.append(cur)
    return out


async def run(pods: int, revisions: int, rounds: int, only: str = "") -> None:
    cp = ControlPlane()
    names = [n for n in default_components(cp, controllers="*,-nodeagent") if n != "scheduler"]
    if only:
        names = [n for n in names if n in only.split(",")]
    await cp.start(names)
    client = cp.client("bench")
    await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    )
    await client.create(STATEFULSETS, statefulset("gang", pods, True, ""), NAMESPACE)
    inf = _shared_pod_informer(cp)
    while len(inf.list(NAMESPACE)) < pods:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # let the controllers settle (creates, status)
    firsts = [orjson.loads(orjson.dumps(p)) for p in inf.list(NAMESPACE)]
    rv = 10**9
    revs: list[list[dict[str, Any]]] = []
    for p in firsts:
        revs.append(_revisions(p, revisions, rv))
        rv += revisions
    events = [r[k] for k in range(revisions) for r in revs]  # pod after pod, revision after revision
    print(
        f"shared pod informer: {inf.handler_count()} handlers, {len(inf._indices)} indices; "
        f"{len(events)} events per round"
    )
    gc.collect()
    gc.freeze()
    per_event = []
    for r in range(rounds):
        for p in firsts:
            inf._upsert(p)
        start = time.process_time()
        for ev in events:
            inf._upsert(ev)
        spent = time.process_time() - start
        per_event.append(spent * 1e6 / len(events))
        print(f"round {r}: {per_event[-1]:.2f} us CPU per event")
        await asyncio.sleep(0)
    per_event.sort()
    print(f"median {per_event[len(per_event) // 2]:.2f} us CPU per event, min {per_event[0]:.2f}")
    await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--revisions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated controllers to start (default: all)")
    args = ap.parse_args()
    asyncio.run(run(args.pods, args.revisions, args.rounds, args.only))


if __name__ == "__main__":
    main()
