"""KEP-6277's scale lifecycle at size: create at 3 → 5 → 0 → 5 (scaled by ``replicas``/5).

With the node agent running the pods, each step is timed until the StatefulSet converges: all
wanted pods Running (scale up) or none left (scale to zero). ``replicas: 1000`` gives
600 → 1,000 → 0 → 1,000.
"""

from __future__ import annotations

import time
from typing import Any

from apiserver.client.interface import STATEFULSETS
from bench.results import Metric
from bench.workloads.common import Env, PodCounter, is_running
from bench.workloads.statefulsets import fleet_doc, statefulset

METRICS = {
    "create_s": Metric("s", False),
    "scale_up_s": Metric("s", False),
    "scale_to_zero_s": Metric("s", False),
    "scale_back_s": Metric("s", False),
}
PARAMS = {"replicas": 1000, "nodes": 200, "racks": 10}


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from controllers.fleet import parse_fleet
    from gangplane.controlplane import ControlPlane, default_components

    full = int(params.get("replicas", 1000))
    first = max(1, full * 3 // 5)
    cp = ControlPlane()
    fleet = parse_fleet(fleet_doc(int(params.get("nodes", 200)), int(params.get("racks", 10))))
    # every component gangplane serve runs, the node agent first (as serve starts them)
    await cp.start(default_components(cp, fleet, "*"))
    client = cp.client("bench")
    sts = statefulset("db", first, True, "", cpu="100m")
    running = PodCounter(client, "default", first, is_running)
    await running.start()
    out: dict[str, float] = {}
    env.start_cpu()
    t = time.perf_counter()
    await client.create(STATEFULSETS, sts, "default")
    out["create_s"] = await running.wait(600) - t
    env.progress(f"{first} running")
    for key, size in (("scale_up_s", full), ("scale_to_zero_s", 0), ("scale_back_s", full)):
        if size:
            running.retarget(size)
        t = time.perf_counter()
        await client.patch(STATEFULSETS, "db", {"spec": {"replicas": size}}, "default")
        if size:
            out[key] = await running.wait(600) - t
        else:
            out[key] = await _until_no_pods(client, t)
        env.progress(f"{size} replicas")
    # pods started over the four phases: the first set, the scale-up, the way back
    env.stop_cpu(first + (full - first) + full)
    await running.stop()
    await cp.stop()
    return out


async def _until_no_pods(client: Any, t0: float) -> float:
    from apiserver.client.interface import PODS

    while True:
        lst = await client.list(PODS, "default", label_selector="app=db")
        if not lst["items"]:
            return time.perf_counter() - t0
        left = {p["metadata"]["name"] for p in lst["items"]}
        async for ev in client.watch(
            PODS, "default", label_selector="app=db", resource_version=lst["metadata"]["resourceVersion"]
        ):
            if ev.type == "DELETED":
                left.discard(ev.object["metadata"]["name"])
                if not left:
                    return time.perf_counter() - t0
            elif ev.type == "ERROR":
                break
