"""API server throughput: writes, lists and watch fan-out, in-process or over HTTP.

In-process uses the client the controllers use; over HTTP a ``gangplane serve --port 0`` is
started (or ``--kubeconfig`` names another server) and driven by one keep-alive client, which is
what "writes/s from one client" means.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import yaml

from apiserver.client.interface import CONFIGMAPS
from bench.results import Metric
from bench.workloads.common import Env, percentile

METRICS = {
    "create_per_s": Metric("writes/s", True),
    "patch_per_s": Metric("writes/s", True),
    "list_ms": Metric("ms", False),
    "watch_p99_ms": Metric("ms", False),
    "writes_with_watchers_per_s": Metric("writes/s", True),
}
PARAMS = {"objects": 2000, "watchers": 100, "watch_events": 2000, "mode": "in-process"}


def configmap(i: int, ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"cm-{i}", "namespace": ns, "labels": {"shard": str(i % 10)}},
        "data": {"k": "v" * 64},
    }


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    if params.get("mode", "in-process") == "http":
        return await _http(params, env)
    return await _in_process(params, env)


async def _in_process(params: dict[str, Any], env: Env) -> dict[str, float]:
    from apiserver.controlplane import ControlPlane

    n = int(params.get("objects", 2000))
    cp = ControlPlane()
    c = cp.client("bench")
    out: dict[str, float] = {}
    t = time.perf_counter()
    for i in range(n):
        await c.create(CONFIGMAPS, configmap(i, "default"))
    out["create_per_s"] = n / (time.perf_counter() - t)
    env.progress("created")
    t = time.perf_counter()
    for i in range(n):
        await c.patch(CONFIGMAPS, f"cm-{i}", {"metadata": {"labels": {"touched": "y"}}}, "default")
    out["patch_per_s"] = n / (time.perf_counter() - t)
    t = time.perf_counter()
    await c.list(CONFIGMAPS, "default")
    out["list_ms"] = (time.perf_counter() - t) * 1000
    # fan-out: W watchers, E writes; delivery latency per event and writes/s meanwhile
    watchers = int(params.get("watchers", 100))
    events = int(params.get("watch_events", 2000))
    rv = (await c.list(CONFIGMAPS, "default", limit=1))["metadata"]["resourceVersion"]
    sent: dict[str, float] = {}
    lat: list[float] = []
    remaining = [watchers * events]
    done = asyncio.Event()

    async def watch_one() -> None:
        async for ev in c.watch(CONFIGMAPS, "default", resource_version=rv, label_selector="fanout=yes"):
            if ev.type in ("ADDED", "MODIFIED"):
                lat.append(time.perf_counter() - sent[ev.object["metadata"]["name"]])
                remaining[0] -= 1
                if remaining[0] <= 0:
                    done.set()

    tasks = [asyncio.create_task(watch_one()) for _ in range(watchers)]
    await asyncio.sleep(0)
    t = time.perf_counter()
    for i in range(events):
        name = f"fan-{i}"
        sent[name] = time.perf_counter()
        await c.create(
            CONFIGMAPS, {"metadata": {"name": name, "labels": {"fanout": "yes"}}, "data": {}}, "default"
        )
    out["writes_with_watchers_per_s"] = events / (time.perf_counter() - t)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(done.wait(), 120)
    out["watch_p99_ms"] = percentile(lat, 99) * 1000
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await cp.stop()
    return out


@contextlib.asynccontextmanager
async def _server(env: Env) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for ``--kubeconfig``'s server, or for a fresh ``gangplane serve``."""
    if env.kubeconfig is not None:
        async with _client_from_kubeconfig(env.kubeconfig) as http:
            yield http
        return
    with tempfile.TemporaryDirectory() as tmp:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "apiserver.cli",
            "serve",
            "--port",
            "0",
            "--kubeconfig",
            f"{tmp}/kc",
            "--cluster",
            str(_empty_fleet(Path(tmp))),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=tmp,
        )
        try:
            from bench.workloads.cold_start import _url

            await _url(proc)
            async with _client_from_kubeconfig(Path(tmp, "kc")) as http:
                yield http
        finally:
            proc.terminate()
            await proc.wait()


def _empty_fleet(tmp: Path) -> Path:
    p = tmp / "fleet.yaml"
    p.write_text("nodes: []\n")
    return p


@contextlib.asynccontextmanager
async def _client_from_kubeconfig(path: Path) -> AsyncIterator[httpx.AsyncClient]:
    cfg = yaml.safe_load(path.read_text())
    ctx_name = cfg.get("current-context")
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next((u["user"] for u in cfg.get("users", []) if u["name"] == ctx.get("user")), {}) or {}
    headers = {"Content-Type": "application/json"}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    verify: Any = True
    if cluster.get("insecure-skip-tls-verify"):
        verify = False
    elif cluster.get("certificate-authority-data"):
        verify = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    elif cluster.get("certificate-authority"):
        verify = ssl.create_default_context(cafile=cluster["certificate-authority"])
    cert = None
    if user.get("client-certificate") and user.get("client-key"):
        cert = (user["client-certificate"], user["client-key"])
    async with httpx.AsyncClient(
        base_url=cluster["server"], headers=headers, verify=verify, cert=cert, timeout=60
    ) as http:
        yield http


async def _http(params: dict[str, Any], env: Env) -> dict[str, float]:
    n = int(params.get("objects", 1000))
    ns = params.get("namespace", "gangplane-bench")
    out: dict[str, float] = {}
    async with _server(env) as http:
        await http.post("/api/v1/namespaces", content=orjson.dumps({"metadata": {"name": ns}}))
        base = f"/api/v1/namespaces/{ns}/configmaps"
        try:
            t = time.perf_counter()
            for i in range(n):
                r = await http.post(base, content=orjson.dumps(configmap(i, ns)))
                r.raise_for_status()
            out["create_per_s"] = n / (time.perf_counter() - t)
            env.progress("created")
            t = time.perf_counter()
            for i in range(n):
                r = await http.patch(
                    f"{base}/cm-{i}",
                    content=b'{"metadata":{"labels":{"touched":"y"}}}',
                    headers={"Content-Type": "application/merge-patch+json"},
                )
                r.raise_for_status()
            out["patch_per_s"] = n / (time.perf_counter() - t)
            t = time.perf_counter()
            (await http.get(base)).raise_for_status()
            out["list_ms"] = (time.perf_counter() - t) * 1000
        finally:
            await http.delete(f"/api/v1/namespaces/{ns}")
    return out
