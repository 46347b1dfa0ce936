"""API server throughput: writes, lists and watch fan-out, in-process or over HTTP.

In-process uses the client the controllers use; over HTTP a ``gangplane serve --port 0`` is
started (or ``--kubeconfig`` names another server) and driven by one keep-alive client, which is
what "writes/s from one client" means.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.client
import os
import ssl
import sys
import tempfile
import time
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass
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
    "server_cpu_ms_per_create": Metric("ms", False),
    "server_cpu_ms_per_patch": Metric("ms", False),
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
async def _server(env: Env) -> AsyncIterator[tuple[Path, int | None]]:
    """The kubeconfig of ``--kubeconfig``'s server, or of a fresh ``gangplane serve`` and its pid."""
    if env.kubeconfig is not None:
        yield env.kubeconfig, None
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
            yield Path(tmp, "kc"), proc.pid
        finally:
            proc.terminate()
            await proc.wait()


def _empty_fleet(tmp: Path) -> Path:
    p = tmp / "fleet.yaml"
    p.write_text("nodes: []\n")
    return p


@dataclass(frozen=True)
class _Target:
    """Where a kubeconfig's current context points and how to authenticate to it."""

    server: str
    headers: dict[str, str]
    verify: Any  # an ssl.SSLContext, True (system CAs) or False (insecure-skip-tls-verify)
    cert: tuple[str, str] | None


def _target(path: Path) -> _Target:
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
    return _Target(cluster["server"], headers, verify, cert)


@contextlib.asynccontextmanager
async def _client_from_kubeconfig(path: Path) -> AsyncIterator[httpx.AsyncClient]:
    t = _target(path)
    async with httpx.AsyncClient(
        base_url=t.server, headers=t.headers, verify=t.verify, cert=t.cert, timeout=60
    ) as http:
        yield http


class OneConnection:
    """One keep-alive HTTP/1.1 connection issuing requests one after another (stdlib ``http.client``).

    "Writes/s from one client" measures the server, so the client should cost little: like
    client-go, this one writes each request with one send and reuses the connection. httpx's
    async client spends about 3 ms of CPU per request on this machine (measured), which would
    make the benchmark measure httpx.
    """

    def __init__(self, target: _Target) -> None:
        url = urllib.parse.urlsplit(target.server)
        self._headers = target.headers
        self._base = url.path.rstrip("/")
        if url.scheme == "https":
            ctx = target.verify if isinstance(target.verify, ssl.SSLContext) else ssl.create_default_context()
            if target.verify is False:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            if target.cert is not None:
                ctx.load_cert_chain(*target.cert)
            self._conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                url.hostname or "", url.port or 443, context=ctx, timeout=60
            )
        else:
            self._conn = http.client.HTTPConnection(url.hostname or "", url.port or 80, timeout=60)

    def request(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> tuple[int, bytes]:
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        self._conn.request(method, self._base + path, body=body or None, headers=headers)
        resp = self._conn.getresponse()
        return resp.status, resp.read()

    def close(self) -> None:
        self._conn.close()


def _ok(status: int, body: bytes, what: str) -> None:
    if status >= 300:
        raise RuntimeError(f"{what}: HTTP {status}: {body[:300]!r}")


async def _http(params: dict[str, Any], env: Env) -> dict[str, float]:
    async with _server(env) as (kubeconfig, pid):
        return await asyncio.to_thread(_http_sync, params, env, _target(kubeconfig), pid)


def _http_sync(params: dict[str, Any], env: Env, target: _Target, pid: int | None) -> dict[str, float]:
    n = int(params.get("objects", 1000))
    ns = params.get("namespace", "gangplane-bench")
    out: dict[str, float] = {}
    conn = OneConnection(target)
    try:
        conn.request("POST", "/api/v1/namespaces", orjson.dumps({"metadata": {"name": ns}}))
        base = f"/api/v1/namespaces/{ns}/configmaps"
        try:
            t, cpu = time.perf_counter(), _cpu_seconds(pid)
            for i in range(n):
                _ok(*conn.request("POST", base, orjson.dumps(configmap(i, ns))), "create")
            out["create_per_s"] = n / (time.perf_counter() - t)
            if cpu is not None:
                out["server_cpu_ms_per_create"] = ((_cpu_seconds(pid) or 0.0) - cpu) * 1000 / n
            env.progress("created")
            t, cpu = time.perf_counter(), _cpu_seconds(pid)
            patch = b'{"metadata":{"labels":{"touched":"y"}}}'
            for i in range(n):
                _ok(*conn.request("PATCH", f"{base}/cm-{i}", patch, "application/merge-patch+json"), "patch")
            out["patch_per_s"] = n / (time.perf_counter() - t)
            if cpu is not None:
                out["server_cpu_ms_per_patch"] = ((_cpu_seconds(pid) or 0.0) - cpu) * 1000 / n
            t = time.perf_counter()
            _ok(*conn.request("GET", base), "list")
            out["list_ms"] = (time.perf_counter() - t) * 1000
        finally:
            conn.request("DELETE", f"/api/v1/namespaces/{ns}")
    finally:
        conn.close()
    return out


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of the local server (None for another server or without procfs).

    On a shared machine the wall-clock rate of one client depends on how soon each process is
    scheduled again; the server's CPU per write is the cost gangplane itself controls.
    """
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
