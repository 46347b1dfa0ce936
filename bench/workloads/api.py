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
import threading
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
from bench.workloads.serve import gangplane_serve

METRICS = {
    "create_per_s": Metric("writes/s", True),
    "patch_per_s": Metric("writes/s", True),
    "list_ms": Metric("ms", False),
    "watch_p99_ms": Metric("ms", False),
    "writes_with_watchers_per_s": Metric("writes/s", True),
    "server_cpu_ms_per_create": Metric("ms", False),
    "server_cpu_ms_per_patch": Metric("ms", False),
    "server_cpu_ms_per_write_with_watchers": Metric("ms", False),
    "watch_p50_ms": Metric("ms", False),
    "watch_max_ms": Metric("ms", False),
    "watch_events_missing": Metric("events", False),
}
PARAMS = {
    "objects": 2000,
    "watchers": 100,
    "watch_events": 2000,
    "mode": "in-process",
    "connections": 1,
}


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
    from gangplane.controlplane import ControlPlane

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
    async with gangplane_serve() as served:
        yield served.kubeconfig, served.proc.pid


@dataclass(frozen=True)
class _Target:
    """Where a kubeconfig's current context points and how to authenticate to it."""

    server: str
    headers: dict[str, str]
    verify: Any  # an ssl.SSLContext, True (system CAs) or False (insecure-skip-tls-verify)
    cert: tuple[str, str] | None

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of a stdlib client (``http.client``, ``asyncio`` streams) for this target.

        httpx takes ``verify`` and ``cert`` as they are; the benchmark's raw clients (one
        keep-alive connection, the watch fleet) need the same trust and client certificate as
        one ``SSLContext``, so both take it from here. The kubeconfig's CA context is used (and
        given the client certificate) when there is one; else the system CAs, unverified when
        the kubeconfig says ``insecure-skip-tls-verify``.
        """
        ctx = self.verify if isinstance(self.verify, ssl.SSLContext) else ssl.create_default_context()
        if self.verify is False:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert is not None:
            ctx.load_cert_chain(*self.cert)
        return ctx


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
            self._conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                url.hostname or "", url.port or 443, context=target.ssl_context(), timeout=60
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


def _concurrently(target: _Target, connections: int, n: int, request: Any) -> float:
    """Issue requests ``request(conn, i)`` for i < n over ``connections`` keep-alive connections,
    each on its own thread (the socket waits release the GIL); returns the wall seconds taken.

    One connection sends a request only after the previous answer, so its rate is bounded by
    two process wake-ups per request on a busy machine; a few connections in flight (as
    client-go multiplexes requests on one HTTP/2 connection) measure what the server sustains.
    """
    conns = [OneConnection(target) for _ in range(connections)]
    errors: list[BaseException] = []

    def work(j: int) -> None:
        try:
            for i in range(j, n, connections):
                request(conns[j], i)
        except BaseException as e:  # reported by the caller
            errors.append(e)

    try:
        for c in conns:
            c.request("GET", "/version")  # connect (and handshake) before the clock starts
        threads = [threading.Thread(target=work, args=(j,)) for j in range(connections)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        took = time.perf_counter() - t
    finally:
        for c in conns:
            c.close()
    if errors:
        raise errors[0]
    return took


def _http_sync(params: dict[str, Any], env: Env, target: _Target, pid: int | None) -> dict[str, float]:
    n = int(params.get("objects", 1000))
    ns = params.get("namespace", "gangplane-bench")
    k = max(1, int(params.get("connections", 1)))
    out: dict[str, float] = {}
    conn = OneConnection(target)
    try:
        conn.request("POST", "/api/v1/namespaces", orjson.dumps({"metadata": {"name": ns}}))
        base = f"/api/v1/namespaces/{ns}/configmaps"
        try:
            if n:
                cpu = _cpu_seconds(pid)
                took = _concurrently(
                    target,
                    k,
                    n,
                    lambda c, i: _ok(*c.request("POST", base, orjson.dumps(configmap(i, ns))), "create"),
                )
                out["create_per_s"] = n / took
                if cpu is not None:
                    out["server_cpu_ms_per_create"] = ((_cpu_seconds(pid) or 0.0) - cpu) * 1000 / n
                env.progress("created")
                cpu = _cpu_seconds(pid)
                patch = b'{"metadata":{"labels":{"touched":"y"}}}'
                took = _concurrently(
                    target,
                    k,
                    n,
                    lambda c, i: _ok(
                        *c.request("PATCH", f"{base}/cm-{i}", patch, "application/merge-patch+json"), "patch"
                    ),
                )
                out["patch_per_s"] = n / took
                if cpu is not None:
                    out["server_cpu_ms_per_patch"] = ((_cpu_seconds(pid) or 0.0) - cpu) * 1000 / n
                t = time.perf_counter()
                _ok(*conn.request("GET", base), "list")
                out["list_ms"] = (time.perf_counter() - t) * 1000
            if int(params.get("watchers", 0)) and int(params.get("watch_events", 0)):
                env.progress("watch fan-out")
                out.update(_http_fanout(params, target, pid, ns, k))
        finally:
            conn.close()  # idle through the fan-out: the server may have closed it
            conn = OneConnection(target)
            conn.request("DELETE", f"/api/v1/namespaces/{ns}")
    finally:
        conn.close()
    return out


def _http_fanout(
    params: dict[str, Any], target: _Target, pid: int | None, ns: str, k: int
) -> dict[str, float]:
    """W HTTP watchers (one client process) on a namespace's ConfigMaps, E creates meanwhile.

    The watchers use no selector, as an informer does; every one must see every event.
    """
    import subprocess

    watchers = int(params["watchers"])
    events = int(params["watch_events"])
    fan_ns = f"{ns}-fanout"
    conn = OneConnection(target)
    try:
        conn.request("POST", "/api/v1/namespaces", orjson.dumps({"metadata": {"name": fan_ns}}))
        base = f"/api/v1/namespaces/{fan_ns}/configmaps"
        status, body = conn.request("GET", base + "?limit=1")
        _ok(status, body, "list")
        rv = orjson.loads(body)["metadata"]["resourceVersion"]
        with tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False) as kc:
            kc.write(yaml.safe_dump(_kubeconfig_of(target)))
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.workloads.watchfleet",
                kc.name,
                f"{base}?watch=true&resourceVersion={rv}",
                str(watchers),
                str(events),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(Path(__file__).resolve().parents[2]),
        )
        try:
            assert proc.stdout is not None and proc.stdin is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("the watchers did not start")

            def create(c: OneConnection, i: int) -> None:
                obj = {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {
                        "name": f"fan-{i}",
                        "annotations": {"bench/sent": f"{time.clock_gettime(time.CLOCK_MONOTONIC):.6f}"},
                    },
                    "data": {"k": "v" * 64},
                }
                _ok(*c.request("POST", base, orjson.dumps(obj)), "create")

            cpu = _cpu_seconds(pid)
            took = _concurrently(target, k, events, create)
            cpu_end = _cpu_seconds(pid)
            # every watcher has all events by now, or within the timeout
            timer = threading.Timer(120, proc.stdin.close)
            timer.start()
            line = proc.stdout.readline()
            timer.cancel()
            got = orjson.loads(line) if line else {"seen": [], "latency_ms": []}
        finally:
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.close()
            proc.wait(30)
            os.unlink(kc.name)
    finally:
        conn.close()
    lat = got["latency_ms"]
    out = {
        "writes_with_watchers_per_s": events / took,
        "watch_p99_ms": percentile(lat, 99),
        "watch_p50_ms": percentile(lat, 50),
        "watch_max_ms": max(lat) if lat else 0.0,
        "watch_events_missing": float(watchers * events - sum(got["seen"])),
    }
    if cpu is not None and cpu_end is not None:
        out["server_cpu_ms_per_write_with_watchers"] = (cpu_end - cpu) * 1000 / events
    return out


def _kubeconfig_of(target: _Target) -> dict[str, Any]:
    """A kubeconfig the watcher process reads back into the same :class:`_Target`."""
    cluster: dict[str, Any] = {"server": target.server}
    if target.verify is False:
        cluster["insecure-skip-tls-verify"] = True
    elif isinstance(target.verify, ssl.SSLContext):
        der = target.verify.get_ca_certs(binary_form=True)
        pem = "".join(ssl.DER_cert_to_PEM_cert(c) for c in der)
        cluster["certificate-authority-data"] = base64.b64encode(pem.encode()).decode()
    user: dict[str, Any] = {}
    auth = target.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        user["token"] = auth[len("Bearer ") :]
    if target.cert is not None:
        user["client-certificate"], user["client-key"] = target.cert
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }


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
