"""Keeps the ownerReference graph in step with the informers (kube's ``graph_builder.go``).

Every informer event over every watched resource lands here, synchronously, on the event loop:
the graph is updated and the UIDs that may now need work are handed to the collector's queue.

* a new object whose owner is unknown gets a *virtual* owner node, queued for verification;
* a reference that disagrees with an observed owner (another namespace, other coordinates) puts
  the dependent in the queue; a namespace mismatch also records ``OwnerRefInvalidNamespace``;
* an object entering deletion with the ``orphan`` finalizer is queued for orphaning; with
  ``foregroundDeletion`` it is marked *deleting dependents* and it and its dependents are queued;
* a removed or unblocked ``blockOwnerDeletion`` reference re-queues the owner it blocked;
* a deleted object leaves the graph, is remembered as absent, and its dependents (and any owner
  waiting in foreground deletion) are queued.
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.meta import finalizers_of, is_being_deleted, name_of, namespace_of, owner_references, uid_of
from controllers.garbagecollector.graph import AbsentOwnerCache, Graph, Node, ObjectRef, ref_matches
from controllers.resources import APIResource

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"

Enqueue = Callable[[str], None]
ReportInvalid = Callable[[Node, str], None]


def identity_of(res: APIResource, obj: Obj) -> ObjectRef:
    return ObjectRef(
        res.api_version, res.kind, name_of(obj), uid_of(obj), namespace_of(obj) if res.namespaced else ""
    )


def deletion_starts_with_finalizer(old: Obj | None, new: Obj, finalizer: str) -> bool:
    """The object is being deleted with ``finalizer`` now, and was not before."""
    if not is_being_deleted(new) or finalizer not in finalizers_of(new):
        return False
    return old is None or not is_being_deleted(old) or finalizer not in finalizers_of(old)


def references_diffs(old: list[Obj], new: list[Obj]) -> tuple[list[Obj], list[Obj], list[tuple[Obj, Obj]]]:
    """(added, removed, changed) ownerReferences, matched by UID."""
    old_by = {r.get("uid"): r for r in old}
    new_by = {r.get("uid"): r for r in new}
    added = [r for u, r in new_by.items() if u not in old_by]
    removed = [r for u, r in old_by.items() if u not in new_by]
    changed = [(old_by[u], r) for u, r in new_by.items() if u in old_by and old_by[u] != r]
    return added, removed, changed


def partition_dependents(dependents: list[Node], owner: ObjectRef) -> tuple[list[Node], list[Node]]:
    """Dependents whose reference matches ``owner``'s coordinates (and namespace), and those that don't."""
    matching: list[Node] = []
    nonmatching: list[Node] = []
    for dep in dependents:
        found_match = found_mismatch = False
        if owner.namespace and owner.namespace != dep.identity.namespace:
            found_mismatch = True
        else:
            for ref in dep.owners:
                if ref.get("uid") == owner.uid:
                    if ref_matches(ref, owner):
                        found_match = True
                    else:
                        found_mismatch = True
        if found_match:
            matching.append(dep)
        if found_mismatch:
            nonmatching.append(dep)
    return matching, nonmatching


def alternate_owner_identity(dependents: list[Node], absent: ObjectRef) -> ObjectRef | None:
    """Another identity the dependents use for ``absent.uid`` (``getAlternateOwnerIdentity``)."""
    cluster_scoped = not absent.namespace
    seen = {absent}
    for dep in sorted(dependents, key=lambda d: str(d.identity)):
        for ref in dep.owners:
            if ref.get("uid") != absent.uid:
                continue
            if ref_matches(ref, absent) and (cluster_scoped or absent.namespace == dep.identity.namespace):
                continue
            alt = ObjectRef.from_owner_ref(ref, dep.identity.namespace)
            if cluster_scoped and alt.api_version == absent.api_version and alt.kind == absent.kind:
                alt = ObjectRef(*alt.coordinates(), "")
            if alt in seen:
                continue
            seen.add(alt)
            if not alt.namespace or alt.namespace > absent.namespace:
                return alt
    return None


class GraphBuilder:
    def __init__(
        self,
        graph: Graph,
        absent: AbsentOwnerCache,
        attempt_to_delete: Enqueue,
        attempt_to_delete_later: Enqueue,
        attempt_to_orphan: Enqueue,
        report_invalid: ReportInvalid,
    ) -> None:
        self.graph = graph
        self.absent = absent
        self.attempt_to_delete = attempt_to_delete
        self.attempt_to_delete_later = attempt_to_delete_later
        self.attempt_to_orphan = attempt_to_orphan
        self.report_invalid = report_invalid

    # ------------------------------------------------------------------ informer events
    def observe(self, res: APIResource, obj: Obj, old: Obj | None = None) -> None:
        """An add or update delivered by the informer of ``res``.

        Most updates (a status, a binding, a label) touch nothing the graph holds: the object is
        known under the same identity with the same owner references and is not being deleted.
        For those the general path's only effect is marking the node observed, which is all
        this does, after a few comparisons, instead of building the identity, diffing the
        references by UID and looking for deletion transitions (kube's graph builder notes, as
        work it has not done, that it could ignore exactly these updates).
        """
        md = obj.get("metadata") or {}
        if not md.get("deletionTimestamp"):
            node = self.graph.get(md.get("uid", ""))
            if node is not None and (md.get("ownerReferences") or []) == node.owners:
                ident = node.identity
                if (
                    ident.name == md.get("name", "")
                    and ident.namespace == (md.get("namespace", "") if res.namespaced else "")
                    and ident.kind == res.kind
                    and ident.api_version == res.api_version
                ):
                    node.virtual = False
                    return
        self._observe(res, obj, old)

    def _observe(self, res: APIResource, obj: Obj, old: Obj | None) -> None:
        """:meth:`observe`'s general path: any add or update."""
        ident = identity_of(res, obj)
        refs = list(owner_references(obj))
        node = self.graph.get(ident.uid)
        if node is None:
            node = Node(
                ident,
                owners=refs,
                being_deleted=is_being_deleted(obj),
                deleting_dependents=is_being_deleted(obj) and FOREGROUND in finalizers_of(obj),
            )
            self.graph.put(node)
            self._add_dependent_to_owners(node, refs)
            self._process_transitions(old, obj, node)
            return
        if ident != node.identity:
            _, suspicious = partition_dependents(self.graph.dependents(ident.uid), ident)
            for dep in suspicious:
                if ident.namespace and dep.identity.namespace != ident.namespace:
                    self.report_invalid(dep, ident.uid)
                self.attempt_to_delete(dep.identity.uid)
            node = node.clone(identity=ident)
            self.graph.put(node)
        node.virtual = False
        added, removed, changed = references_diffs(node.owners, refs)
        if added or removed or changed:
            self._queue_unblocked_owners(removed, changed)
            node.owners = refs
            self._add_dependent_to_owners(node, added)
            for r in removed:
                self.graph.unlink(r.get("uid", ""), ident.uid)
        if is_being_deleted(obj):
            node.being_deleted = True
        self._process_transitions(old, obj, node)

    def forget(self, res: APIResource, obj: Obj) -> None:
        """A delete delivered by the informer of ``res``."""
        node = self.graph.get(uid_of(obj))
        if node is not None:
            self._remove(node, identity_of(res, obj))

    def virtual_delete(self, deleted: ObjectRef) -> None:
        """The collector verified ``deleted`` is absent from the API (``enqueueVirtualDeleteEvent``)."""
        node = self.graph.get(deleted.uid)
        if node is None:
            return
        if node.virtual:
            matching, nonmatching = partition_dependents(self.graph.dependents(deleted.uid), deleted)
            if nonmatching:
                # Dependents disagree about who this owner is: keep the node for the others.
                if matching:
                    self.absent.add(deleted)
                    for dep in matching:
                        self.attempt_to_delete(dep.identity.uid)
                if node.identity == deleted:
                    alt = alternate_owner_identity(nonmatching, node.identity)
                    if alt is not None:
                        self.graph.put(node.clone(identity=alt))
                        self.attempt_to_delete_later(deleted.uid)
                return
        elif node.identity != deleted:
            # An observed object is never removed on the word of a virtual event with other coordinates.
            matching, _ = partition_dependents(self.graph.dependents(deleted.uid), deleted)
            if matching:
                self.absent.add(deleted)
                for dep in matching:
                    self.attempt_to_delete(dep.identity.uid)
            return
        self._remove(node, deleted)

    # ------------------------------------------------------------------ internals
    def _remove(self, node: Node, identity: ObjectRef) -> None:
        uid = node.identity.uid
        dependents = self.graph.dependents(uid)
        self.graph.remove(uid)
        if dependents:
            self.absent.add(identity)
        for dep in dependents:
            self.attempt_to_delete(dep.identity.uid)
        for ref in node.owners:
            owner = self.graph.get(ref.get("uid", ""))
            if owner is not None and owner.deleting_dependents:
                self.attempt_to_delete(owner.identity.uid)

    def _add_dependent_to_owners(self, node: Node, refs: list[Obj]) -> None:
        suspicious = False
        for ref in refs:
            owner_uid = ref.get("uid", "")
            if not owner_uid:
                continue
            owner = self.graph.get(owner_uid)
            if owner is None:
                owner = Node(ObjectRef.from_owner_ref(ref, node.identity.namespace), virtual=True)
                self.graph.put(owner)
                self.graph.link(owner_uid, node.identity.uid)
                self.attempt_to_delete(owner_uid)
                continue
            self.graph.link(owner_uid, node.identity.uid)
            if suspicious:
                continue
            owner_namespaced = bool(owner.identity.namespace)
            if owner_namespaced and owner.identity.namespace != node.identity.namespace:
                if not owner.virtual:
                    self.report_invalid(node, owner_uid)
                suspicious = True
            elif not ref_matches(ref, owner.identity) or (
                # a virtual cluster-scoped owner seen from another namespace may be a namespaced
                # kind referenced by mistake: verify the dependent (kube issue #98040)
                not owner_namespaced and owner.identity.namespace != node.identity.namespace and owner.virtual
            ):
                suspicious = True
        if suspicious:
            self.attempt_to_delete(node.identity.uid)

    def _queue_unblocked_owners(self, removed: list[Obj], changed: list[tuple[Obj, Obj]]) -> None:
        for ref in removed:
            if ref.get("blockOwnerDeletion") and self.graph.get(ref.get("uid", "")) is not None:
                self.attempt_to_delete(ref["uid"])
        for old, new in changed:
            unblocked = old.get("blockOwnerDeletion") and not new.get("blockOwnerDeletion")
            if unblocked and self.graph.get(new.get("uid", "")) is not None:
                self.attempt_to_delete(new["uid"])

    def _process_transitions(self, old: Obj | None, new: Obj, node: Node) -> None:
        if deletion_starts_with_finalizer(old, new, ORPHAN):
            self.attempt_to_orphan(node.identity.uid)
            return
        if deletion_starts_with_finalizer(old, new, FOREGROUND):
            node.deleting_dependents = True
            for dep in self.graph.dependents(node.identity.uid):
                self.attempt_to_delete(dep.identity.uid)
            self.attempt_to_delete(node.identity.uid)
            return
        if is_being_deleted(new) and (old is None or not is_being_deleted(old)):
            # A background deletion held by other finalizers: its dependents may now have no
            # owner left that is staying (see GarbageCollector._classify, "going").
            for dep in self.graph.dependents(node.identity.uid):
                self.attempt_to_delete(dep.identity.uid)
