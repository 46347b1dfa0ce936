"""Writes/s per storage backend: memory, SQLite (``--data-dir``) and etcd (``--etcd-servers``) side by side.

Each run builds an API server on the chosen backend (no components) and drives it with the
in-process client the controllers use, so the numbers differ only by what the backend costs per
write: nothing (memory), a group-committed transaction and fsync (SQLite), a compare-and-swap
transaction through etcd's raft log and fsync plus the watch that feeds the cache (etcd). The etcd
backend gets a fresh one-member etcd on loopback (Debian's ``etcd-server``, installed if missing).
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from apiserver.client.interface import CONFIGMAPS
from bench.results import Metric
from bench.workloads.api import configmap
from bench.workloads.common import Env

METRICS = {
    "create_per_s": Metric("writes/s", True),
    "update_per_s": Metric("writes/s", True),
    "get_per_s": Metric("reads/s", True),
}
PARAMS = {"backend": "memory", "objects": 2000}


@contextlib.contextmanager
def _storage_options(backend: str, tmp: Path) -> Iterator[Any]:
    from apiserver.storage.options import StorageOptions

    if backend == "memory":
        yield StorageOptions()
    elif backend == "sqlite":
        yield StorageOptions(data_dir=str(tmp / "data"))
    elif backend == "etcd":
        from apiserver.storage.etcd_local import EtcdCluster

        with EtcdCluster(tmp, 1) as cluster:
            yield StorageOptions(etcd_servers=[cluster.endpoints], etcd_compaction_interval=0)
    else:
        raise ValueError(f"params.backend: must be memory, sqlite or etcd, got {backend!r}")


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    from apiserver.controlplane import ControlPlane, ControlPlaneOptions
    from apiserver.storage.options import open_storage

    n = int(params.get("objects", 2000))
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d, _storage_options(str(params.get("backend")), Path(d)) as options:
        cp = ControlPlane(ControlPlaneOptions(storage=open_storage(options)))
        await cp.start([])
        try:
            c = cp.client("bench")
            t = time.perf_counter()
            for i in range(n):
                await c.create(CONFIGMAPS, configmap(i, "default"))
            out["create_per_s"] = n / (time.perf_counter() - t)
            env.progress("created")
            t = time.perf_counter()
            for i in range(n):
                await c.patch(CONFIGMAPS, f"cm-{i}", {"metadata": {"labels": {"touched": "y"}}}, "default")
            out["update_per_s"] = n / (time.perf_counter() - t)
            t = time.perf_counter()
            for i in range(n):
                await c.get(CONFIGMAPS, f"cm-{i}", "default")  # a consistent read each
            out["get_per_s"] = n / (time.perf_counter() - t)
        finally:
            await cp.stop()
    return out
