"""The node-agent gang StatefulSet scenario over HTTP (``mode: http`` of ``gang-statefulsets``).

A ``gangplane serve`` is started with the scenario's fleet (every component, the node agent
registering the nodes), or ``--kubeconfig`` names another server whose Ready nodes are used. One
HTTP client waits for the nodes, creates the sets and follows a single pod watch until every pod
is bound and then Running: the numbers include the server's request path, its watch encoding and
the client's decoding, as a user's tooling would see them.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from bench.workloads.api import _client_from_kubeconfig, _cpu_seconds
from bench.workloads.common import Env, is_bound, is_running
from bench.workloads.serve import gangplane_serve

NAMESPACE = "bench"


@contextlib.asynccontextmanager
async def _server(env: Env, fleet: dict[str, Any]) -> AsyncIterator[tuple[Path, int | None]]:
    """``--kubeconfig``'s server, or a fresh ``gangplane serve --cluster <fleet>`` (and its pid)."""
    if env.kubeconfig is not None:
        yield env.kubeconfig, None
        return
    async with gangplane_serve(fleet) as served:
        yield served.kubeconfig, served.proc.pid


def _ok(r: httpx.Response, what: str) -> dict[str, Any]:
    if r.status_code >= 300:
        raise RuntimeError(f"{what}: HTTP {r.status_code}: {r.text[:300]}")
    out: dict[str, Any] = r.json()
    return out


async def _watch(http: httpx.AsyncClient, path: str, rv: str) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(type, object) of a watch from ``rv``; an ERROR event raises."""
    params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "false"}
    async with http.stream("GET", path, params=params, timeout=None) as r:
        if r.status_code >= 300:
            raise RuntimeError(f"watch {path}: HTTP {r.status_code}")
        async for line in r.aiter_lines():
            if not line:
                continue
            ev = json.loads(line)
            if ev["type"] == "ERROR":
                raise RuntimeError(f"watch {path} ended: {ev['object'].get('message')}")
            yield ev["type"], ev["object"]


async def _wait_nodes(http: httpx.AsyncClient, want: int) -> None:
    """Until ``want`` Nodes are Ready without the not-ready taint (schedulable)."""
    from bench.workloads.statefulsets import _schedulable

    lst = _ok(await http.get("/api/v1/nodes"), "list nodes")
    ok = {n["metadata"]["name"] for n in lst["items"] if _schedulable(n)}
    if len(ok) >= want:
        return
    async for etype, node in _watch(http, "/api/v1/nodes", lst["metadata"]["resourceVersion"]):
        name = node["metadata"]["name"]
        if etype != "DELETED" and _schedulable(node):
            ok.add(name)
        else:
            ok.discard(name)
        if len(ok) >= want:
            return


async def run_http(params: dict[str, Any], env: Env) -> dict[str, float]:
    from bench.workloads.statefulsets import fleet_doc, statefulset

    nodes, racks = int(params.get("nodes", 1000)), int(params.get("racks", 10))
    sets, replicas = int(params.get("sets", 1)), int(params.get("replicas", 1000))
    gang, topology = bool(params.get("gang", True)), str(params.get("topology", "") or "")
    fleet_size = max(1, racks) * max(1, nodes // max(1, racks))
    out: dict[str, float] = {}
    async with (
        _server(env, fleet_doc(nodes, racks)) as (kubeconfig, pid),
        _client_from_kubeconfig(kubeconfig) as http,
    ):
        t = time.perf_counter()
        await _wait_nodes(http, fleet_size)
        out["nodes_schedulable_s"] = time.perf_counter() - t
        env.progress(f"{fleet_size} nodes")
        r = await http.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}})
        if r.status_code != 409:
            _ok(r, "create namespace")
        pods_path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        lst = _ok(await http.get(pods_path), "list pods")
        seen: dict[str, dict[str, set[str]]] = {"bound": {}, "running": {}}
        last: dict[str, dict[str, float]] = {"bound": {}, "running": {}}
        cpu0 = _cpu_seconds(pid)
        client0 = time.process_time()  # this process: the client's requests and watch decoding
        t0 = time.perf_counter()
        for s in range(sets):
            body = statefulset(f"gang-{s}", replicas, gang, topology)
            _ok(await http.post(f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets", json=body), "create")
        async for etype, p in _watch(http, pods_path, lst["metadata"]["resourceVersion"]):
            if etype not in ("ADDED", "MODIFIED"):
                continue
            app = (p["metadata"].get("labels") or {}).get("app", "")
            for stage, ok in (("bound", is_bound(p)), ("running", is_running(p))):
                members = seen[stage].setdefault(app, set())
                if ok and p["metadata"]["name"] not in members:
                    members.add(p["metadata"]["name"])
                    if len(members) == replicas:
                        last[stage][app] = time.perf_counter()
            if len(last["running"]) == sets:
                break
        cpu1 = _cpu_seconds(pid)
        out["client_cpu_s"] = time.process_time() - client0
        out["pods_per_s"] = sets * replicas / (max(last["bound"].values()) - t0)
        out["all_running_s"] = max(last["running"].values()) - t0
        if cpu0 is not None and cpu1 is not None:
            out["server_cpu_s"] = cpu1 - cpu0
        env.count_pods(sets * replicas)
        with contextlib.suppress(httpx.HTTPError):
            await http.delete(f"/api/v1/namespaces/{NAMESPACE}")
    return out
