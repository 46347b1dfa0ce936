"""The garbage collector's graph builder with its unchanged-update shortcut against its general path.

Two builders receive the same random informer events: one through ``observe`` (which returns
early for an object known under the same identity and owners and not being deleted), one always
through the general path. Objects of a namespaced and a cluster-scoped resource share a small
pool of UIDs, names and namespaces, so identities collide and move; owner references point at
that pool with right or wrong coordinates, with and without ``blockOwnerDeletion``, reordered or
repeated; deletion starts with and without the ``orphan``/``foregroundDeletion`` finalizers;
objects are deleted and virtual deletes arrive. After each event both graphs, their absent
caches and the work each builder queued must be the same.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONFIGMAPS, NAMESPACES
from controllers.garbagecollector.builder import GraphBuilder
from controllers.garbagecollector.graph import AbsentOwnerCache, Graph, ObjectRef
from controllers.resources import APIResource

CM = APIResource(CONFIGMAPS, "ConfigMap", True)
NS = APIResource(NAMESPACES, "Namespace", False)
UIDS = [f"u{i}" for i in range(8)]
NAMES = ["a", "b", "c"]
NAMESPACES_ = ["default", "other"]


class GeneralPath(GraphBuilder):
    """Every add and update through the general path (the builder before the shortcut)."""

    def observe(self, res: APIResource, obj: Obj, old: Obj | None = None) -> None:
        self._observe(res, obj, old)


class Side:
    def __init__(self, cls: type[GraphBuilder]) -> None:
        self.work: list[tuple[str, Any]] = []
        self.graph = Graph()
        self.absent = AbsentOwnerCache(size=5)
        self.builder = cls(
            self.graph,
            self.absent,
            lambda uid: self.work.append(("delete", uid)),
            lambda uid: self.work.append(("later", uid)),
            lambda uid: self.work.append(("orphan", uid)),
            lambda node, uid: self.work.append(("invalid", (node.identity, uid))),
        )

    def state(self) -> Any:
        nodes = {
            uid: (n.identity, n.owners, n.virtual, n.being_deleted, n.deleting_dependents)
            for uid, n in self.graph._nodes.items()
        }
        return nodes, self.graph._dependents, self.graph._owners, list(self.absent._items)


def _ref(rnd: random.Random) -> Obj:
    kind, api_version = rnd.choice([("ConfigMap", "v1"), ("Namespace", "v1"), ("Thing", "x/v1")])
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": rnd.choice(NAMES),
        "uid": rnd.choice(UIDS),
        "blockOwnerDeletion": rnd.random() < 0.5,
    }


def _obj(rnd: random.Random, uid: str, res: APIResource, prev: Obj | None) -> Obj:
    if prev is not None and rnd.random() < 0.6:
        # most updates: the same metadata but for a status-like change
        md = dict(prev["metadata"])
        if rnd.random() < 0.2:
            md["ownerReferences"] = list(reversed(md.get("ownerReferences") or []))
        if rnd.random() < 0.15:
            md["deletionTimestamp"] = "2027-01-01T00:00:00Z"
            md["finalizers"] = rnd.choice([[], ["orphan"], ["foregroundDeletion"], ["x/y"]])
        return {"metadata": md, "status": {"n": rnd.random()}}
    md = {
        "name": rnd.choice(NAMES),
        "uid": uid,
        "ownerReferences": [_ref(rnd) for _ in range(rnd.choice([0, 1, 1, 2]))],
    }
    if res.namespaced:
        md["namespace"] = rnd.choice(NAMESPACES_)
    if rnd.random() < 0.1:
        md["deletionTimestamp"] = "2027-01-01T00:00:00Z"
    return {"metadata": md}


@pytest.mark.parametrize("seed", range(20))
def test_observe_leaves_the_graph_and_work_of_the_general_path(seed: int) -> None:
    rnd = random.Random(seed)
    fast, general = Side(GraphBuilder), Side(GeneralPath)
    delivered: dict[tuple[str, str], Obj] = {}  # what each informer holds, by (resource, uid)
    shortcuts = 0
    for _ in range(600):
        res = rnd.choice([CM, CM, NS])
        uid = rnd.choice(UIDS)
        held = delivered.get((res.kind, uid))
        roll = rnd.random()
        if held is not None and roll < 0.1:
            del delivered[(res.kind, uid)]
            for side in (fast, general):
                side.builder.forget(res, held)
        elif roll < 0.15:
            ref = ObjectRef.from_owner_ref(_ref(rnd), rnd.choice(["", *NAMESPACES_]))
            for side in (fast, general):
                side.builder.virtual_delete(ref)
        else:
            obj = _obj(rnd, uid, res, held)
            delivered[(res.kind, uid)] = obj
            before = len(general.work), general.state()
            for side in (fast, general):
                side.builder.observe(res, obj, held)
            shortcuts += before == (len(general.work), general.state())
        assert fast.state() == general.state()
        assert fast.work == general.work
    assert shortcuts > 50 and len(general.work) > 20  # both kinds of event were exercised
