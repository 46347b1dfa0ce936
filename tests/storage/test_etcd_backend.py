"""The etcd backend against a real etcd (Debian's etcd-server): what another API server, etcdctl or
a resuming client observes — kube's keys and values, revisions as resourceVersions, writes of one
server seen by another in order, compare-and-swap conflicts, restarts, compaction and 410."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aetcd
import orjson
import pytest

from apiserver.storage.etcd import EtcdError, EtcdStorage, EtcdUnavailable, parse_servers
from apiserver.storage.interface import StoreError
from tests.etcd_cluster import EtcdCluster, free_port

pytestmark = pytest.mark.anyio

CM = ("", "configmaps")


@pytest.fixture
def etcd(etcd_server: EtcdCluster) -> EtcdCluster:
    """The session's one-member etcd (tests/storage/conftest.py)."""
    return etcd_server


@pytest.fixture
def prefix() -> str:
    """Each test its own keyspace on the shared etcd."""
    return f"/t-{uuid.uuid4().hex[:8]}/registry"


@pytest.fixture
async def raw(etcd: EtcdCluster) -> AsyncIterator[aetcd.Client]:
    """etcd as etcdctl sees it."""
    m = etcd.members[0]
    client = aetcd.Client(host="127.0.0.1", port=m.client_port, timeout=10)
    await client.connect()
    try:
        yield client
    finally:
        await client.close()


class Servers:
    """API servers' storages on one etcd, closed at the end of the test."""

    def __init__(self, endpoints: str, prefix: str) -> None:
        self.endpoints = endpoints
        self.prefix = prefix
        self.opened: list[EtcdStorage] = []

    async def open(self, **kw: object) -> EtcdStorage:
        kw.setdefault("compaction_interval", 0)
        store = EtcdStorage(parse_servers(self.endpoints), prefix=self.prefix, **kw)  # type: ignore[arg-type]
        await store.start()
        self.opened.append(store)
        return store

    async def close(self) -> None:
        for s in self.opened:
            await s.close()


@pytest.fixture
async def servers(etcd: EtcdCluster, prefix: str, raw: aetcd.Client) -> AsyncIterator[Servers]:
    """The test's storages, closed before ``raw`` (which is why it asks for ``raw``).

    gRPC's asyncio layer has one completion queue per process, bound to the loop of the first
    channel (``raw``'s: the test's loop) and torn down when the last channel closes. Were a
    storage's channel the last, that teardown would run on the storage's own thread and unregister
    the test loop's reader from there, racing the test loop, which could still run the reader
    once its socket was closed (``OSError: [Errno 9] Bad file descriptor`` at teardown, seen in
    CI). Opening ``raw`` first and closing it last keeps the teardown on the queue's own loop.
    """
    s = Servers(etcd.endpoints, prefix)
    try:
        yield s
    finally:
        await s.close()


def cm(name: str, ns: str = "default", **data: str) -> dict:
    obj: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}
    if data:
        obj["data"] = data
    return obj


async def next_events(w, n: int, timeout: float = 10.0) -> list[tuple[str, str, int]]:
    """The next ``n`` events of watcher ``w`` as (type, name, resourceVersion)."""
    out: list[tuple[str, str, int]] = []

    async def run() -> None:
        while len(out) < n:
            await w.wait(timeout)
            out.extend((t, r.obj["metadata"]["name"], r.rv) for t, r in w.drain())

    await asyncio.wait_for(run(), timeout)
    return out


