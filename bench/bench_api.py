"""Micro-benchmark of the API server: create / update / list / watch throughput.

In-process (the LocalClient the controllers use) and over HTTP (a ``gangplane serve --port 0``
subprocess driven by httpx with keep-alive). Prints one line per measurement; numbers go in the
closing notes, never into assertions.

    python bench/bench_api.py [--n 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from apiserver.client.interface import CONFIGMAPS, PODS
from apiserver.controlplane import ControlPlane


def pod(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "bench", "shard": str(i % 10)}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}}}]},
    }


def report(what: str, n: int, seconds: float) -> None:
    print(f"{what:<44} {n:>7} ops  {seconds * 1000:>9.1f} ms  {n / seconds:>10.0f} ops/s", flush=True)


async def in_process(n: int) -> None:
    cp = ControlPlane()
    c = cp.client("bench")
    # a few idle watchers, like informers of other components
    watchers = [asyncio.create_task(_drain(c)) for _ in range(4)]
    await asyncio.sleep(0)
    t = time.perf_counter()
    for i in range(n):
        await c.create(PODS, pod(i))
    report("in-process create pods (4 watchers)", n, time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n):
        await c.patch(PODS, f"p{i}", {"metadata": {"labels": {"touched": "yes"}}}, "default")
    report("in-process merge-patch pods", n, time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(n):
        obj = await c.get(PODS, f"p{i}", "default")
        obj["metadata"]["annotations"] = {"a": "b"}
        await c.update(PODS, obj)
    report("in-process get+update pods", n, time.perf_counter() - t)
    t = time.perf_counter()
    reps = 20
    for _ in range(reps):
        lst = await c.list(PODS, "default")
    report(f"in-process list {len(lst['items'])} pods (x{reps})", reps, time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(reps):
        await c.list(PODS, "default", label_selector="shard=3")
    report("in-process list with labelSelector (x20)", reps, time.perf_counter() - t)
    # watch fan-out: time for one watcher to receive n events
    rv = (await c.list(CONFIGMAPS, "default"))["metadata"]["resourceVersion"]
    got = 0
    done = asyncio.Event()

    async def watch_all() -> None:
        nonlocal got
        async for _ in c.watch(CONFIGMAPS, "default", resource_version=rv):
            got += 1
            if got == n:
                done.set()
                return

    task = asyncio.create_task(watch_all())
    await asyncio.sleep(0)
    t = time.perf_counter()
    for i in range(n):
        await c.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {}}, "default")
    await done.wait()
    report("in-process create + watch delivery", n, time.perf_counter() - t)
    task.cancel()
    for w in watchers:
        w.cancel()


async def _drain(c) -> None:  # noqa: ANN001
    async for _ in c.watch(PODS, ""):
        pass


def over_http(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "serve.log"
        with log.open("w") as fh:
            proc = subprocess.Popen(
                [sys.executable, "-m", "apiserver.cli", "serve", "--port", "0", "--kubeconfig", f"{tmp}/kc"],
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
        url = ""
        deadline = time.monotonic() + 30
        while not url and time.monotonic() < deadline:
            m = re.search(r"serving on (\S+)", log.read_text())
            url = m.group(1) if m else ""
            time.sleep(0.05)
        try:
            with httpx.Client(base_url=url, timeout=60) as h:
                base = "/api/v1/namespaces/default/pods"
                t = time.perf_counter()
                for i in range(n):
                    r = h.post(base, content=json.dumps(pod(i)))
                    assert r.status_code == 201, r.text
                report("http create pods", n, time.perf_counter() - t)
                t = time.perf_counter()
                for i in range(n):
                    h.patch(f"{base}/p{i}", content=b'{"metadata":{"labels":{"x":"y"}}}', headers={"Content-Type": "application/merge-patch+json"})
                report("http merge-patch pods", n, time.perf_counter() - t)
                t = time.perf_counter()
                for _ in range(10):
                    r = h.get(base)
                report(f"http list {len(r.json()['items'])} pods (x10)", 10, time.perf_counter() - t)
                t = time.perf_counter()
                for _ in range(10):
                    h.get(base, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
                report("http list as Table (x10)", 10, time.perf_counter() - t)
                rv = h.get("/api/v1/namespaces/default/configmaps").json()["metadata"]["resourceVersion"]
                for i in range(n):
                    h.post("/api/v1/namespaces/default/configmaps", json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
                t = time.perf_counter()
                got = 0
                with h.stream("GET", "/api/v1/namespaces/default/configmaps", params={"watch": "1", "resourceVersion": rv}) as r:
                    for line in r.iter_lines():
                        if line:
                            got += 1
                            if got == n:
                                break
                report("http watch replay of events", n, time.perf_counter() - t)
        finally:
            proc.terminate()
            proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    args = ap.parse_args()
    asyncio.run(in_process(args.n))
    over_http(min(args.n, 2000))


if __name__ == "__main__":
    main()
