"""Shared informers (kube-controller-manager's one factory): one list/watch per resource for every
component of a process, handlers per component, a stopped component takes only its own handlers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from apiserver.api.types import Obj
from apiserver.client.informer import IndexerConflictError, Informer, label_index
from apiserver.client.interface import CONFIGMAPS
from apiserver.client.sharedinformers import SharedInformerFactory
from tests.helpers import cm

pytestmark = pytest.mark.anyio


class Seen:
    """The names a component's handlers were given, awaitable by name (no polling)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._waiters: dict[str, asyncio.Event] = {}

    def __call__(self, obj: Obj, new: Obj | None = None) -> None:
        name = (new or obj)["metadata"]["name"]
        self.names.append(name)
        self._waiters.setdefault(name, asyncio.Event()).set()

    async def wait(self, name: str) -> None:
        await asyncio.wait_for(self._waiters.setdefault(name, asyncio.Event()).wait(), 5)


def watchers(cp) -> int:  # noqa: ANN001
    return cp.api.store.watcher_count()


async def test_two_components_share_one_watch(cp, client) -> None:
    await client.create(CONFIGMAPS, cm("before"))
    shared = SharedInformerFactory(cp.client("shared-informers"))
    a, b = shared.for_component("a"), shared.for_component("b")
    seen_a, seen_b = Seen(), Seen()
    a.informer(CONFIGMAPS).add_event_handler(seen_a, seen_a, None)
    b.informer(CONFIGMAPS).add_event_handler(seen_b, seen_b, None)
    base = watchers(cp)
    a.start()
    b.start()
    await a.wait_for_sync()
    await b.wait_for_sync()
    assert len(shared.informers()) == 1
    assert watchers(cp) == base + 1
    await client.create(CONFIGMAPS, cm("x"))
    await seen_a.wait("x")
    await seen_b.wait("x")
    assert seen_a.names == seen_b.names == ["before", "x"]
    assert a.informer(CONFIGMAPS).get_by_name("default", "x") is b.informer(CONFIGMAPS).get_by_name(
        "default", "x"
    )
    await a.stop()
    await b.stop()
    assert shared.informers() == []
    assert watchers(cp) == base


async def test_a_stopped_component_loses_its_handlers_only(cp, client) -> None:
    shared = SharedInformerFactory(cp.client("shared-informers"))
    a, b = shared.for_component("a"), shared.for_component("b")
    seen_a, seen_b = Seen(), Seen()
    a.informer(CONFIGMAPS).add_event_handler(seen_a, seen_a, None)
    b.informer(CONFIGMAPS).add_event_handler(seen_b, seen_b, None)
    a.start()
    b.start()
    await b.wait_for_sync()
    the_informer = shared.informers()[0]
    base = watchers(cp)
    await a.stop()
    await client.create(CONFIGMAPS, cm("after-a-stopped"))
    await seen_b.wait("after-a-stopped")
    assert "after-a-stopped" not in seen_a.names
    assert the_informer.handler_count() == 1
    assert watchers(cp) == base  # the watch kept serving b

    # a restarted a gets the cache replayed to its new handlers, from the same informer
    again = shared.for_component("a")
    seen_again = Seen()
    again.informer(CONFIGMAPS).add_event_handler(seen_again, seen_again, None)
    again.start()
    await again.wait_for_sync()
    assert seen_again.names == ["after-a-stopped"]
    assert shared.informers() == [the_informer] and watchers(cp) == base
    await client.create(CONFIGMAPS, cm("later"))
    await seen_again.wait("later")
    await seen_b.wait("later")
    await again.stop()
    await b.stop()


async def test_a_handler_removed_during_delivery_does_not_disturb_it(cp, client) -> None:
    inf = Informer(cp.client("inf"), CONFIGMAPS)
    second = Seen()
    regs = []

    def first(obj: Obj) -> None:
        inf.remove_event_handler(regs[0])

    regs.append(inf.add_event_handler(first))
    inf.add_event_handler(second)
    inf.start()
    try:
        await inf.wait_for_sync()
        await client.create(CONFIGMAPS, cm("one"))
        await client.create(CONFIGMAPS, cm("two"))
        await second.wait("two")
        assert second.names == ["one", "two"] and inf.handler_count() == 1
    finally:
        await inf.stop()


def _index_of(label: str) -> Callable[[Obj], list[str]]:
    return label_index(label)


async def test_one_index_name_one_function(cp) -> None:
    shared = SharedInformerFactory(cp.client("shared-informers"))
    a, b = shared.for_component("a"), shared.for_component("b")
    a.informer(CONFIGMAPS).add_indexer("app", _index_of("app"))
    # the same index built again (a restarted controller's closure) is the same index
    b.informer(CONFIGMAPS).add_indexer("app", _index_of("app"))
    with pytest.raises(IndexerConflictError, match="indexer conflict: 'app'"):
        b.informer(CONFIGMAPS).add_indexer("app", _index_of("tier"))
    await a.stop()
    await b.stop()


async def test_one_component_stops_and_starts_an_informer_its_handlers_kept(cp, client) -> None:
    """The garbage collector stops a custom resource's informer when its CRD goes and starts it
    again when it comes back: with the informer shared, it stops only if nobody else wants it, and
    the component's handlers stay attached throughout."""
    shared = SharedInformerFactory(cp.client("shared-informers"))
    a, b = shared.for_component("a"), shared.for_component("b")
    seen_a, seen_b = Seen(), Seen()
    view_a = a.informer(CONFIGMAPS)
    view_a.add_event_handler(seen_a, seen_a, None)
    a.start()
    await a.wait_for_sync()
    base = watchers(cp)

    await view_a.stop()  # a alone wanted it: it stops
    assert watchers(cp) == base - 1 and shared.informers()[0].handler_count() == 1
    view_a.start()
    await view_a.wait_for_sync()
    await client.create(CONFIGMAPS, cm("back"))
    await seen_a.wait("back")

    b.informer(CONFIGMAPS).add_event_handler(seen_b, seen_b, None)
    b.start()
    await view_a.stop()  # b still wants it: it keeps running for b
    assert watchers(cp) == base
    await client.create(CONFIGMAPS, cm("for-b"))
    await seen_b.wait("for-b")
    await b.stop()
    await a.stop()
    assert shared.informers() == [] and watchers(cp) == base - 1
    await view_a.start()  # a late start of a stopped component's view starts nothing
    assert view_a.shared._task is None  # noqa: SLF001 - no informer task was made
