"""A record buffered for a watch whose reader shares what it hands out (the informers of this
process) keeps its writer's dict until that reader has it, however long the burst of writes: the
reader gets the dict as built instead of a decode of the bytes, every other reader sees what it
saw, and the dicts are dropped as before once replaced."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson

from apiserver.client.interface import GVR
from apiserver.server.instance import build_api
from apiserver.server.localclient import LocalClient
from apiserver.storage import cache
from apiserver.storage import interface as storage_interface
from apiserver.storage.memory import MemoryStorage

R = ("", "configmaps")
LAG = 4


def cm(name: str, v: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "d"}, "data": {"v": str(v)}}


def burst(s: MemoryStorage, rng: random.Random, n: int) -> dict[int, dict[str, Any]]:
    """``n`` random writes (creates, updates, deletes of a few names): the dict each writer built
    (and handed over to the store), by revision."""
    built: dict[int, dict[str, Any]] = {}
    live: set[str] = set()
    for i in range(n):
        name = f"c{rng.randrange(6)}"
        if name in live and rng.random() < 0.2:
            s.delete(R, ("d", name))
            live.discard(name)
            continue
        obj = cm(name, i)
        rec = s.update(R, ("d", name), obj) if name in live else s.create(R, ("d", name), obj)
        live.add(name)
        built[rec.rv] = obj
    return built


def read(s: MemoryStorage, shares: bool, monkeypatch: Any, seed: int) -> tuple[list[Any], int, int]:
    """One watch from the start, read after a random burst longer than the lag: what its reader
    hands out (shared, as an informer's read does), how many records it decoded, and how many of
    the current revisions it got as their writers built them."""
    monkeypatch.setattr(cache, "RELEASE_LAG", LAG)
    rng = random.Random(seed)
    w, _ = s.watch(R, "", None, s.rv, False)
    if shares:
        s.shared_by_reader(w)
    plain, _ = s.watch(R, "", None, s.rv, False)  # a reader that copies: unaffected
    built = burst(s, rng, 40)
    decoded = 0
    real = orjson.loads

    def counting(raw: Any) -> Any:
        nonlocal decoded
        decoded += 1
        return real(raw)

    records = w.drain()
    monkeypatch.setattr(storage_interface.orjson, "loads", counting)
    handed = [(t, r.shared()) for t, r in records]
    monkeypatch.setattr(storage_interface.orjson, "loads", real)
    assert handed == [(t, r.copy()) for t, r in plain.drain()]  # both readers see the same events
    for (_, obj), (_, rec) in zip(handed, records, strict=True):
        assert obj == orjson.loads(rec.raw)
    current = [
        obj is built.get(rec.rv)
        for (_, obj), (_, rec) in zip(handed, records, strict=True)
        if s.get(R, (obj["metadata"]["namespace"], obj["metadata"]["name"])) is rec
    ]
    w.close()
    plain.close()
    return handed, decoded, sum(current) - len(current)


def test_a_sharing_reader_gets_a_long_burst_as_built_and_the_same_objects(monkeypatch: Any) -> None:
    for seed in range(8):
        fast, fast_decoded, fast_missed = read(MemoryStorage(initial_rv=0), True, monkeypatch, seed)
        general, general_decoded, general_missed = read(MemoryStorage(initial_rv=0), False, monkeypatch, seed)
        assert fast == general
        # every current revision reached the sharing reader as built; the general path decoded
        # those the lag had released (a revision replaced while buffered may still be decoded)
        assert fast_missed == 0 and general_missed < 0, seed
        assert fast_decoded <= general_decoded + general_missed, (seed, fast_decoded, general_decoded)


def test_a_current_awaited_record_is_handed_out_as_built(monkeypatch: Any) -> None:
    monkeypatch.setattr(cache, "RELEASE_LAG", LAG)
    s = MemoryStorage(initial_rv=0)
    w, _ = s.watch(R, "", None, s.rv, False)
    s.shared_by_reader(w)
    built = [cm(f"c{i}", 0) for i in range(3 * LAG)]
    for obj in built:
        s.create(R, ("d", obj["metadata"]["name"]), obj)
    handed = [r.shared() for _, r in w.drain()]
    assert all(h is b for h, b in zip(handed, built, strict=True))
    # shared now: kept while current, dropped after the lag once replaced, as a shared record is
    recs = [s.get(R, ("d", f"c{i}")) for i in range(3 * LAG)]
    for i in range(3 * LAG):
        s.update(R, ("d", f"c{i}"), cm(f"c{i}", 1))
    assert all(r is not None and r._obj is None for r in recs[: 2 * LAG])
    w.close()


def test_awaited_records_replaced_before_they_are_read_are_dropped_after_the_lag(monkeypatch: Any) -> None:
    monkeypatch.setattr(cache, "RELEASE_LAG", LAG)
    s = MemoryStorage(initial_rv=0)
    w, _ = s.watch(R, "", None, s.rv, False)
    s.shared_by_reader(w)
    first = [s.create(R, ("d", f"c{i}"), cm(f"c{i}", 0)) for i in range(3 * LAG)]
    assert all(r._obj is not None for r in first)  # awaited, past the lag too
    for i in range(3 * LAG):  # replaced, still unread
        s.update(R, ("d", f"c{i}"), cm(f"c{i}", 1))
    for i in range(3 * LAG):  # and replaced again: the first revisions are history only
        s.update(R, ("d", f"c{i}"), cm(f"c{i}", 2))
    assert all(r._obj is None for r in first)
    assert [r.shared()["data"]["v"] for _, r in w.drain()] == ["0"] * (3 * LAG) + ["1"] * (3 * LAG) + [
        "2"
    ] * (3 * LAG)
    w.close()


def test_a_reader_that_copies_lets_the_lag_release_as_before(monkeypatch: Any) -> None:
    monkeypatch.setattr(cache, "RELEASE_LAG", LAG)
    s = MemoryStorage(initial_rv=0)
    w, _ = s.watch(R, "", None, s.rv, False)
    recs = [s.create(R, ("d", f"c{i}"), cm(f"c{i}", 0)) for i in range(3 * LAG)]
    assert [r._obj is None for r in recs] == [True] * (2 * LAG) + [False] * LAG
    w.close()


PODS = GVR("", "v1", "pods")


def test_informer_watches_of_the_in_process_client_keep_a_long_burst_decoded(monkeypatch: Any) -> None:
    """Through the in-process client: a read-only watch marks its records awaited, a plain one does not."""
    monkeypatch.setattr(cache, "RELEASE_LAG", LAG)

    async def go() -> None:
        client = LocalClient(build_api())
        rv = (await client.list(PODS, "default"))["metadata"]["resourceVersion"]
        shared = client.watch(PODS, "default", resource_version=rv, read_only=True)
        plain = client.watch(PODS, "default", resource_version=rv)
        body = {"metadata": {"name": "p0"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        await client.create(PODS, body, "default")  # both watches start with it
        first, first_plain = (await anext(shared)).object, (await anext(plain)).object
        assert first == first_plain
        for i in range(1, 3 * LAG):
            await client.create(PODS, dict(body, metadata={"name": f"p{i}"}), "default")
        api_store = client.api.store
        recs = [api_store.get(("", "pods"), ("default", f"p{i}")) for i in range(3 * LAG)]
        assert all(r is not None and r._obj is not None for r in recs)  # none released: awaited
        for i in range(1, 3 * LAG):
            got, copy = (await anext(shared)).object, (await anext(plain)).object
            assert got == copy and got["metadata"]["name"] == f"p{i}"
        await shared.aclose()
        await plain.aclose()

    asyncio.run(go())
