"""An informer's cache, indices and handler calls against a reference on random event sequences.

The reference is the informer's plain semantics (client-go's ``sharedIndexInformer`` over a
``threadSafeMap``), written the simple way: every handler triple is walked for every event and
asked whether it has a function of the event's type, and every index is computed from scratch
over the cached objects. The informer under test dispatches through per-type tuples, keeps its
indices incrementally and never re-asks the namespace index on an update; on random adds,
updates (labels, owners, node changing or not, same resourceVersion re-delivered), deletes,
deletes of absent objects, re-lists, handlers registered and removed mid-stream (some with
missing functions, some raising) and indexers added late, both must make the same calls in the
same order and hold the same objects under the same index values.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest

from apiserver.client.informer import (
    CONTROLLER_UID,
    NODE_NAME,
    OWNER_UID,
    HandlerRegistration,
    IndexFunc,
    Informer,
    controller_uid_index,
    label_index,
    namespace_index,
    node_name_index,
    owner_uid_index,
)
from apiserver.client.interface import PODS
from apiserver.meta import key_of

INDEXERS: dict[str, IndexFunc] = {
    OWNER_UID: owner_uid_index,
    CONTROLLER_UID: controller_uid_index,
    NODE_NAME: node_name_index,
    "app": label_index("app"),
}
Call = tuple[Any, ...]


class Reference:
    """The cache and the handler calls a client-go informer makes, computed naively."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.indexers: dict[str, IndexFunc] = {"namespace": namespace_index}
        self.handlers: list[tuple[Any, Any, Any]] = []

    def upsert(self, obj: dict[str, Any]) -> None:
        key = key_of(obj)
        old = self.items.get(key)
        self.items[key] = obj
        for on_add, on_update, _ in list(self.handlers):
            if old is None:
                if on_add is not None:
                    _safe(on_add, obj)
            elif on_update is not None:
                _safe(on_update, old, obj)

    def remove(self, obj: dict[str, Any]) -> None:
        if self.items.pop(key_of(obj), None) is None:
            return
        for _, _, on_delete in list(self.handlers):
            if on_delete is not None:
                _safe(on_delete, obj)

    def replace(self, objs: list[dict[str, Any]]) -> None:
        fresh = {key_of(o): o for o in objs}
        for key in [k for k in self.items if k not in fresh]:
            self.remove(self.items[key])
        for key, obj in fresh.items():
            old = self.items.get(key)
            if old is not None and old["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]:
                continue
            self.upsert(obj)

    def indices(self) -> dict[str, dict[str, set[str]]]:
        out: dict[str, dict[str, set[str]]] = {}
        for name, fn in self.indexers.items():
            idx: dict[str, set[str]] = {}
            for key, obj in self.items.items():
                for v in fn(obj):
                    idx.setdefault(v, set()).add(key)
            out[name] = idx
        return out


def _safe(fn: Any, *args: Any) -> None:
    with contextlib.suppress(Exception):  # the informer logs a handler's failure and goes on
        fn(*args)


class Boom(Exception):
    pass


def _handlers(log: list[Call], n: int, rnd: random.Random) -> tuple[Any, Any, Any]:
    """Handler ``n``: each function present or not, and raising now and then (after logging)."""
    raises = rnd.random() < 0.3

    def add(o: dict[str, Any]) -> None:
        log.append(("add", n, key_of(o), o["metadata"]["resourceVersion"]))
        if raises and o["metadata"]["resourceVersion"] % 3 == 0:
            raise Boom

    def update(old: dict[str, Any], new: dict[str, Any]) -> None:
        log.append(
            ("update", n, key_of(new), old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
        )
        if raises and new["metadata"]["resourceVersion"] % 3 == 0:
            raise Boom

    def delete(o: dict[str, Any]) -> None:
        log.append(("delete", n, key_of(o), o["metadata"]["resourceVersion"]))

    return (
        add if rnd.random() < 0.8 else None,
        update if rnd.random() < 0.8 else None,
        delete if rnd.random() < 0.8 else None,
    )


def _pod(rnd: random.Random, ns: str, name: str, rv: int) -> dict[str, Any]:
    owners = [
        {"uid": rnd.choice(["u1", "u2", "u3"]), "controller": rnd.random() < 0.5}
        for _ in range(rnd.choice([0, 1, 1, 2]))
    ]
    md: dict[str, Any] = {"namespace": ns, "name": name, "ownerReferences": owners, "resourceVersion": rv}
    if rnd.random() < 0.7:
        md["labels"] = {"app": rnd.choice(["a", "b"])}
    if not ns:
        del md["namespace"]
    return {"metadata": md, "spec": {"nodeName": rnd.choice(["", "n1", "n2"])}}


def _informer_indices(inf: Informer, names: list[str]) -> dict[str, dict[str, set[str]]]:
    return {name: {v: set(keys) for v, keys in inf._indices[name].items()} for name in names}


@pytest.mark.parametrize("seed", range(12))
def test_informer_makes_the_reference_calls_and_holds_its_indices(seed: int) -> None:
    rnd = random.Random(seed)
    inf = Informer(None, PODS)  # type: ignore[arg-type]  # fed directly, never started
    ref = Reference()
    got: list[Call] = []
    want: list[Call] = []
    regs: list[tuple[HandlerRegistration, tuple[Any, Any, Any]]] = []
    pending = list(INDEXERS.items())
    rnd.shuffle(pending)
    keys = [(ns, f"p{i}") for ns in ("x", "y", "") for i in range(6)]
    rv = 0
    for step in range(400):
        roll = rnd.random()
        if roll < 0.05 or not regs:
            n = len(regs) + step * 100
            # one random triple, called through two logs: the informer's and the reference's
            shape = _handlers(got, n, random.Random(seed * 1000 + step))
            mirror = _handlers(want, n, random.Random(seed * 1000 + step))
            regs.append((inf.add_event_handler(*shape), mirror))
            ref.handlers.append(mirror)
            if mirror[0] is not None:
                for obj in list(ref.items.values()):  # the late handler's synthetic adds
                    _safe(mirror[0], obj)
        elif roll < 0.08 and regs:
            reg, mirror = regs.pop(rnd.randrange(len(regs)))
            inf.remove_event_handler(reg)
            ref.handlers = [h for h in ref.handlers if h is not mirror]
        elif roll < 0.11 and pending:
            name, fn = pending.pop()
            inf.add_indexer(name, fn)
            ref.indexers[name] = fn
        elif roll < 0.14:
            objs = []
            for ns, name in keys:
                if rnd.random() < 0.6:
                    have = ref.items.get(f"{ns}/{name}" if ns else name)
                    if have is not None and rnd.random() < 0.5:
                        objs.append(have)  # unchanged: same resourceVersion, no event
                    else:
                        rv += 1
                        objs.append(_pod(rnd, ns, name, rv))
            inf._replace(objs)
            ref.replace(objs)
        else:
            ns, name = rnd.choice(keys)
            rv += 1
            obj = _pod(rnd, ns, name, rv)
            if rnd.random() < 0.2:
                inf._remove(obj)
                ref.remove(obj)
            else:
                inf._upsert(obj)
                ref.upsert(obj)
        assert got == want
        assert inf._items == ref.items
        assert _informer_indices(inf, list(ref.indexers)) == ref.indices()
        assert inf.handler_count() == len(ref.handlers)
    assert len(got) > 500  # the sequence exercised the handlers
