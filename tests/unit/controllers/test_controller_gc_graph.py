"""The garbage collector's graph builder, driven directly with informer-like events (no API)."""

from __future__ import annotations

import pytest

from apiserver.api.types import Obj
from apiserver.client.interface import CONFIGMAPS, NAMESPACES
from controllers.garbagecollector.builder import (
    GraphBuilder,
    deletion_starts_with_finalizer,
    partition_dependents,
    references_diffs,
)
from controllers.garbagecollector.graph import AbsentOwnerCache, Graph, Node, ObjectRef
from controllers.resources import APIResource

CM = APIResource(CONFIGMAPS, "ConfigMap", True)
NS = APIResource(NAMESPACES, "Namespace", False)


class Recorder:
    def __init__(self) -> None:
        self.deletes: list[str] = []
        self.later: list[str] = []
        self.orphans: list[str] = []
        self.invalid: list[tuple[str, str]] = []
        self.graph = Graph()
        self.absent = AbsentOwnerCache()
        self.builder = GraphBuilder(
            self.graph,
            self.absent,
            self.deletes.append,
            self.later.append,
            self.orphans.append,
            lambda node, uid: self.invalid.append((node.identity.name, uid)),
        )


def cm(
    name: str,
    uid: str,
    *owners: Obj,
    ns: str = "default",
    deleting: bool = False,
    finalizers: list[str] | None = None,
) -> Obj:
    md: Obj = {"name": name, "namespace": ns, "uid": uid, "ownerReferences": list(owners)}
    if deleting:
        md["deletionTimestamp"] = "2027-01-01T00:00:00Z"
    if finalizers:
        md["finalizers"] = finalizers
    return {"metadata": md}


def ref(name: str, uid: str, block: bool = True, kind: str = "ConfigMap") -> Obj:
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid, "blockOwnerDeletion": block}


def test_an_unknown_owner_becomes_a_virtual_node_queued_for_verification() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    owner = r.graph.get("o")
    assert owner is not None and owner.virtual
    assert owner.identity == ObjectRef("v1", "ConfigMap", "owner", "o", "default")
    assert [n.identity.uid for n in r.graph.dependents("o")] == ["d"]
    assert r.deletes == ["o"]


def test_observing_the_owner_replaces_the_virtual_node() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    r.builder.observe(CM, cm("owner", "o"))
    owner = r.graph.get("o")
    assert owner is not None and not owner.virtual
    assert r.graph.dependents_count("o") == 1


def test_an_owner_in_another_namespace_is_reported_and_the_dependent_queued() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o", ns="other"))
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    assert r.invalid == [("dep", "o")]
    assert "d" in r.deletes


def test_a_cluster_scoped_owner_may_own_namespaced_objects() -> None:
    r = Recorder()
    r.builder.observe(NS, {"metadata": {"name": "team", "uid": "n"}})
    r.builder.observe(CM, cm("dep", "d", ref("team", "n", kind="Namespace")))
    assert r.invalid == [] and r.deletes == []


def test_deleting_an_owner_queues_its_dependents_and_remembers_it_absent() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o"))
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    r.builder.forget(CM, cm("owner", "o"))
    assert r.graph.get("o") is None
    assert r.deletes == ["d"]
    assert r.absent.has(ObjectRef("v1", "ConfigMap", "owner", "o", "default"))


def test_foreground_deletion_marks_the_owner_and_queues_dependents_and_owner() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o"))
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    old = cm("owner", "o")
    new = cm("owner", "o", deleting=True, finalizers=["foregroundDeletion"])
    r.builder.observe(CM, new, old)
    node = r.graph.get("o")
    assert node is not None and node.deleting_dependents and node.being_deleted
    assert r.deletes == ["d", "o"]
    # a dependent leaving re-queues the owner waiting for it
    r.builder.forget(CM, cm("dep", "d", ref("owner", "o")))
    assert r.deletes[-1] == "o"