async def test_objects_are_stored_under_kube_keys_as_json_without_resource_version(
    servers, raw, prefix
) -> None:
    a = await servers.open()
    rec = a.create(CM, ("default", "app"), cm("app", k="v"))
    node = a.create(
        ("", "nodes"), ("", "n1"), {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    )
    got = await raw.get(f"{prefix}/configmaps/default/app".encode())
    assert got is not None and got.mod_revision == rec.rv
    stored = orjson.loads(got.value)
    assert "resourceVersion" not in stored["metadata"] and stored["data"] == {"k": "v"}
    assert rec.obj["metadata"]["resourceVersion"] == str(rec.rv)
    got = await raw.get(f"{prefix}/minions/n1".encode())
    assert got is not None and got.mod_revision == node.rv


async def test_a_write_through_one_server_is_seen_by_a_watch_on_the_other_in_order(servers) -> None:
    a = await servers.open()
    b = await servers.open()
    b.fresh()
    w, initial = b.watch(CM, "default", None, b.rv, False)
    assert initial == []
    r1 = a.create(CM, ("default", "x"), cm("x"))
    r2 = a.update(CM, ("default", "x"), cm("x", k="1"), r1.rv)
    r3 = a.create(CM, ("default", "y"), cm("y"))
    r4 = a.delete(CM, ("default", "x"))
    assert await next_events(w, 4) == [
        ("ADDED", "x", r1.rv),
        ("MODIFIED", "x", r2.rv),
        ("ADDED", "y", r3.rv),
        ("DELETED", "x", r4.rv),
    ]
    assert r1.rv < r2.rv < r3.rv < r4.rv
    b.fresh()
    assert b.get(CM, ("default", "x")) is None
    assert b.get(CM, ("default", "y")).raw == r3.raw


async def test_writes_from_two_servers_conflict_on_the_stored_revision(servers) -> None:
    a = await servers.open()
    b = await servers.open()
    r1 = a.create(CM, ("default", "x"), cm("x"))
    b.fresh()
    a.update(CM, ("default", "x"), cm("x", by="a"), r1.rv)
    # b has not caught up: its update compares the revision it read and loses, with Conflict
    with pytest.raises(StoreError) as e:
        b.update(CM, ("default", "x"), cm("x", by="b"), r1.rv)
    assert e.value.reason == "Conflict"
    with pytest.raises(StoreError) as e:
        b.create(CM, ("default", "x"), cm("x"))
    assert e.value.reason == "AlreadyExists"
    assert b.get(CM, ("default", "x")).obj["data"] == {"by": "a"}  # the failed write caught b up
    c = b.create(CM, ("default", "z"), cm("z"))
    a.fresh()  # as the API server does before its read-check-write
    a.delete(CM, ("default", "z"))
    with pytest.raises(StoreError) as e:
        b.update(CM, ("default", "z"), cm("z", k="v"), c.rv)
    assert e.value.reason == "NotFound"


async def test_a_restarted_server_keeps_objects_and_resource_versions(servers) -> None:
    a = await servers.open()
    r1 = a.create(CM, ("default", "x"), cm("x", k="v"))
    r2 = a.create(
        ("", "namespaces"),
        ("", "team"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
    )
    await a.close()
    again = await servers.open()
    assert again.get(CM, ("default", "x")).raw == r1.raw
    assert again.get(("", "namespaces"), ("", "team")).rv == r2.rv
    assert again.rv >= r2.rv
    # history from before the restart is not in this server's cache: resuming there is 410, never a gap
    for skey in (CM, ("apps", "deployments")):
        with pytest.raises(StoreError) as e:
            again.watch(skey, "", None, r1.rv, False)
        assert e.value.reason == "Expired"
    items, rv, _ = again.list(CM, "default")
    assert [r.rv for r in items] == [r1.rv] and rv == again.rv
    # a list at a revision from before the restart (a continue token) is read from etcd, as kube does
    a_page, rv, _ = again.list(CM, "default", at_rv=r1.rv)
    assert [r.raw for r in a_page] == [r1.raw] and rv == r1.rv
    assert again.list(("", "namespaces"), at_rv=r1.rv)[0] == []  # "team" came one revision later


async def test_compaction_makes_older_watches_expire_on_every_server(servers, raw) -> None:
    a = await servers.open()
    b = await servers.open()
    r1 = a.create(CM, ("default", "x"), cm("x"))
    a.update(CM, ("default", "x"), cm("x", k="1"), r1.rv)
    b.fresh()
    w, events = b.watch(CM, "default", None, r1.rv, False)
    assert [t for t, _ in events] == ["MODIFIED"]
    w.close()
    # kube's compactor: the first round records the revision, the next compacts to it
    version, rev = await asyncio.wrap_future(a._thread.submit(a.compact_once(0, 0)))
    r3 = a.create(CM, ("default", "y"), cm("y"))
    version, _ = await asyncio.wrap_future(a._thread.submit(a.compact_once(version, rev)))
    assert "required revision has been compacted" in await _read_at(raw, r1.rv)
    # b learns of a's compaction from compact_rev_key on its own next round
    await asyncio.wrap_future(b._thread.submit(b.compact_once(0, 0)))
    b.fresh()
    for store in (a, b):
        with pytest.raises(StoreError) as e:
            store.watch(CM, "default", None, r1.rv, False)
        assert e.value.reason == "Expired"
        with pytest.raises(StoreError) as e:  # neither the cache nor etcd holds it any more
            store.list(CM, "default", at_rv=r1.rv)
        assert e.value.reason == "Expired"
        _, events = store.watch(CM, "default", None, rev, False)
        assert [r.rv for _, r in events] == [r3.rv]


async def _read_at(raw: aetcd.Client, rev: int) -> str:
    """etcd's answer to a read at an old revision (etcdctl get --rev)."""
    from aetcd import rpc

    try:
        await raw.kvstub.Range(rpc.RangeRequest(key=b"x", revision=rev), timeout=5)
    except rpc.AioRpcError as e:
        return str(e.details())
    return "read succeeded"


async def test_consistent_reads_reach_revisions_written_outside_the_prefix(servers, raw) -> None:
    a = await servers.open()
    a.create(CM, ("default", "x"), cm("x"))
    await raw.put(b"/elsewhere/key", b"1")
    current = (await raw.get(b"/elsewhere/key")).mod_revision
    a.fresh()  # the watch reports progress through that revision though no event of ours is there
    assert a.rv >= current


async def test_unreachable_etcd_fails_at_start_with_a_clear_error(prefix) -> None:
    port = free_port()
    with pytest.raises(EtcdUnavailable, match=f"cannot reach etcd at 127.0.0.1:{port}"):
        EtcdStorage(parse_servers(f"http://127.0.0.1:{port}"), prefix=prefix, request_timeout=5)


async def test_foreign_data_under_the_prefix_is_refused(servers, raw, prefix) -> None:
    await raw.put(f"{prefix}/pods/default/p".encode(), b"k8s\x00\n\x09protobuf")
    with pytest.raises(ValueError, match="does not hold a JSON object"):
        await servers.open()


async def test_three_members_serve_one_cluster_and_survive_losing_one(tmp_path: Path, prefix: str) -> None:
    with EtcdCluster(tmp_path, 3) as cluster:
        ends = [m.client_url for m in cluster.members]
        a = EtcdStorage(parse_servers(",".join(ends)), prefix=prefix, compaction_interval=0)
        b = EtcdStorage(parse_servers(ends[2]), prefix=prefix, compaction_interval=0)
        try:
            await a.start()
            await b.start()
            b.fresh()
            w, _ = b.watch(CM, "", None, b.rv, False)
            r1 = a.create(CM, ("default", "x"), cm("x"))
            # a talks to the first member; stop it: a's requests and watch move to the others
            first = cluster.members[0].proc
            first.terminate()
            first.wait(15)
            r2 = a.update(CM, ("default", "x"), cm("x", k="after"), r1.rv)
            assert await next_events(w, 2) == [("ADDED", "x", r1.rv), ("MODIFIED", "x", r2.rv)]
            b.fresh()
            assert b.get(CM, ("default", "x")).rv == r2.rv
        finally:
            await a.close()
            await b.close()


async def test_a_server_whose_watch_fell_behind_compaction_relists_and_its_watchers_are_told(
    servers, raw
) -> None:
    a = await servers.open()
    b = await servers.open()
    a.create(CM, ("default", "x"), cm("x"))
    b.fresh()
    w, _ = b.watch(CM, "default", None, b.rv, False)
    resume_at = b.rv + 1
    # b's watch stream is cut; meanwhile a writes and etcd's history is compacted past b's position
    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_cancel_tasks(b), b._thread.loop))
    y = a.create(CM, ("default", "y"), cm("y"))
    gone = a.delete(CM, ("default", "x"))
    await raw.compact(gone.rv)
    b._thread.loop.call_soon_threadsafe(b._spawn, b._watch_loop(resume_at))
    b.fresh()  # the resumed watch is refused as compacted: b lists etcd afresh
    assert b.get(CM, ("default", "x")) is None
    assert b.get(CM, ("default", "y")).rv == y.rv
    assert w.closed and "re-list" in (w.error or "")
    with pytest.raises(StoreError) as e:
        b.watch(CM, "default", None, resume_at, False)
    assert e.value.reason == "Expired"


