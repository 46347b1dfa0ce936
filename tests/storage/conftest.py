"""The backends the storage contract suite runs against: one entry each in :data:`BACKENDS`.

A backend entry is a function ``(tmp_path, request) -> Backend``; the :class:`Backend` it returns
opens the store on that test's place (a data dir, an etcd prefix…) and opens it again there after
a close, which is how the restart tests see what a persisting backend kept. It may ask for other
fixtures with ``request.getfixturevalue`` (an etcd server, say), and skip with a reason where its
server cannot be had.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from apiserver.storage.interface import Storage
from apiserver.storage.memory import MemoryStorage
from apiserver.storage.sqlite import SQLiteStorage
from tests.etcd_cluster import EtcdCluster


@dataclass
class Backend:
    name: str
    #: whether the state survives close + open (False: a reopened store starts empty)
    persistent: bool
    #: opens a store on this test's place; keyword arguments are the watch cache's options
    factory: Callable[..., Storage]
    opened: list[Storage] = field(default_factory=list)
    #: a reopened store replays the history from before the restart (else it may answer 410)
    replays_history_after_restart: bool = False
    #: a list at a revision the watch cache no longer holds is read from the store (etcd keeps
    #: every revision until it compacts; kube-apiserver reads such pages there)
    lists_past_revisions_from_storage: bool = False

    async def open(self, **cache_options: Any) -> Storage:
        """A started store (its background work running on this loop), closed at teardown."""
        store = self.factory(**cache_options)
        self.opened.append(store)
        await store.start()
        return store

    async def close_all(self) -> None:
        for store in reversed(self.opened):
            await store.close()


def _memory(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return Backend("memory", False, lambda **o: MemoryStorage(**o))


def _sqlite(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    return Backend(
        "sqlite", True, lambda **o: SQLiteStorage(tmp_path / "data", **o), replays_history_after_restart=True
    )


def _etcd(tmp_path: Path, request: pytest.FixtureRequest) -> Backend:
    """A real etcd (one member, shared by the session's tests), each test under its own prefix."""
    from apiserver.storage.etcd import EtcdStorage, parse_servers

    cluster: EtcdCluster = request.getfixturevalue("etcd_server")
    prefix = f"/contract-{uuid.uuid4().hex[:8]}/registry"
    servers = parse_servers(cluster.endpoints)
    return Backend(
        "etcd",
        True,
        lambda **o: EtcdStorage(servers, prefix=prefix, compaction_interval=0, **o),
        lists_past_revisions_from_storage=True,
    )


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    """One etcd member for the session (Debian's etcd-server, installed if missing)."""
    with EtcdCluster(tmp_path_factory.mktemp("etcd"), 1) as cluster:
        yield cluster


#: every backend the contract suite runs against
BACKENDS: dict[str, Callable[[Path, pytest.FixtureRequest], Backend]] = {
    "memory": _memory,
    "sqlite": _sqlite,
    "etcd": _etcd,
}


@pytest.fixture(params=list(BACKENDS))
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    b = BACKENDS[request.param](tmp_path, request)
    try:
        yield b
    finally:
        await b.close_all()


@pytest.fixture
async def store(backend: Backend) -> Storage:
    return await backend.open()


class FakeMonotonic:
    """A monotonic clock the test advances, for compaction by age."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
