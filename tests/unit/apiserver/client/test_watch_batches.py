"""The in-process client's watch in batches against its watch one event at a time.

``LocalClient.watch_batches`` hands out what a watch buffered at each wake-up as one list of
``(type, object)`` pairs, and the informers read it (``Informer._batches``) instead of a
:class:`WatchEvent` per event. Random writes (creates, updates moving pods in and out of a
``status.phase`` selector, bindings, deletes; several per loop turn or one) are watched at once
by the same watches both ways: the flattened batches must be ``watch``'s events (same types,
same objects, same order), and informers reading batches must make the same handler calls with
the same objects, in the same order, and hold the same cache and resourceVersion as informers
reading ``watch``'s events (a client that has no ``watch_batches``, as the HTTP client).
Closing ``watch``'s iterator must end the watch underneath it at once.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
import pytest

from apiserver.client.informer import Informer
from apiserver.client.interface import NAMESPACES, PODS
from apiserver.server.localclient import LocalClient
from gangplane.controlplane import ControlPlane

pytestmark = pytest.mark.anyio

NON_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"


class _EventsOnly:
    """The in-process client without ``watch_batches``: the informer's general path."""

    def __init__(self, client: LocalClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        if name == "watch_batches":
            raise AttributeError(name)
        return getattr(self._client, name)


def _pod(name: str, rnd: random.Random) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": rnd.choice(["a", "b"])}},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x"}]},
    }


