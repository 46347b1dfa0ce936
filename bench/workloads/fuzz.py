"""The long fuzz run: 10,000+ hostile requests against a fresh ``gangplane serve``.

The same request grammar as the suite's property test (:mod:`bench.hostile`), driven by a
seeded PRNG instead of hypothesis and allowed the heavy values the suite leaves out (60,000-item
lists, 20,000-deep nesting, 400 KB strings). It reports how many requests went out, the
status-code histogram (``status_<code>``, the regression seeds of
:mod:`bench.hostile.regressions` included; they go first and ``regression_seeds`` counts them; ``status_dropped``, ``status_stalled`` and
``status_refused`` for no answer), the 5xx kube itself would answer (``kube_5xx``), the
unexpected 5xx (``unexpected_5xx``) and every wrong answer (``unexpected``: those plus dropped
connections and stalls; both must be 0, each is printed with its request), whether the reference objects survived (``reference_damage``) and the
latency spread (a request that holds the event loop for seconds shows in ``max_ms``).

``clients`` connections (default 4) send at once, each drawing from its own seed, so hostile
requests also meet each other's writes on the same objects. ``backend: sqlite`` serves from a ``--data-dir``, so hostile objects also go through the
SQLite store's encoding. The server runs with plain HTTP, its bearer token and an empty fleet; it is never a
``--kubeconfig`` target (``http: false``): this is not something to point at a real cluster.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.hostile import requests as rq
from bench.hostile.choices import RandomChooser
from bench.hostile.session import FuzzSession, token_from_kubeconfig
from bench.results import Metric
from bench.workloads.common import Env, percentile
from bench.workloads.serve import gangplane_serve

METRICS = {
    "requests": Metric("requests", True),
    "requests_per_s": Metric("requests/s", True),
    "regression_seeds": Metric("requests", True),
    "unexpected_5xx": Metric("responses", False),
    "unexpected": Metric("responses", False),
    "kube_5xx": Metric("responses", False),
    "reference_damage": Metric("objects", False),
    "p50_ms": Metric("ms", False),
    "p99_ms": Metric("ms", False),
    "max_ms": Metric("ms", False),
}
PARAMS = {"requests": 10_000, "seed": 1, "heavy": True, "clients": 4, "backend": "memory"}
#: how many unexpected answers are printed in full (all are counted)
SHOWN = 20


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    n = int(params.get("requests", 10_000))
    seed = int(params.get("seed", 1))
    heavy = bool(params.get("heavy", True))
    clients = int(params.get("clients", 4))
    backend = str(params.get("backend", "memory"))
    if backend not in ("memory", "sqlite"):
        raise ValueError(f"fuzz: backend must be memory or sqlite, got {backend!r}")
    flags = ["--no-tls", *(["--data-dir", "data"] if backend == "sqlite" else [])]
    async with gangplane_serve(None, *flags) as served:
        token = token_from_kubeconfig(served.kubeconfig.read_text())
        out = await asyncio.to_thread(fuzz_server, served.url, token, n, seed, heavy, env.progress, clients)
        if served.proc.returncode is not None:
            out["server_exited"] = 1.0
        return out


def fuzz_server(
    url: str,
    token: str,
    n: int,
    seed: int,
    heavy: bool,
    progress: Callable[[str], None] = lambda _m: None,
    clients: int = 1,
) -> dict[str, float]:
    """Set up, send ``n`` hostile requests from ``seed`` to the server at ``url`` over ``clients``
    concurrent connections (client ``i`` draws from ``seed + i``), check the damage; the metrics
    of :data:`METRICS` plus the status histogram."""
    session = FuzzSession(url, token)
    try:
        session.setup()
        shown = [0]
        for finding in session.check_regressions():
            shown[0] += 1
            print(f"fuzz: regression seed failed #{shown[0]}: {finding}\n", file=sys.stderr)

        def client(i: int) -> None:
            c = RandomChooser(seed + i, heavy=heavy)
            for j in range(i, n, clients):
                finding = session.check(rq.request(c, session.world))
                if finding is not None and shown[0] < SHOWN:
                    shown[0] += 1
                    print(f"fuzz: unexpected answer #{shown[0]}: {finding}\n", file=sys.stderr)
                if j % 500 == 0:
                    progress(f"{j}/{n} requests, {len(session.tally.findings)} unexpected")

        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            for f in [pool.submit(client, i) for i in range(clients)]:
                f.result()
        elapsed = time.perf_counter() - started
        damage = session.damage()
        for d in damage:
            print(f"fuzz: damage: {d}", file=sys.stderr)
        t = session.tally
        secs = t.seconds
        out = {
            "requests": float(t.requests - t.by_aspect["regression"]),
            "regression_seeds": float(t.by_aspect["regression"]),
            "requests_per_s": (t.requests - t.by_aspect["regression"]) / elapsed,
            "unexpected_5xx": float(sum(1 for f in t.findings if f.response.status >= 500)),
            "unexpected": float(len(t.findings)),
            "kube_5xx": float(sum(t.kube_5xx.values())),
            "reference_damage": float(len(damage)),
            "p50_ms": percentile(secs, 50) * 1000,
            "p99_ms": percentile(secs, 99) * 1000,
            "max_ms": max(secs) * 1000,
        }
        for code, count in sorted(t.codes.items()):
            out[f"status_{code}"] = float(count)
        return out
    finally:
        session.close()
