"""The in-process client acknowledges a write (``pods/binding`` and every other) without awaiting
``durable`` only where the storage says a write is durable once applied (``acknowledged_at_apply``).

Over every backend the answer and the stored pod are those of the general path (the client's
``_yield``/``_durable`` steps); over SQLite, whose writes are acknowledged once committed, the
binding still waits for ``durable`` (every binding, each after its write).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from apiserver.client.interface import NAMESPACES, PODS
from apiserver.meta import FakeClock
from apiserver.storage.cache import WatchCache
from apiserver.storage.etcd import EtcdStorage
from apiserver.storage.memory import MemoryStorage
from apiserver.storage.sqlite import SQLiteStorage
from gangplane.controlplane import ControlPlane, ControlPlaneOptions

pytestmark = pytest.mark.anyio


def test_only_backends_whose_durable_never_waits_acknowledge_at_apply() -> None:
    assert MemoryStorage.acknowledged_at_apply is True
    assert SQLiteStorage.acknowledged_at_apply is False  # waits for its commit
    assert EtcdStorage.acknowledged_at_apply is False  # not claimed (the general path)
    assert WatchCache.acknowledged_at_apply is False


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }


async def _bind_all(cp: ControlPlane, n: int) -> list[Any]:
    c = cp.client("scheduler")
    await c.create(NAMESPACES, {"metadata": {"name": "ns"}})
    out = []
    for i in range(n):
        await c.create(PODS, _pod(f"p{i}"), "ns")
        body = {"metadata": {"name": f"p{i}"}, "target": {"kind": "Node", "name": f"n{i}"}}
        out.append(await c.create_subresource(PODS, f"p{i}", "binding", body, "ns"))
        pod = await c.get(PODS, f"p{i}", "ns")
        out.append((pod["spec"]["nodeName"], pod["status"]["conditions"]))
    return out


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_binding_answers_alike_and_waits_where_the_backend_needs_it(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStorage() if backend == "memory" else SQLiteStorage(tmp_path)
    waited: list[int] = []
    durable = type(store).durable

    async def counting(self: Any) -> None:
        waited.append(self.rv)
        await durable(self)

    monkeypatch.setattr(type(store), "durable", counting)
    cp = ControlPlane(ControlPlaneOptions(clock=FakeClock(), storage=store))
    try:
        got = await _bind_all(cp, 5)
        bindings = [g for g in got if isinstance(g, dict)]
        assert (
            bindings
            == [{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}] * 5
        )
        assert [g[0] for g in got if isinstance(g, tuple)] == [f"n{i}" for i in range(5)]
    finally:
        await cp.stop()
    writes = len(waited)
    if backend == "sqlite":
        # every write waited, the bindings too: 1 namespace + 5 pods + 5 bindings
        assert writes == 11
    else:
        assert writes == 0  # every write acknowledged at apply: creates and bindings alike