async def _connected(store: EtcdStorage, timeout: float = 10.0) -> None:
    """Wait until the store's gRPC channel has reconnected to etcd."""
    ready = asyncio.run_coroutine_threadsafe(store._client.channel.channel_ready(), store._thread.loop)
    await asyncio.wait_for(asyncio.wrap_future(ready), timeout)


async def _cancel_tasks(store: EtcdStorage) -> None:
    for t in store._tasks:
        t.cancel()
    store._tasks = []


async def test_while_etcd_is_down_requests_fail_and_once_it_is_back_everything_resumes(
    tmp_path: Path, prefix: str
) -> None:
    with EtcdCluster(tmp_path, 1) as cluster:
        ends = parse_servers(cluster.endpoints)
        a = EtcdStorage(ends, prefix=prefix, compaction_interval=0, request_timeout=5)
        b = EtcdStorage(ends, prefix=prefix, compaction_interval=0, request_timeout=5)
        try:
            await a.start()
            await b.start()
            r1 = a.create(CM, ("default", "x"), cm("x"))
            b.fresh()
            w, _ = b.watch(CM, "default", None, b.rv, False)
            assert await a.check() is None  # the /livez and /readyz etcd check
            cluster.kill(0)
            with pytest.raises(EtcdError, match="etcd request failed"):
                a.fresh()
            assert (await a.check() or "").startswith(("etcd request failed", "etcd did not answer"))
            with pytest.raises(EtcdError):
                a.update(CM, ("default", "x"), cm("x", k="lost"), r1.rv)
            cluster.restart(0)
            await _connected(a)
            assert await a.check() is None
            r2 = a.update(CM, ("default", "x"), cm("x", k="after"), r1.rv)
            # b's watch resumed after the last revision it had: nothing missed, nothing twice
            assert await next_events(w, 1) == [("MODIFIED", "x", r2.rv)]
            b.fresh()
            assert b.get(CM, ("default", "x")).obj["data"] == {"k": "after"}
        finally:
            await a.close()
            await b.close()
