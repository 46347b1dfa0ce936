"""Watchers of one resource are offered each event, and so woken, in the order they started:
a run's fan-out order does not depend on where the watchers happen to sit in memory."""

from __future__ import annotations

import asyncio

import pytest

from apiserver.storage.cache import Watcher
from apiserver.storage.memory import MemoryStorage

SKEY = ("", "configmaps")


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


async def _resumed(store: MemoryStorage, watchers: list[Watcher], write: str) -> list[int]:
    """Which watchers' waiting tasks resume after one write, in the order they resume."""
    order: list[int] = []

    async def waiter(i: int, w: Watcher) -> None:
        assert await w.wait(5) is True
        w.drain()
        order.append(i)

    tasks = [asyncio.create_task(waiter(i, w)) for i, w in enumerate(watchers) if not w.closed]
    await asyncio.sleep(0)  # every task waits on its watcher
    store.create(SKEY, ("ns", write), _cm(write))
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    return order


@pytest.mark.parametrize("count", [2, 40, 300])
def test_watchers_are_woken_in_the_order_they_started(count: int) -> None:
    async def run() -> None:
        store = MemoryStorage()
        watchers = [store.watch(SKEY, "ns", None, None, False)[0] for _ in range(count)]
        assert await _resumed(store, watchers, "a") == list(range(count))

    asyncio.run(run())


def test_a_closed_watcher_leaves_the_order_and_a_new_one_comes_last() -> None:
    async def run() -> None:
        store = MemoryStorage()
        watchers = [store.watch(SKEY, "ns", None, None, False)[0] for _ in range(50)]
        for i in (0, 17, 49):
            watchers[i].close()
        watchers.append(store.watch(SKEY, "ns", None, None, False)[0])
        open_ones = [i for i, w in enumerate(watchers) if not w.closed]
        assert await _resumed(store, watchers, "b") == open_ones
        assert store.watcher_count() == 48

    asyncio.run(run())