def test_orphan_deletion_queues_the_owner_for_orphaning() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o"))
    r.builder.observe(CM, cm("owner", "o", deleting=True, finalizers=["orphan"]), cm("owner", "o"))
    assert r.orphans == ["o"]


def test_dropping_a_blocking_reference_requeues_the_owner() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o"))
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o", block=False)), cm("dep", "d", ref("owner", "o")))
    assert r.deletes == ["o"]
    r.builder.observe(CM, cm("dep", "d"), cm("dep", "d", ref("owner", "o", block=False)))
    assert r.graph.dependents_count("o") == 0


def test_virtual_delete_removes_a_verified_absent_owner() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("dep", "d", ref("owner", "o")))
    r.deletes.clear()
    r.builder.virtual_delete(ObjectRef("v1", "ConfigMap", "owner", "o", "default"))
    assert r.graph.get("o") is None
    assert r.deletes == ["d"]


def test_virtual_delete_never_removes_an_observed_object_with_other_coordinates() -> None:
    r = Recorder()
    r.builder.observe(CM, cm("owner", "o"))
    r.builder.virtual_delete(ObjectRef("v1", "ConfigMap", "owner", "o", "elsewhere"))
    assert r.graph.get("o") is not None


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, cm("a", "a", deleting=True, finalizers=["orphan"]), True),
        (cm("a", "a"), cm("a", "a", deleting=True, finalizers=["orphan"]), True),
        (
            cm("a", "a", deleting=True, finalizers=["orphan"]),
            cm("a", "a", deleting=True, finalizers=["orphan"]),
            False,
        ),
        (cm("a", "a"), cm("a", "a", finalizers=["orphan"]), False),
    ],
)
def test_deletion_starts_with_finalizer(old: Obj | None, new: Obj, expected: bool) -> None:
    assert deletion_starts_with_finalizer(old, new, "orphan") is expected


def test_references_diffs() -> None:
    a, b, c = ref("a", "1"), ref("b", "2"), ref("c", "3")
    b2 = {**b, "blockOwnerDeletion": False}
    added, removed, changed = references_diffs([a, b], [b2, c])
    assert added == [c] and removed == [a] and changed == [(b, b2)]


def test_partition_dependents_by_coordinates_and_namespace() -> None:
    owner = ObjectRef("v1", "ConfigMap", "owner", "o", "default")
    good = Node(ObjectRef("v1", "ConfigMap", "good", "g", "default"), owners=[ref("owner", "o")])
    renamed = Node(ObjectRef("v1", "ConfigMap", "renamed", "r", "default"), owners=[ref("other-name", "o")])
    elsewhere = Node(ObjectRef("v1", "ConfigMap", "x", "x", "other"), owners=[ref("owner", "o")])
    matching, nonmatching = partition_dependents([good, renamed, elsewhere], owner)
    assert matching == [good]
    assert nonmatching == [renamed, elsewhere]


def test_graph_removing_a_node_drops_its_edges_in_both_directions() -> None:
    g = Graph()
    owner, mid, leaf = (Node(ObjectRef("v1", "ConfigMap", n, n, "default")) for n in ("o", "m", "l"))
    for n in (owner, mid, leaf):
        g.put(n)
    g.link("o", "m")
    g.link("m", "l")
    g.link("o", "l")
    assert [d.identity.uid for d in g.dependents("o")] == ["m", "l"]
    g.remove("m")
    assert len(g) == 2 and g.get("m") is None
    assert [d.identity.uid for d in g.dependents("o")] == ["l"]
    assert g.dependents("m") == [] and g.dependents_count("m") == 0
    g.put(Node(ObjectRef("v1", "ConfigMap", "m", "m", "default")))
    assert g.dependents_count("m") == 0  # a re-added UID starts without the old edges
    g.unlink("o", "l")
    assert g.dependents_count("o") == 0