async def _writes(c: LocalClient, rnd: random.Random, n: int, prefix: str = "p") -> None:
    """Four writers' random pod writes in namespaces ``ns0``/``ns1`` at once (a watch then
    buffers several per wake-up, as a gang's binding tasks make it)."""
    await asyncio.gather(
        *(_writer(c, random.Random(rnd.random()), n // 4, f"{prefix}{k}-") for k in range(4))
    )


async def _writer(c: LocalClient, rnd: random.Random, n: int, prefix: str) -> None:
    """One writer's random writes of its own pods, a random number per loop turn."""
    live: dict[tuple[str, str], bool] = {}  # (ns, name) -> bound
    for i in range(n):
        ns = rnd.choice(["ns0", "ns1"])
        names = [k for k in live if k[0] == ns]
        r = rnd.random()
        if r < 0.35 or not names:
            name = f"{prefix}{i}"
            await c.create(PODS, _pod(name, rnd), ns)
            live[(ns, name)] = False
        elif r < 0.6:
            key = rnd.choice(names)
            pod = await c.get(PODS, key[1], ns)
            pod["status"]["phase"] = rnd.choice(["Pending", "Running", "Succeeded", "Failed"])
            await c.update_status(PODS, pod, ns)
        elif r < 0.8:
            key = rnd.choice(names)
            if not live[key]:
                body = {"metadata": {"name": key[1]}, "target": {"kind": "Node", "name": f"n{i}"}}
                await c.create_subresource(PODS, key[1], "binding", body, ns)
                live[key] = True
        else:
            key = rnd.choice(names)
            await c.delete(PODS, key[1], ns)
            del live[key]
        for _ in range(rnd.choice([0, 0, 1, 3])):
            await asyncio.sleep(0)


def _informers(client: Any, log: list[tuple[Any, ...]]) -> list[Informer]:
    out = []
    for k, (ns, selector) in enumerate((("", NON_TERMINAL), ("", ""), ("ns1", ""))):
        inf = Informer(client, PODS, ns, field_selector=selector)
        inf.add_event_handler(
            lambda o, k=k: log.append((k, "add", o)),
            lambda a, b, k=k: log.append((k, "update", a, b)),
            lambda o, k=k: log.append((k, "delete", o)),
        )
        out.append(inf)
    return out


@pytest.mark.parametrize("seed", range(4))
async def test_batched_informers_match_the_one_by_one_path(plane: ControlPlane, seed: int) -> None:
    rnd = random.Random(seed)
    writer = plane.client("writer")
    for ns in ("ns0", "ns1"):
        await writer.create(NAMESPACES, {"metadata": {"name": ns}})
    batched_log: list[tuple[Any, ...]] = []
    general_log: list[tuple[Any, ...]] = []
    batched = _informers(plane.client("batched"), batched_log)
    general = _informers(_EventsOnly(plane.client("general")), general_log)
    for inf in batched + general:
        inf.start()
    for inf in batched + general:
        await inf.wait_for_sync()
    await _writes(writer, rnd, rnd.randint(40, 120))
    await writer.create(PODS, _pod("last", rnd), "ns1")  # seen by every informer
    last = str(plane.api.store.rv)
    while any(inf.resource_version != last for inf in batched + general):
        await asyncio.sleep(0)
    assert len(batched_log) == len(general_log) > 0
    for b, g in zip(batched_log, general_log, strict=True):
        assert b[:2] == g[:2]
        assert b[2:] == g[2:]
        if b[1] != "delete":  # the store's own objects (a pod leaving a selection is restamped per watch)
            assert all(x is y for x, y in zip(b[2:], g[2:], strict=True))
    for b_inf, g_inf in zip(batched, general, strict=True):
        assert list(b_inf._items) == list(g_inf._items)
        assert all(b_inf._items[k] is g_inf._items[k] for k in g_inf._items)
        assert b_inf.resource_version == g_inf.resource_version
    for inf in batched + general:
        await inf.stop()


@pytest.mark.parametrize("seed", range(3))
async def test_batches_and_events_are_the_store_watch_s(plane: ControlPlane, seed: int) -> None:
    """Both forms against the watch cache's own watcher opened alike (the reference: what the
    client's generators turn into events), bookmarks aside: same types, same objects, same order."""
    rnd = random.Random(seed)
    writer = plane.client("writer")
    for ns in ("ns0", "ns1"):
        await writer.create(NAMESPACES, {"metadata": {"name": ns}})
    await _writes(writer, rnd, 12, "q")  # some state before the watches: their initial events
    c = plane.client("reader")
    rd = plane.api.registry.get("", "v1", "pods")
    assert rd is not None
    rv = str(plane.api.store.rv)
    configs = []
    for read_only in (True, False):
        for ns, selector in (("", NON_TERMINAL), ("", ""), ("ns1", "")):
            initial = rnd.random() < 0.5
            configs.append((ns, selector, read_only, initial))
    streams: list[tuple[Any, list[Any]]] = []
    raws = []
    for ns, selector, read_only, initial in configs:
        kw: dict[str, Any] = {"field_selector": selector, "read_only": read_only, "allow_bookmarks": True}
        if initial:
            kw["send_initial_events"] = True
        else:
            kw["resource_version"] = rv
        streams.append((c.watch(PODS, ns, **kw), []))
        streams.append((c.watch_batches(PODS, ns, **kw), []))
        watcher, first, _ = plane.api.watch(
            rd,
            ns,
            field_selector=selector,
            resource_version="" if initial else rv,
            resource_version_match="NotOlderThan" if initial else "",
            send_initial_events=True if initial else None,
            allow_bookmarks=True,
        )
        raws.append((watcher, list(first)))

    async def pump(it: Any, out: list[Any]) -> None:
        async for item in it:
            out.append(item)

    tasks = [asyncio.create_task(pump(it, out)) for it, out in streams]
    await _writes(writer, rnd, rnd.randint(40, 100))
    for _ in range(20):
        await asyncio.sleep(0)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    sizes = []
    for k, (watcher, first) in enumerate(raws):
        want = [(t, orjson.loads(r.raw)) for t, r in first + watcher.drain()]
        watcher.close()
        events = [(e.type, e.object) for e in streams[2 * k][1] if e.type != "BOOKMARK"]
        batches = streams[2 * k + 1][1]
        assert all(batches)  # no empty batch
        sizes.extend(len(b) for b in batches)
        flat = [pair for batch in batches for pair in batch if pair[0] != "BOOKMARK"]
        assert len(want) > 0
        assert events == want
        assert flat == want
    assert max(sizes) > 1  # the writers made watches buffer several events at a time


async def test_closing_the_watch_ends_the_watch_underneath(plane: ControlPlane) -> None:
    c = plane.client("reader")
    rd = plane.api.registry.get("", "v1", "pods")
    assert rd is not None
    watchers = plane.api.store.resource(plane.api._skey(rd)).watchers
    before = len(watchers)
    it = c.watch(PODS, "")
    await c.create(NAMESPACES, {"metadata": {"name": "ns0"}})
    pump = asyncio.create_task(it.__anext__())
    await c.create(PODS, _pod("p", random.Random(0)), "ns0")
    first = await pump
    assert first.type == "ADDED"
    assert len(watchers) == before + 1
    await it.aclose()  # type: ignore[attr-defined]
    assert len(watchers) == before
