"""Informers: list+watch cache, indexers, handlers, resume, and re-list after a broken watch."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.client.informer import OWNER_UID, Informer, owner_uid_index
from apiserver.client.interface import CONFIGMAPS
from apiserver.server.localclient import MutatedCacheObject
from tests.helpers import cm

pytestmark = pytest.mark.anyio


async def until(pred, timeout: float = 5.0) -> None:  # noqa: ANN001
    """Yield to the loop until ``pred()`` holds (informers run on the same loop)."""

    async def run() -> None:
        while not pred():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(run(), timeout)


async def test_cache_handlers_and_indexes(cp, client) -> None:
    owned = cm("b")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u-1"}
    ]
    await client.create(CONFIGMAPS, cm("a"))
    inf = Informer(cp.client("inf"), CONFIGMAPS)
    inf.add_indexer(OWNER_UID, owner_uid_index)
    events: list[tuple[str, str]] = []
    inf.add_event_handler(
        lambda o: events.append(("add", o["metadata"]["name"])),
        lambda old, new: events.append(("update", new["metadata"]["name"])),
        lambda o: events.append(("delete", o["metadata"]["name"])),
    )
    inf.start()
    try:
        await inf.wait_for_sync()
        await client.create(CONFIGMAPS, owned)
        await client.patch(CONFIGMAPS, "a", {"data": {"x": "1"}}, "default")
        await client.delete(CONFIGMAPS, "a", "default")
        await until(lambda: ("delete", "a") in events)
        assert events == [("add", "a"), ("add", "b"), ("update", "a"), ("delete", "a")]
        assert [o["metadata"]["name"] for o in inf.by_index(OWNER_UID, "u-1")] == ["b"]
        assert inf.count_by_index(OWNER_UID, "u-1") == 1 and inf.count_by_index(OWNER_UID, "u-2") == 0
        assert inf.get("default/b") is not None and inf.get("default/a") is None
    finally:
        await inf.stop()


async def test_relist_after_expired_watch_delivers_the_difference(cp, client) -> None:
    store = cp.api.store
    inf = Informer(cp.client("inf"), CONFIGMAPS)
    seen: list[tuple[str, str]] = []
    inf.add_event_handler(
        lambda o: seen.append(("add", o["metadata"]["name"])),
        lambda old, new: seen.append(("update", new["metadata"]["name"])),
        lambda o: seen.append(("delete", o["metadata"]["name"])),
    )
    await client.create(CONFIGMAPS, cm("keep"))
    await client.create(CONFIGMAPS, cm("gone"))
    inf.start()
    try:
        await inf.wait_for_sync()
        # Break the watch and compact history, so resuming from the informer's RV is impossible.
        await inf.stop()
        store.resource(("", "configmaps")).history_size = 1
        await client.delete(CONFIGMAPS, "gone", "default")
        await client.create(CONFIGMAPS, cm("new"))
        await client.patch(CONFIGMAPS, "keep", {"data": {"v": "2"}}, "default")
        relists = inf.relists
        inf.start()
        await until(lambda: inf.relists > relists and inf.get("default/new") is not None)
        assert inf.get("default/gone") is None
        assert inf.get("default/keep")["data"] == {"v": "2"}
        assert ("delete", "gone") in seen and ("add", "new") in seen and ("update", "keep") in seen
    finally:
        await inf.stop()


async def test_resume_from_last_rv_when_stream_ends(cp, client) -> None:
    inf = Informer(cp.client("inf"), CONFIGMAPS)
    inf.start()
    try:
        await inf.wait_for_sync()
        watches = inf.watches
        # End every open watch server-side (as a timeout would); the informer resumes, no re-list.
        for w in list(cp.api.store.resource(("", "configmaps")).watchers):
            w.close()
        await client.create(CONFIGMAPS, cm("after"))
        await until(lambda: inf.get("default/after") is not None)
        assert inf.watches > watches and inf.relists == 1
    finally:
        await inf.stop()


async def test_informers_share_one_object_per_resource_version(cp, client) -> None:
    await client.create(CONFIGMAPS, cm("a"))
    first, second = Informer(cp.client("one"), CONFIGMAPS), Informer(cp.client("two"), CONFIGMAPS)
    for inf in (first, second):
        inf.start()
    try:
        for inf in (first, second):
            await inf.wait_for_sync()
        assert first.get("default/a") is second.get("default/a")  # listed: one shared object
        await client.patch(CONFIGMAPS, "a", {"data": {"x": "1"}}, "default")
        await until(
            lambda: all((i.get("default/a") or {}).get("data") == {"x": "1"} for i in (first, second))
        )
        assert first.get("default/a") is second.get("default/a")  # watched: one shared object
        # a plain get is the caller's own copy
        assert await client.get(CONFIGMAPS, "a", "default") is not first.get("default/a")
    finally:
        await first.stop()
        await second.stop()


async def test_the_mutation_detector_names_a_shared_object_changed_in_place(cp, client) -> None:
    cp.read_only_objects.enabled = True
    await client.create(CONFIGMAPS, cm("a"))
    inf = Informer(cp.client("inf"), CONFIGMAPS)
    inf.start()
    try:
        await inf.wait_for_sync()
        cp.read_only_objects.verify()  # nothing changed yet
        shared = inf.get("default/a")
        saved = shared.pop("data")
        with pytest.raises(MutatedCacheObject, match=r"1 object\(s\) .* ConfigMap default/a@"):
            cp.read_only_objects.verify()
        shared["data"] = saved  # put back, or the fixture's stop fails the test too
        cp.read_only_objects.verify()
    finally:
        await inf.stop()
