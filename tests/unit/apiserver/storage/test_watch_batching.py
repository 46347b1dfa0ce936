"""Watch wakeups: batched watchers (HTTP streams) get every event, in order, woken together;
a watcher's wait times out, and is woken by events and by close, as before."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.storage.interface import ADDED, MODIFIED
from apiserver.storage.memory import MemoryStorage

SKEY = ("", "configmaps")


def _cm(name: str, v: str = "1") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"v": v},
    }


def test_batched_watchers_see_every_event_in_order_in_one_waking() -> None:
    asyncio.run(_batched_watchers_see_every_event_in_order_in_one_waking())


async def _batched_watchers_see_every_event_in_order_in_one_waking() -> None:
    store = MemoryStorage(watch_batch_interval=0.05)
    watchers = []
    for _ in range(3):
        w, initial = store.watch(SKEY, "ns", None, None, False)
        assert initial == []
        store.batch_wakeups(w)
        watchers.append(w)
    for i in range(5):
        store.create(SKEY, ("ns", f"c{i}"), _cm(f"c{i}"))
    rec = store.get(SKEY, ("ns", "c0"))
    assert rec is not None
    store.update(SKEY, ("ns", "c0"), _cm("c0", "2"), rec.rv)
    for w in watchers:
        assert await asyncio.wait_for(w.wait(5), 5) is True
        got = w.drain()
        assert [(t, r.obj["metadata"]["name"]) for t, r in got] == [
            *((ADDED, f"c{i}") for i in range(5)),
            (MODIFIED, "c0"),
        ]
        assert [r.rv for _, r in got] == sorted(r.rv for _, r in got)
    # every watcher without a selector buffered the same items
    assert watchers[0].sent_rv == watchers[1].sent_rv == store.rv


def test_a_batched_watcher_is_woken_at_once_after_a_quiet_spell() -> None:
    asyncio.run(_a_batched_watcher_is_woken_at_once_after_a_quiet_spell())


async def _a_batched_watcher_is_woken_at_once_after_a_quiet_spell() -> None:
    store = MemoryStorage(watch_batch_interval=3600)
    w, _ = store.watch(SKEY, "ns", None, None, False)
    store.batch_wakeups(w)
    waiting = asyncio.ensure_future(w.wait(60))
    await asyncio.sleep(0)
    store.create(SKEY, ("ns", "a"), _cm("a"))
    assert await asyncio.wait_for(waiting, 5) is True
    assert [r.obj["metadata"]["name"] for _, r in w.drain()] == ["a"]


def test_wait_times_out_then_is_woken_by_an_event_and_by_close() -> None:
    asyncio.run(_wait_times_out_then_is_woken_by_an_event_and_by_close())


async def _wait_times_out_then_is_woken_by_an_event_and_by_close() -> None:
    store = MemoryStorage()
    w, _ = store.watch(SKEY, "ns", None, None, False)
    assert await w.wait(0.01) is False
    waiting = asyncio.ensure_future(w.wait(None))  # no timeout: an earlier deadline must not end it
    await asyncio.sleep(0)
    store.create(SKEY, ("ns", "a"), _cm("a"))
    assert await asyncio.wait_for(waiting, 5) is True
    w.drain()
    waiting = asyncio.ensure_future(w.wait(30))
    await asyncio.sleep(0)
    w.close()
    assert await asyncio.wait_for(waiting, 5) is True
    assert w.closed


@pytest.mark.parametrize("timeout", [0.01, 0.0])
def test_a_short_wait_after_a_long_one_times_out_on_its_own_deadline(timeout: float) -> None:
    asyncio.run(_a_short_wait_after_a_long_one_times_out_on_its_own_deadline(timeout))


async def _a_short_wait_after_a_long_one_times_out_on_its_own_deadline(timeout: float) -> None:
    store = MemoryStorage()
    w, _ = store.watch(SKEY, "ns", None, None, False)
    first = asyncio.ensure_future(w.wait(30))
    await asyncio.sleep(0)
    store.create(SKEY, ("ns", "a"), _cm("a"))
    assert await first is True
    w.drain()
    assert await asyncio.wait_for(w.wait(timeout), 5) is False
    w.close()
