"""A big LIST does not stall everyone else (issue 25, R2): other clients' latency while it streams.

A ``gangplane serve`` child gets ``objects`` custom objects of ``object_mb`` each (a CRD whose
schema keeps unknown fields), then one client LISTs them all — about 300 MB of JSON by default —
while ``clients`` other connections keep reading a small ConfigMap. Reported: the LIST's wall time
and size, the others' latency spread during it (``others_p99_ms`` is the figure the issue bounds at
100 ms), the server's CPU seconds over the LIST (``/proc/<pid>/stat``; wall time alone means little
on a loaded machine) and its resident-set high-water mark (``VmHWM``), which shows whether memory
is bounded by the chunk or by the response.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.results import Metric
from bench.workloads.common import Env, percentile
from bench.workloads.serve import gangplane_serve

METRICS = {
    "list_s": Metric("s", False),
    "list_mb": Metric("MB", True),
    "others_requests": Metric("requests", True),
    "others_p50_ms": Metric("ms", False),
    "others_p99_ms": Metric("ms", False),
    "others_max_ms": Metric("ms", False),
    "server_cpu_s": Metric("s", False),
    "server_rss_peak_mb": Metric("MB", False),
    "server_rss_before_mb": Metric("MB", False),
}
PARAMS = {"objects": 100, "object_mb": 2.9, "clients": 4}
GROUP = "bench.gangplane.io"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"blobs.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {"plural": "blobs", "singular": "blob", "kind": "Blob"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


_READER = """
import sys, time, httpx
t0 = time.perf_counter()
got = 0
with httpx.Client(timeout=600) as c, c.stream("GET", sys.argv[1]) as r:
    r.raise_for_status()
    for chunk in r.iter_raw():
        got += len(chunk)
print(got, time.perf_counter() - t0)
"""


def _proc_status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    objects = int(params.get("objects", 100))
    size = int(float(params.get("object_mb", 2.9)) * 1024 * 1024)
    clients = int(params.get("clients", 4))
    async with gangplane_serve(None, "--no-tls", "--anonymous") as served:
        return await asyncio.to_thread(_measure, served.url, served.proc.pid, objects, size, clients, env)


def _measure(url: str, pid: int, objects: int, size: int, clients: int, env: Env) -> dict[str, float]:
    blobs = f"/apis/{GROUP}/v1/namespaces/default/blobs"
    with httpx.Client(base_url=url, timeout=600) as c:
        c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD).raise_for_status()
        for _ in range(100):
            if c.get(blobs).status_code == 200:
                break
            time.sleep(0.1)
        payload = "x" * size
        for i in range(objects):
            body = {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Blob",
                "metadata": {"name": f"b-{i}"},
                "data": payload,
            }
            c.post(
                blobs, content=orjson.dumps(body), headers={"Content-Type": "application/json"}
            ).raise_for_status()
            if i % 20 == 0:
                env.progress(f"{i}/{objects} objects")
        c.post(
            "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "small"}}
        ).raise_for_status()
    rss_before = _proc_status(pid, "VmRSS")
    latencies: list[float] = []
    stop = threading.Event()

    def other() -> None:
        with httpx.Client(base_url=url, timeout=60) as oc:
            while not stop.is_set():
                t = time.perf_counter()
                oc.get("/api/v1/namespaces/default/configmaps/small").raise_for_status()
                latencies.append(time.perf_counter() - t)

    threads = [threading.Thread(target=other) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # the others are in their stride before the LIST starts
    seen = len(latencies)
    cpu0 = _cpu_s(pid)
    # the LIST is read by a process of its own, so its 300 MB of reads do not hold this process's
    # GIL and show up as the other clients' latency
    reader = subprocess.run(
        [sys.executable, "-c", _READER, url + blobs],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    got, list_s = (float(v) for v in reader.stdout.split())
    cpu = _cpu_s(pid) - cpu0
    during = latencies[seen:]
    stop.set()
    for t in threads:
        t.join()
    return {
        "list_s": list_s,
        "list_mb": got / 1e6,
        "others_requests": float(len(during)),
        "others_p50_ms": percentile(during, 50) * 1000,
        "others_p99_ms": percentile(during, 99) * 1000,
        "others_max_ms": max(during, default=0.0) * 1000,
        "server_cpu_s": cpu,
        "server_rss_peak_mb": _proc_status(pid, "VmHWM"),
        "server_rss_before_mb": rss_before,
    }
