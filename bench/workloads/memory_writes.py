"""Memory under many writes to one object: bounded by the watch history window, not by revisions.

One ConfigMap is patched ``writes`` times (issue #13's acceptance: 200,000). The resident set is
read after a full collection at the start, halfway and at the end; with a history bounded by
count, age or bytes the second half adds (almost) nothing, since the window is full after the
first revisions and old ones drop out as new ones arrive. ``components: true`` also runs every
shipped controller beside the API (their informers see every revision).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from apiserver.client.interface import CONFIGMAPS
from bench.results import Metric
from bench.workloads.common import Env
from bench.workloads.memory import settled_rss_mb

METRICS = {
    "rss_growth_mb": Metric("MB", False),
    "rss_growth_last_half_mb": Metric("MB", False),
    "writes_per_s": Metric("writes/s", True),
}
PARAMS = {"writes": 200000, "value_bytes": 64, "components": False}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from controllers.fleet import Fleet
    from gangplane.controlplane import ControlPlane, default_components

    writes, size = int(params.get("writes", 200000)), int(params.get("value_bytes", 64))
    cp = ControlPlane()
    if params.get("components", False):
        await cp.start(default_components(cp, Fleet.empty(), "*"))
    client = cp.client("bench")
    await client.create(CONFIGMAPS, {"metadata": {"name": "hot"}, "data": {"v": ""}}, "default")
    base = settled_rss_mb()
    half = base
    t0 = time.perf_counter()
    for i in range(writes):
        value = str(i).rjust(size, "x")
        await client.patch(CONFIGMAPS, "hot", {"data": {"v": value}}, "default")
        if i == writes // 2:
            half = settled_rss_mb()
            env.progress(f"{i} writes")
        elif i % 5000 == 0:
            await asyncio.sleep(0)
    elapsed = time.perf_counter() - t0
    end = settled_rss_mb()
    await cp.stop()
    return {
        "rss_growth_mb": end - base,
        "rss_growth_last_half_mb": end - half,
        "writes_per_s": writes / elapsed,
    }
