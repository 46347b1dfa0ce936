"""gang-1x1000-running-http's phase against ``gangplane serve`` variants, and its profile (a script).

    python bench/micro/serve_phase.py [--rounds 3] [--pyspy FILE] [-- SERVE FLAGS [-- SERVE FLAGS ...]]

Each variant (serve flags, ``--`` between variants; none: the scenario's serve as it is) starts
``gangplane serve`` as the scenario does (:func:`bench.workloads.serve.gangplane_serve`: the
1,000-node fleet, ``--no-scheduling-records``), waits until every node is schedulable, then
creates one 1,000-replica gang StatefulSet and follows the pods until all are Running. Printed
per run: the server's CPU seconds over that phase (``/proc/<pid>/stat``), the bench client's,
and the wall time; the variants alternate ``--rounds`` times and the median per variant closes.

``--pyspy FILE`` (first variant, first round) attaches ``py-spy record -f raw`` to the server
for the phase only (after the fleet's start, before the namespace's deletion), which is what
``gangplane bench`` cannot show: its profile would be mostly the fleet's registration.
Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import subprocess
import sys
import time
from typing import Any

NODES, RACKS, REPLICAS = 1000, 10, 1000


async def _phase(flags: list[str], pyspy: str) -> dict[str, float]:
    from bench.workloads.api import _client_from_kubeconfig, _cpu_seconds
    from bench.workloads.common import is_running
    from bench.workloads.serve import gangplane_serve
    from bench.workloads.statefulsets import fleet_doc, statefulset
    from bench.workloads.statefulsets_http import NAMESPACE, _ok, _wait_nodes, _watch

    async with (
        gangplane_serve(fleet_doc(NODES, RACKS), *flags) as served,
        _client_from_kubeconfig(served.kubeconfig) as http,
    ):
        await _wait_nodes(http, NODES)
        _ok(await http.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}}), "namespace")
        pods = f"/api/v1/namespaces/{NAMESPACE}/pods"
        rv = _ok(await http.get(pods), "list pods")["metadata"]["resourceVersion"]
        spy: subprocess.Popen[Any] | None = None
        if pyspy:
            cmd = [
                "py-spy",
                "record",
                "-r",
                "250",
                "-f",
                "raw",
                "-o",
                pyspy,
                "--pid",
                str(served.proc.pid),
            ]
            spy = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await asyncio.sleep(1.0)  # py-spy attached before the phase starts
        cpu0, client0, t0 = _cpu_seconds(served.proc.pid), time.process_time(), time.perf_counter()
        body = statefulset("gang-0", REPLICAS, True, "")
        _ok(await http.post(f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets", json=body), "create")
        running: set[str] = set()
        async for _etype, pod in _watch(http, pods, rv):
            if is_running(pod):
                running.add(pod["metadata"]["name"])
            if len(running) == REPLICAS:
                break
        wall = time.perf_counter() - t0
        cpu1, client1 = _cpu_seconds(served.proc.pid), time.process_time()
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
    assert cpu0 is not None and cpu1 is not None
    return {"server_cpu_s": cpu1 - cpu0, "client_cpu_s": client1 - client0, "all_running_s": wall}


def _split(argv: list[str]) -> tuple[list[str], list[list[str]]]:
    """(this script's arguments, the variants): the variants follow the first ``--``, separated
    by ``--``; an empty one is the scenario's serve as it is."""
    if "--" not in argv:
        return argv, [[]]
    k = argv.index("--")
    variants: list[list[str]] = [[]]
    for arg in argv[k + 1 :]:
        if arg == "--":
            variants.append([])
        else:
            variants[-1].append(arg)
    return argv[:k], variants


def main(argv: list[str] | None = None) -> None:
    own, variants = _split(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pyspy", default="", metavar="FILE", help="py-spy raw profile of the first run's phase")
    args = ap.parse_args(own)
    names = [" ".join(v) or "as the scenario" for v in variants]
    runs: dict[int, list[float]] = {i: [] for i in range(len(variants))}
    for r in range(args.rounds):
        order = list(range(len(variants)))
        for i in order if r % 2 == 0 else order[::-1]:
            got = asyncio.run(_phase(variants[i], args.pyspy if (r == 0 and i == 0) else ""))
            runs[i].append(got["server_cpu_s"])
            print(
                f"round {r + 1} [{names[i]}]: " + ", ".join(f"{k} {v:.2f}" for k, v in got.items()),
                flush=True,
            )
    for i, name in enumerate(names):
        print(f"[{name}] server CPU median {statistics.median(runs[i]):.2f} s over {len(runs[i])} runs")


if __name__ == "__main__":
    main()
