"""An informer's indices after updates that move only the changed index values.

Random adds, updates (owners, labels, node and namespace changing or not, duplicate owner
uids) and deletes delivered to an informer; after each step every index answers as one built
from scratch over the same cached objects (``add_indexer`` on a fresh informer).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.client.informer import (
    CONTROLLER_UID,
    NODE_NAME,
    OWNER_UID,
    Informer,
    controller_uid_index,
    label_index,
    node_name_index,
    owner_uid_index,
)
from apiserver.client.interface import PODS

INDEXERS = {
    OWNER_UID: owner_uid_index,
    CONTROLLER_UID: controller_uid_index,
    NODE_NAME: node_name_index,
    "app": label_index("app"),
}


def _pod(rnd: random.Random, ns: str, name: str) -> dict[str, Any]:
    owners = [
        {"uid": rnd.choice(["u1", "u2", "u3"]), "controller": rnd.random() < 0.5}
        for _ in range(rnd.choice([0, 1, 1, 2]))
    ]
    md: dict[str, Any] = {"namespace": ns, "name": name, "ownerReferences": owners}
    if rnd.random() < 0.7:
        md["labels"] = {"app": rnd.choice(["a", "b"])}
    spec = {"nodeName": rnd.choice(["", "n1", "n2"])}
    return {"metadata": md, "spec": spec}


def _indices(inf: Informer) -> dict[str, dict[str, set[str]]]:
    values = {name: {v for o in inf.list() for v in fn(o)} for name, fn in INDEXERS.items()}
    values["namespace"] = {o["metadata"]["namespace"] for o in inf.list()}
    return {name: {v: inf.index_keys(name, v) for v in sorted(vs)} for name, vs in values.items()}


@pytest.mark.parametrize("seed", range(10))
def test_indices_after_updates_equal_indices_built_from_scratch(seed: int) -> None:
    rnd = random.Random(seed)
    inf = Informer(None, PODS)  # type: ignore[arg-type]  # fed directly, never started
    for name, fn in INDEXERS.items():
        inf.add_indexer(name, fn)
    keys = [(ns, f"p{i}") for ns in ("x", "y") for i in range(8)]
    for _ in range(300):
        ns, name = rnd.choice(keys)
        if inf.get_by_name(ns, name) is not None and rnd.random() < 0.2:
            inf._remove(inf.get_by_name(ns, name))
        else:
            inf._upsert(_pod(rnd, ns, name))
        fresh = Informer(None, PODS)  # type: ignore[arg-type]
        fresh._items = dict(inf._items)
        for o in fresh._items.values():
            fresh._index_add(f"{o['metadata']['namespace']}/{o['metadata']['name']}", o)
        for name_, fn in INDEXERS.items():
            fresh.add_indexer(name_, fn)
        assert _indices(inf) == _indices(fresh)
        # no value is left behind with an empty set
        for idx in inf._indices.values():
            assert all(idx.values())
        assert inf._indices.keys() == fresh._indices.keys()
        for name_ in inf._indices:
            assert inf._indices[name_] == fresh._indices[name_]
