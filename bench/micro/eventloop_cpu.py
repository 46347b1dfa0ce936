"""Process CPU of the plane's loop-heavy paths under asyncio's loop and under uvloop (a script).

    python bench/micro/eventloop_cpu.py [--writes 600] [--watchers 4] [--rounds 3]

``gangplane serve --event-loop`` picks the loop (gangplane/eventloop.py). Two measurements, each
run in a child process per loop, the loops alternating ``--rounds`` times:

* ``update path``: :mod:`bench.micro.update_path`'s four writes (each LocalClient call yields to
  the loop once), µs of CPU per write;
* ``watched writes``: pod status updates while ``--watchers`` read-only watches (a plane's
  informers: one task woken per event each) consume every event, µs of CPU per write.

Printed is the minimum over rounds per loop and the ratio uvloop/asyncio. Numbers go in
docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time
from typing import Any

LOOPS = ("asyncio", "uvloop")


async def _watched_writes(writes: int, watchers: int) -> float:
    """CPU µs per pod status update with ``watchers`` read-only pod watches draining every event."""
    from apiserver.client.interface import NODES, PODS
    from bench.micro.update_path import NS, _pod, _running
    from bench.workloads.common import node
    from gangplane.controlplane import ControlPlane, tune_gc

    plane = ControlPlane()
    try:
        c = plane.client("bench")
        await c.create(NODES, node(0))
        pods = [await c.create(PODS, _pod(i, f"uid-{i}"), NS) for i in range(writes)]
        for p in pods:
            binding = {
                "metadata": {"name": p["metadata"]["name"]},
                "target": {"kind": "Node", "name": "node-00000"},
            }
            await c.create_subresource(PODS, p["metadata"]["name"], "binding", binding, NS)
        pods = [await c.get(PODS, p["metadata"]["name"], NS) for p in pods]
        bodies = [_running(p, i) for i, p in enumerate(pods)]
        rv = pods[-1]["metadata"]["resourceVersion"]
        seen = [0] * watchers
        done = asyncio.Event()

        async def consume(k: int) -> None:
            async for _ev in c.watch(PODS, NS, resource_version=rv, read_only=True):
                seen[k] += 1
                if seen[k] == writes and all(n == writes for n in seen):
                    done.set()

        tasks = [asyncio.create_task(consume(k)) for k in range(watchers)]
        await asyncio.sleep(0.05)
        gc.collect()
        tune_gc()
        t = time.process_time()
        for b in bodies:
            await c.update_status(PODS, b, NS)
        await done.wait()
        cpu = time.process_time() - t
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return cpu / writes * 1e6
    finally:
        await plane.stop()


async def _measure(writes: int, watchers: int) -> dict[str, float]:
    from bench.micro.update_path import _measure as update_path

    out = {f"update path {k}": v for k, v in (await update_path(writes)).items()}
    out["watched writes"] = await _watched_writes(writes, watchers)
    return out


def _child(loop: str, writes: int, watchers: int) -> dict[str, float]:
    from gangplane import eventloop

    result: dict[str, float] = eventloop.run(_measure(writes, watchers), eventloop.resolve(loop))
    return result


def _alternate(rounds: int, writes: int, watchers: int) -> None:
    here = os.path.abspath(__file__)
    runs: dict[str, list[dict[str, Any]]] = {loop: [] for loop in LOOPS}
    for r in range(rounds):
        for loop in LOOPS if r % 2 == 0 else LOOPS[::-1]:
            res = subprocess.run(
                [sys.executable, here, "--child", loop, "--writes", str(writes), "--watchers", str(watchers)],
                check=True,
                capture_output=True,
                text=True,
                timeout=900,
            )
            runs[loop].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {loop}: {runs[loop][-1]}", file=sys.stderr)
    print(f"{'path':<26}{'asyncio µs':>12}{'uvloop µs':>12}{'uv/asyncio':>12}")
    for key in runs["asyncio"][0]:
        a = min(x[key] for x in runs["asyncio"])
        u = min(x[key] for x in runs["uvloop"])
        print(f"{key:<26}{a:>12.1f}{u:>12.1f}{u / a:>12.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=600)
    ap.add_argument("--watchers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", choices=LOOPS, help="measure under this loop once, print one JSON line")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.writes, args.watchers)))
        return
    _alternate(args.rounds, args.writes, args.watchers)


if __name__ == "__main__":
    main()
