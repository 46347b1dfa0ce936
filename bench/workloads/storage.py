"""Storage backends side by side: writes/s through the API (one client, and 16 concurrent ones,
each write acknowledged only once durable), and the time to open a store holding many objects.

Every backend in :data:`BACKENDS` runs the same writes in its own control plane, in-process
(the path the controllers use: registry, admission, the storage's durability barrier), so the
differences are the backends'. ``sqlite-loop`` is the SQLite backend committing on the event
loop instead of its writer thread, which is how the choice of the writer thread is measured.
``etcd`` runs on a one-member etcd started on loopback for the run (Debian's ``etcd-server``,
installed if missing; left out, with a progress note, where it cannot be had), each control
plane under its own key prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from apiserver.client.interface import CONFIGMAPS
from apiserver.storage.interface import Storage
from apiserver.storage.memory import MemoryStorage
from apiserver.storage.sqlite import SQLiteStorage
from bench.results import Metric
from bench.workloads.common import Env

#: backend name -> a store in the given (empty) directory
BACKENDS: dict[str, Callable[[Path], Storage]] = {
    "memory": lambda d: MemoryStorage(),
    "sqlite": lambda d: SQLiteStorage(d / "data"),
    "sqlite-loop": lambda d: SQLiteStorage(d / "data", commit_thread=False),
}
#: backends that need a server, started for the run (:func:`_etcd`)
SERVED = ("etcd",)
#: backends whose state outlives the process: their open time with ``stored`` objects is measured
PERSISTENT: dict[str, Callable[[Path], Storage]] = {"sqlite": lambda d: SQLiteStorage(d / "data")}

#: backend name -> ``gangplane serve`` flags selecting it ("{tmp}" is the server's own fresh directory), for ``mode: http``
SERVE_FLAGS: dict[str, list[str]] = {
    "memory": [],
    "sqlite": ["--data-dir", "{tmp}/data"],
}

METRICS = {
    **{f"create_per_s_{b}": Metric("writes/s", True) for b in (*BACKENDS, *SERVED)},
    **{f"create_per_s_16_clients_{b}": Metric("writes/s", True) for b in (*BACKENDS, *SERVED)},
    **{f"patch_per_s_16_clients_{b}": Metric("writes/s", True) for b in (*BACKENDS, *SERVED)},
    **{f"open_s_{b}": Metric("s", False) for b in PERSISTENT},
    **{f"http_create_per_s_16_clients_{b}": Metric("writes/s", True) for b in (*SERVE_FLAGS, *SERVED)},
}
#: ``mode``: ``in-process`` (the API client of the controllers) or ``http`` (gangplane serve per backend)
PARAMS = {"objects": 2000, "clients": 16, "stored": 50_000, "mode": "in-process"}


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "data": {"k": "v" * 64},
    }


async def _writes(make: Callable[[Path], Storage], n: int, clients: int) -> dict[str, float]:
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    with tempfile.TemporaryDirectory() as tmp:
        cp = ControlPlane(ControlPlaneOptions(storage=make(Path(tmp))))
        await cp.start([])
        try:
            c = cp.client("bench")
            t = time.perf_counter()
            for i in range(n):
                await c.create(CONFIGMAPS, configmap(f"seq-{i}"), "default")
            seq = n / (time.perf_counter() - t)

            async def creates(k: int) -> None:
                for i in range(n // clients):
                    await c.create(CONFIGMAPS, configmap(f"par-{k}-{i}"), "default")

            async def patches(k: int) -> None:
                for i in range(n // clients):
                    await c.patch(CONFIGMAPS, f"par-{k}-{i}", {"metadata": {"labels": {"v": "2"}}}, "default")

            t = time.perf_counter()
            await asyncio.gather(*(creates(k) for k in range(clients)))
            par = (n // clients * clients) / (time.perf_counter() - t)
            t = time.perf_counter()
            await asyncio.gather(*(patches(k) for k in range(clients)))
            patch = (n // clients * clients) / (time.perf_counter() - t)
        finally:
            await cp.stop()
    return {"create_per_s": seq, "create_per_s_16_clients": par, "patch_per_s_16_clients": patch}


def populate(data_dir: Path, objects: int) -> None:
    """A data dir holding ``objects`` ConfigMaps shaped as the API server stores them."""
    store = SQLiteStorage(data_dir)
    try:
        now = "2026-01-01T00:00:00Z"
        for i in range(objects):
            ns, name = f"ns-{i % 50}", f"cm-{i:06d}"
            obj = configmap(name)
            obj["metadata"].update(
                namespace=ns,
                uid=f"00000000-0000-4000-8000-{i:012d}",
                creationTimestamp=now,
                managedFields=[
                    {
                        "manager": "bench",
                        "operation": "Update",
                        "apiVersion": "v1",
                        "time": now,
                        "fieldsType": "FieldsV1",
                        "fieldsV1": {
                            "f:data": {".": {}, "f:k": {}},
                            "f:metadata": {"f:labels": {"f:app": {}}},
                        },
                    }
                ],
            )
            store.create(("", "configmaps"), (ns, name), obj)
    finally:
        store.close_sync()


def _open_s(make: Callable[[Path], Storage], stored: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        populate(Path(tmp) / "data", stored)
        t = time.perf_counter()
        store = make(Path(tmp))
        elapsed = time.perf_counter() - t
        assert store.count(("", "configmaps")) == stored
        if isinstance(store, SQLiteStorage):
            store.close_sync()
    return elapsed


@contextlib.contextmanager
def _etcd_servers() -> Iterator[str]:
    """A one-member etcd for the run: its ``--etcd-servers``."""
    from apiserver.storage.etcd_local import EtcdCluster

    with tempfile.TemporaryDirectory() as tmp, EtcdCluster(Path(tmp), 1) as cluster:
        yield cluster.endpoints


def _etcd_store(endpoints: str) -> Callable[[Path], Storage]:
    """Stores on that etcd, each under a prefix of its own."""
    from apiserver.storage.etcd import EtcdStorage, parse_servers

    servers = parse_servers(endpoints)
    return lambda d: EtcdStorage(
        servers, prefix=f"/bench-{uuid.uuid4().hex[:8]}/registry", compaction_interval=0
    )


async def _http_writes(flags: list[str], n: int, clients: int) -> float:
    """Creates/s of ``clients`` concurrent keep-alive HTTP clients against ``gangplane serve flags``."""

    import orjson

    from bench.workloads.api import _client_from_kubeconfig
    from bench.workloads.serve import gangplane_serve

    # the server runs in its own temporary directory: "{tmp}/x" is "x" there
    args = [f.replace("{tmp}/", "") for f in flags]
    # httpx's default pool (100 connections, 20 kept alive) holds the 16 clients' connections
    async with gangplane_serve(None, *args) as served, _client_from_kubeconfig(served.kubeconfig) as http:

        async def creates(k: int) -> None:
            for i in range(n // clients):
                body = orjson.dumps(configmap(f"http-{k}-{i}"))
                r = await http.post("/api/v1/namespaces/default/configmaps", content=body)
                r.raise_for_status()

        t = time.perf_counter()
        await asyncio.gather(*(creates(k) for k in range(clients)))
        return (n // clients * clients) / (time.perf_counter() - t)


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from apiserver.storage.etcd_local import EtcdNotInstalled

    n = int(params.get("objects", 2000))
    clients = int(params.get("clients", 16))
    out: dict[str, float] = {}
    if params.get("mode") == "http":
        for name, flags in SERVE_FLAGS.items():
            out[f"http_create_per_s_16_clients_{name}"] = await _http_writes(flags, n, clients)
            env.progress(f"{name} done")
        try:
            with _etcd_servers() as endpoints:
                flags = ["--etcd-servers", endpoints, "--etcd-compaction-interval", "0"]
                out["http_create_per_s_16_clients_etcd"] = await _http_writes(flags, n, clients)
                env.progress("etcd done")
        except EtcdNotInstalled as e:
            env.progress(f"etcd left out: {e}")
        return out
    for name, make in BACKENDS.items():
        for metric, value in (await _writes(make, n, clients)).items():
            out[f"{metric}_{name}"] = value
        env.progress(f"{name} done")
    try:
        with _etcd_servers() as endpoints:
            for metric, value in (await _writes(_etcd_store(endpoints), n, clients)).items():
                out[f"{metric}_etcd"] = value
            env.progress("etcd done")
    except EtcdNotInstalled as e:
        env.progress(f"etcd left out: {e}")
    for name, make in PERSISTENT.items():
        out[f"open_s_{name}"] = _open_s(make, int(params.get("stored", 50_000)))
        env.progress(f"opened {name}")
    return out
