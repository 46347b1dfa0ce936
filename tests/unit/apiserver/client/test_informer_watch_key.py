"""The watch loop's delivery against the informer's general path, on random watch streams.

``Informer._watch`` makes each added or modified object's cache key from the metadata it reads
for the resourceVersion, instead of calling ``key_of`` in ``_upsert``. Random streams of adds,
updates, deletes, bookmarks and a final error, over namespaced and cluster-scoped objects (some
with an empty or missing namespace or name), go once through ``_watch`` and once straight into
``_upsert``/``_remove``: both informers must make the same handler calls in the same order with
the same objects, hold the same cache under the same (interned) keys, the same indices and the
same resourceVersion.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver.client.informer import (
    CONTROLLER_UID,
    OWNER_UID,
    Informer,
    controller_uid_index,
    label_index,
    owner_uid_index,
)
from apiserver.client.interface import PODS, WatchEvent
from apiserver.meta import key_of


class _StreamClient:
    """A client whose watch replays a fixed list of events."""

    def __init__(self, events: list[WatchEvent]) -> None:
        self.events = events

    async def watch(self, *args: Any, **kwargs: Any) -> AsyncIterator[WatchEvent]:
        for ev in self.events:
            yield ev


def _obj(rnd: random.Random, rv: int) -> dict[str, Any]:
    md: dict[str, Any] = {"resourceVersion": str(rv)}
    ns = rnd.choice(["a", "b", "", None])
    if ns is not None:
        md["namespace"] = ns
    name = rnd.choice(["x", "y", "z", "", None])
    if name is not None:
        md["name"] = name
    if rnd.random() < 0.5:
        md["labels"] = {"app": rnd.choice(["web", "db"])}
    if rnd.random() < 0.5:
        md["ownerReferences"] = [{"uid": rnd.choice(["u1", "u2"]), "controller": rnd.random() < 0.5}]
    return {"metadata": md, "spec": {"n": rnd.randint(0, 3)}}


def _stream(rnd: random.Random, n: int) -> list[WatchEvent]:
    out: list[WatchEvent] = []
    for rv in range(1, n + 1):
        r = rnd.random()
        if r < 0.1:
            out.append(WatchEvent("BOOKMARK", {"metadata": {"resourceVersion": str(rv)}}))
        elif r < 0.25:
            out.append(WatchEvent("DELETED", _obj(rnd, rv)))
        else:
            out.append(WatchEvent(rnd.choice(["ADDED", "MODIFIED"]), _obj(rnd, rv)))
    out.append(WatchEvent("ERROR", {"code": 500, "message": "over"}))
    return out


def _informer(client: Any, calls: list[tuple[Any, ...]]) -> Informer:
    inf = Informer(client, PODS)
    inf.add_indexer(OWNER_UID, owner_uid_index)
    inf.add_indexer(CONTROLLER_UID, controller_uid_index)
    inf.add_indexer("app", label_index("app"))
    for h in range(2):
        inf.add_event_handler(
            lambda o, h=h: calls.append((h, "add", o)),
            lambda a, b, h=h: calls.append((h, "update", a, b)),
            lambda o, h=h: calls.append((h, "delete", o)),
        )
    return inf


@pytest.mark.parametrize("seed", range(40))
def test_watch_delivery_matches_the_general_path(seed: int) -> None:
    rnd = random.Random(seed)
    events = _stream(rnd, rnd.randint(1, 80))
    got: list[tuple[Any, ...]] = []
    want: list[tuple[Any, ...]] = []
    inf = _informer(_StreamClient(events), got)
    ref = _informer(None, want)
    assert asyncio.run(inf._watch()) is False
    for ev in events:
        if ev.type in ("BOOKMARK", "ERROR"):
            continue
        md = ev.object["metadata"]
        ref.resource_version = md["resourceVersion"]
        if ev.type == "DELETED":
            ref._remove(ev.object)
        else:
            ref._upsert(ev.object)
    ref.resource_version = events[-2].object["metadata"]["resourceVersion"] if len(events) > 1 else ""
    assert len(got) == len(want)
    assert all(
        g[:2] == w[:2] and all(x is y for x, y in zip(g[2:], w[2:], strict=True))
        for g, w in zip(got, want, strict=True)
    )
    assert list(inf._items) == list(ref._items)
    assert all(inf._items[k] is ref._items[k] for k in ref._items)
    assert all(k is sys.intern(key_of(o)) for k, o in inf._items.items())
    assert inf._indices == ref._indices
    assert inf.resource_version == ref.resource_version
