"""DRA sharing (issue 9): a gang PodGroup of N pods sharing one ResourceClaim vs N pod-scoped claims.

The measurement is :func:`bench.bench_dra.run` (also runnable as ``python bench/bench_dra.py``):
seconds from the first pod create until a watch saw every pod bound, and the API writes the
ResourceClaim controller and the scheduler made.
"""

from __future__ import annotations

from typing import Any

from bench.bench_dra import run as run_variant
from bench.results import Metric
from bench.workloads.common import Env

METRICS = {
    "shared_bound_s": Metric("s", False),
    "pod_scoped_bound_s": Metric("s", False),
    "shared_api_writes": Metric("writes", False),
    "pod_scoped_api_writes": Metric("writes", False),
}
PARAMS = {"pods": 64}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    pods = int(params.get("pods", 64))
    out: dict[str, float] = {}
    for variant, key in (("shared", "shared"), ("pod-scoped", "pod_scoped")):
        secs, ctrl, sched, _claims = await run_variant(variant, pods)
        env.count_pods(pods)  # cpu_s covers the whole repetition: run_variant builds and times its plane
        env.progress(f"{variant}: {secs:.2f} s")
        out[f"{key}_bound_s"] = secs
        out[f"{key}_api_writes"] = float(sum(ctrl.values()) + sum(sched.values()))
    return out
