"""The ownerReference graph (kube's ``garbagecollector/graph.go`` and ``uid_cache.go``).

One node per UID the collector has heard of, with an edge ``owner -> dependent``. Like kube's
``node.dependents`` set, the edges are plain dicts (insertion-ordered sets) keyed by UID, one for
each direction, so removing a node drops its edges both ways without a graph library. A node is *observed* once an informer delivered the object; an owner
known only from a dependent's ownerReference is *virtual*: its coordinates (apiVersion, kind,
name, and the dependent's namespace) come from the reference and must be verified against the
API before anything is done on its behalf.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from apiserver.api.types import Obj


@dataclass(frozen=True)
class ObjectRef:
    """``objectReference``: ownerReference coordinates plus the namespace."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"[{self.api_version}/{self.kind}, namespace: {self.namespace}, name: {self.name}, uid: {self.uid}]"

    def coordinates(self) -> tuple[str, str, str, str]:
        return (self.api_version, self.kind, self.name, self.uid)

    @classmethod
    def from_owner_ref(cls, ref: Obj, namespace: str) -> ObjectRef:
        return cls(
            ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", ""), ref.get("uid", ""), namespace
        )


def ref_matches(ref: Obj, identity: ObjectRef) -> bool:
    """``ownerReferenceMatchesCoordinates``."""
    return (
        ref.get("uid") == identity.uid
        and ref.get("name") == identity.name
        and ref.get("kind") == identity.kind
        and ref.get("apiVersion") == identity.api_version
    )


@dataclass
class Node:
    """An object in the owner graph: its identity, its owner references and where its deletion stands."""

    identity: ObjectRef
    owners: list[Obj] = field(default_factory=list)
    virtual: bool = False
    being_deleted: bool = False
    deleting_dependents: bool = False

    def clone(self, **changes: Any) -> Node:
        return replace(self, owners=list(self.owners), **changes)


class Graph:
    """UID -> :class:`Node` with owner -> dependent edges."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        #: owner UID -> its dependents' UIDs; dependent UID -> its owners' UIDs (dicts as ordered sets)
        self._dependents: dict[str, dict[str, None]] = {}
        self._owners: dict[str, dict[str, None]] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def get(self, uid: str) -> Node | None:
        return self._nodes.get(uid)

    def put(self, node: Node) -> None:
        """Insert or replace the node stored under its UID (edges are kept)."""
        self._nodes[node.identity.uid] = node

    def remove(self, uid: str) -> None:
        """Drop the node and its edges to dependents; edges from its owners go too."""
        if self._nodes.pop(uid, None) is None:
            return
        for dep in self._dependents.pop(uid, {}):
            self._owners.get(dep, {}).pop(uid, None)
        for owner in self._owners.pop(uid, {}):
            self._dependents.get(owner, {}).pop(uid, None)

    def link(self, owner_uid: str, dependent_uid: str) -> None:
        """An edge between two nodes already :meth:`put`."""
        self._dependents.setdefault(owner_uid, {})[dependent_uid] = None
        self._owners.setdefault(dependent_uid, {})[owner_uid] = None

    def unlink(self, owner_uid: str, dependent_uid: str) -> None:
        self._dependents.get(owner_uid, {}).pop(dependent_uid, None)
        self._owners.get(dependent_uid, {}).pop(owner_uid, None)

    def dependents(self, uid: str) -> list[Node]:
        return [self._nodes[d] for d in self._dependents.get(uid, ())]

    def dependents_count(self, uid: str) -> int:
        return len(self._dependents.get(uid, ()))

    def blocking_dependents(self, uid: str) -> list[Node]:
        """Dependents whose reference to ``uid`` has ``blockOwnerDeletion: true``."""
        return [
            d
            for d in self.dependents(uid)
            if any(r.get("uid") == uid and r.get("blockOwnerDeletion") for r in d.owners)
        ]


class AbsentOwnerCache:
    """An LRU of owner identities verified absent (``absent_owner_cache.go``), 500 entries like kube."""

    def __init__(self, size: int = 500) -> None:
        self.size = size
        self._items: OrderedDict[ObjectRef, None] = OrderedDict()

    def add(self, ref: ObjectRef) -> None:
        self._items[ref] = None
        self._items.move_to_end(ref)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def has(self, ref: ObjectRef) -> bool:
        if ref in self._items:
            self._items.move_to_end(ref)
            return True
        return False
