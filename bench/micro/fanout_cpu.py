"""What one pod write costs the controller-manager's informers (a script, not a test):

    python -m bench.micro.fanout_cpu [--pods 2000] [--rounds 3]

A plane with every kube-controller-manager controller ``gangplane serve`` runs (no node agent, no
scheduler: those are binaries of their own) and no nodes. Bare pods (no owner, no Service, so no
controller acts on them; their handlers still run) are created, then each is updated once (a
label), and the clock runs until every controller's pod informer has delivered the last write.
The same phase is then timed with the controllers stopped, so ``fanout_us_per_write`` is what
the informers add to a pod write: the watch fan-out, the caches and indices, the handlers.

Prints process CPU (``time.process_time``); compare builds by alternating them
(``PYTHONPATH=<tree> python -m bench.micro.fanout_cpu``, which runs against a tree without
shared informers too: the count of pod watches tells the two apart).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from apiserver.client.interface import NAMESPACES, PODS, Client
from gangplane.controlplane import ControlPlane, default_components

NAMESPACE = "fanout"


def _pod(i: int) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{i}", "labels": {"app": "fanout"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def _pod_informers(cp: ControlPlane) -> list[Any]:
    out: list[Any] = []
    for comp in cp.components.values():
        factory = getattr(comp, "informers", None)
        if factory is not None:
            out.extend(inf for inf in factory.informers() if inf.gvr == PODS)
    return out


async def _caught_up(infs: list[Any], rv: str) -> None:
    while any(getattr(inf, "resource_version", "") != rv for inf in infs):
        await asyncio.sleep(0.001)


async def _phase(client: Client, cp: ControlPlane, first: int, n: int) -> float:
    infs = _pod_informers(cp)
    start = time.process_time()
    rv = ""
    for i in range(first, first + n):
        await client.create(PODS, _pod(i), NAMESPACE)
    for i in range(first, first + n):
        out = await client.patch(PODS, f"p-{i}", {"metadata": {"labels": {"step": "2"}}}, NAMESPACE)
        rv = out["metadata"]["resourceVersion"]
    await _caught_up(infs, rv)
    return time.process_time() - start


async def run(pods: int, rounds: int) -> None:
    cp = ControlPlane()
    names = [n for n in default_components(cp, controllers="*,-nodeagent") if n != "scheduler"]
    await cp.start(names)
    client = cp.client("bench")
    await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    )
    watches = len(_pod_informers(cp))
    distinct = len({id(getattr(inf, "shared", inf)) for inf in _pod_informers(cp)})
    gc.collect()
    gc.freeze()
    first = 0
    for r in range(rounds):
        with_ctrl = await _phase(client, cp, first, pods)
        first += pods
        await cp.stop_components()
        without = await _phase(client, cp, first, pods)
        first += pods
        await cp.start(names)
        writes = 2 * pods
        print(
            f"round {r}: pod informers {watches} (distinct {distinct}), with controllers "
            f"{with_ctrl * 1e6 / writes:.1f} us/write, without {without * 1e6 / writes:.1f} us/write, "
            f"fanout_us_per_write {(with_ctrl - without) * 1e6 / writes:.1f}"
        )
    await cp.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    asyncio.run(run(args.pods, args.rounds))


if __name__ == "__main__":
    main()
