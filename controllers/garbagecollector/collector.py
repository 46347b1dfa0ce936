"""The garbage collector component (kube's ``garbagecollector.go``): acts on the graph through the API.

One work queue carries two kinds of keys, ``("delete", uid)`` and ``("orphan", uid)``:

*attempt to delete* (``attemptToDeleteItem``) re-reads the object and classifies each of its
ownerReferences by asking the API (or the absent-owner cache) for the owner — *dangling* (404,
or an object with another UID: the owner that was referenced is gone), *waiting* (the owner is
in foreground deletion) or *solid*:

* an object in foreground deletion loses its ``foregroundDeletion`` finalizer once no dependent
  with ``blockOwnerDeletion: true`` is left; meanwhile those dependents are queued;
* with a solid owner, dangling and waiting references are removed from the object;
* with only waiting owners and dependents of its own, the object is deleted in foreground;
* otherwise (no solid owner) it is deleted with the policy its own finalizers ask for
  (background by default), with UID and resourceVersion preconditions.

A namespaced owner is looked up in the dependent's namespace, so a reference across namespaces
is dangling; a cluster-scoped object referencing a namespaced kind can never be resolved and is
left alone (kube 1.20+), with an ``OwnerRefInvalidNamespace`` warning.

*attempt to orphan* removes the owner's reference from every dependent, then the ``orphan``
finalizer from the owner.
"""

from __future__ import annotations

import asyncio
import logging

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import WARNING, EventRecorder
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import GVR, Client
from apiserver.meta import (
    Clock,
    finalizers_of,
    is_being_deleted,
    owner_references,
    resource_version_of,
    uid_of,
)
from controllers.base import Controller, Requeue
from controllers.customresources import CustomResourceDiscovery
from controllers.garbagecollector.builder import FOREGROUND, ORPHAN, GraphBuilder
from controllers.garbagecollector.graph import AbsentOwnerCache, Graph, Node, ObjectRef
from controllers.metrics import ControllerMetrics
from controllers.ownerrefs import finalizers_merge_patch, remove_owner_refs
from controllers.resources import APIResource, RESTMapper

log = logging.getLogger("gangplane.gc")

NAME = "garbage-collector-controller"
DELETE = "delete"
ORPHAN_KEY = "orphan"
_CONFLICT_RETRIES = 5


class _Done(Exception):  # noqa: N818 - control flow: the item needs no requeue
    """Processing ended for a reason that a retry would not change."""


class GarbageCollector(Controller):
    name = NAME
    workers = 20  # kube's --concurrent-gc-syncs

    def __init__(
        self,
        client: Client,
        resources: list[APIResource],
        *,
        informers: InformerFactory | None = None,
        clock: Clock | None = None,
        metrics: ControllerMetrics | None = None,
        recorder: EventRecorder | None = None,
        workers: int | None = None,
    ) -> None:
        self.resources = [r for r in resources if r.supports("list", "watch")]
        self.mapper = RESTMapper(resources)
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    # ------------------------------------------------------------------ wiring
    def setup(self) -> None:
        self.graph = Graph()
        self.absent = AbsentOwnerCache()
        self.builder = GraphBuilder(
            self.graph,
            self.absent,
            lambda uid: self.enqueue((DELETE, uid)),
            lambda uid: self.queue.add_rate_limited((DELETE, uid)),
            lambda uid: self.enqueue((ORPHAN_KEY, uid)),
            self._report_invalid_namespace,
        )
        for res in self.resources:
            self._monitor(res)
        # Custom resources come and go with their CRDs: monitored from the API, as kube's GC
        # re-reads discovery (only the preferred version is monitored; every version maps).
        self._monitored: set[GVR] = {r.gvr for r in self.resources}
        self._stopping: dict[GVR, asyncio.Task[None]] = {}
        self.custom = CustomResourceDiscovery(self.informers, self._custom_added, self._custom_removed)

    def _monitor(self, res: APIResource) -> None:
        inf = self.informers.informer(res.gvr)
        inf.add_event_handler(
            lambda obj, r=res: self.builder.observe(r, obj),
            lambda old, new, r=res: self.builder.observe(r, new, old),
            lambda obj, r=res: self.builder.forget(r, obj),
        )

    def _custom_added(self, resources: list[APIResource]) -> None:
        for r in resources:
            self.mapper.add(r)
        preferred = resources[0]
        if preferred.gvr in self._monitored:
            # Monitored before (its handlers are attached): start it again once it has stopped.
            inf = self.informers.informer(preferred.gvr)
            stopping = self._stopping.pop(preferred.gvr, None)
            if stopping is not None and not stopping.done():
                stopping.add_done_callback(lambda _t, i=inf: i.start())
            else:
                inf.start()
        else:
            self._monitored.add(preferred.gvr)
            self._monitor(preferred)

    def _custom_removed(self, resources: list[APIResource]) -> None:
        for r in resources:
            self.mapper.remove(r)
        for r in resources:
            if r.gvr in self._monitored:
                inf = self.informers.informer(r.gvr)
                self._stopping[r.gvr] = asyncio.get_running_loop().create_task(inf.stop())

    def _report_invalid_namespace(self, node: Node, owner_uid: str) -> None:
        ref = next((r for r in node.owners if r.get("uid") == owner_uid), None)
        if ref is None:
            return
        invalid = ObjectRef.from_owner_ref(ref, node.identity.namespace)
        involved = {
            "kind": node.identity.kind,
            "apiVersion": node.identity.api_version,
            "name": node.identity.name,
            "uid": node.identity.uid,
        }
        if node.identity.namespace:
            involved["namespace"] = node.identity.namespace
        self.recorder.event_ref(
            involved,
            WARNING,
            "OwnerRefInvalidNamespace",
            f'ownerRef {invalid} does not exist in namespace "{node.identity.namespace}"',
        )

    # ------------------------------------------------------------------ sync
    async def sync(self, key: tuple[str, str]) -> None:
        kind, uid = key
        if kind == ORPHAN_KEY:
            await self._attempt_to_orphan(uid)
            return
        node = self.graph.get(uid)
        if node is None:
            return  # left the graph meanwhile
        try:
            await self._attempt_to_delete_item(node)
        except _Done:
            return
        current = self.graph.get(uid)
        if current is not None and current.virtual:
            raise Requeue("owner exists but has not been observed yet")

    # ------------------------------------------------------------------ attempt to delete
    def _resource(self, identity: ObjectRef) -> APIResource:
        return self.mapper.mapping(identity.api_version, identity.kind)

    async def _get(self, identity: ObjectRef) -> Obj:
        res = self._resource(identity)
        return await self.client.get(res.gvr, identity.name, identity.namespace if res.namespaced else "")

    async def _attempt_to_delete_item(self, node: Node) -> None:
        if node.being_deleted and not node.deleting_dependents:
            return
        res = self._resource(node.identity)
        if node.virtual and res.namespaced and not node.identity.namespace:
            # Only cluster-scoped objects refer to this namespaced kind: unresolvable, never verified.
            raise _Done
        try:
            latest = await self._get(node.identity)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            self.builder.virtual_delete(node.identity)
            raise _Done from e
        if uid_of(latest) != node.identity.uid:
            self.builder.virtual_delete(node.identity)
            raise _Done
        if node.deleting_dependents:
            await self._process_deleting_dependents(node)
            return
        refs = owner_references(latest)
        if not refs:
            return
        solid, dangling, waiting, going = await self._classify(node, refs)
        if solid:
            if not dangling and not waiting:
                return
            gone = {r["uid"] for r in [*dangling, *waiting]}
            try:
                await remove_owner_refs(self.client, res.gvr, latest, gone)
            except errors.StatusError as e:
                if e.code != 404:
                    raise
            return
        if waiting and self.graph.dependents_count(node.identity.uid):
            if any(d.deleting_dependents for d in self.graph.dependents(node.identity.uid)):
                # Owner and dependent both in foreground deletion: unblock to avoid a cycle.
                latest = await self._unblock_owner_refs(res, latest)
            await self._delete(node.identity, latest, "Foreground")
            return
        fins = finalizers_of(latest)
        policy = "Orphan" if ORPHAN in fins else "Foreground" if FOREGROUND in fins else "Background"
        await self._delete(node.identity, latest, policy)

    async def _classify(
        self, node: Node, refs: list[Obj]
    ) -> tuple[list[Obj], list[Obj], list[Obj], list[Obj]]:
        """kube's solid / dangling / waitingForDependentsDeletion, plus *going*.

        *going* (a gangplane addition): an owner already being deleted in the background whose
        removal is held only by other finalizers. kube counts it as solid, which deadlocks
        KEP-6277's ownership: a pod owned by its StatefulSet and its PodGroup loses the
        StatefulSet and keeps the PodGroup "alive", while the PodGroup's protection finalizer
        waits for that very pod to terminate. An item whose owners are all dangling or going is
        deleted; a going owner's reference is never stripped from an item that keeps a solid one.
        """
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        going: list[Obj] = []
        for ref in refs:
            is_dangling, owner = await self._is_dangling(ref, node)
            if is_dangling:
                dangling.append(ref)
            elif owner is not None and is_being_deleted(owner) and FOREGROUND in finalizers_of(owner):
                waiting.append(ref)
            elif owner is not None and is_being_deleted(owner) and ORPHAN not in finalizers_of(owner):
                going.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting, going

    async def _is_dangling(self, ref: Obj, item: Node) -> tuple[bool, Obj | None]:
        """``isDangling``: is the referenced owner absent (or replaced by an object with another UID)?"""
        cluster_key = ObjectRef.from_owner_ref(ref, "")
        ns_key = ObjectRef.from_owner_ref(ref, item.identity.namespace)
        if self.absent.has(cluster_key) or self.absent.has(ns_key):
            return True, None
        res = self.mapper.mapping(ref.get("apiVersion", ""), ref.get("kind", ""))
        if res.namespaced and not item.identity.namespace:
            self._report_invalid_namespace(item, ref.get("uid", ""))
            raise _Done
        key = ns_key if res.namespaced else cluster_key
        try:
            owner = await self.client.get(res.gvr, ref.get("name", ""), key.namespace)
        except errors.StatusError as e:
            if e.code != 404:
                raise
            self.absent.add(key)
            return True, None
        if uid_of(owner) != ref.get("uid"):
            self.absent.add(key)
            return True, None
        return False, owner

    async def _process_deleting_dependents(self, node: Node) -> None:
        blocking = self.graph.blocking_dependents(node.identity.uid)
        if not blocking:
            await self._remove_finalizer(node, FOREGROUND)
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self.enqueue((DELETE, dep.identity.uid))

    async def _delete(self, identity: ObjectRef, latest: Obj, policy: str) -> None:
        res = self._resource(identity)
        ns = identity.namespace if res.namespaced else ""
        pre = {"uid": identity.uid, "resourceVersion": resource_version_of(latest)}
        try:
            await self.client.delete(res.gvr, identity.name, ns, propagation_policy=policy, preconditions=pre)
        except errors.StatusError as e:
            if e.code == 404:
                return
            if not errors.is_conflict(e):
                raise
            # The object changed since we read it; delete anyway if its ownerReferences did not.
            try:
                live = await self.client.get(res.gvr, identity.name, ns)
            except errors.StatusError as e2:
                if e2.code == 404:
                    return
                raise
            if uid_of(live) != identity.uid or owner_references(live) != owner_references(latest):
                raise
            try:
                await self.client.delete(
                    res.gvr, identity.name, ns, propagation_policy=policy, preconditions={"uid": identity.uid}
                )
            except errors.StatusError as e3:
                if e3.code != 404:
                    raise

    async def _unblock_owner_refs(self, res: APIResource, latest: Obj) -> Obj:
        refs = [
            {**r, "blockOwnerDeletion": False} if r.get("blockOwnerDeletion") else r
            for r in owner_references(latest)
        ]
        md = latest.get("metadata") or {}
        patch = {"metadata": {"resourceVersion": resource_version_of(latest), "ownerReferences": refs}}
        return await self.client.patch(res.gvr, md.get("name", ""), patch, md.get("namespace", ""))

    async def _remove_finalizer(self, node: Node, finalizer: str) -> None:
        """Drop ``finalizer`` from the object (GET, patch with resourceVersion, retry on conflict)."""
        res = self._resource(node.identity)
        ns = node.identity.namespace if res.namespaced else ""
        for _ in range(_CONFLICT_RETRIES):
            try:
                obj = await self.client.get(res.gvr, node.identity.name, ns)
            except errors.StatusError as e:
                if e.code == 404:
                    return
                raise
            if uid_of(obj) != node.identity.uid:
                return
            fins = finalizers_of(obj)
            if finalizer not in fins:
                return
            try:
                await self.client.patch(
                    res.gvr,
                    node.identity.name,
                    finalizers_merge_patch(obj, [f for f in fins if f != finalizer]),
                    ns,
                )
                return
            except errors.StatusError as e:
                if e.code == 404:
                    return
                if not errors.is_conflict(e):
                    raise
        raise errors.StatusError(
            409,
            "Conflict",
            f"updateMaxRetries({_CONFLICT_RETRIES}) has reached. The garbage collector will retry later for owner {node.identity}",
        )

    # ------------------------------------------------------------------ attempt to orphan
    async def _attempt_to_orphan(self, uid: str) -> None:
        node = self.graph.get(uid)
        if node is None:
            return
        dependents = self.graph.dependents(uid)
        results = await asyncio.gather(
            *(self._orphan(dep, uid) for dep in dependents), return_exceptions=True
        )
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        await self._remove_finalizer(node, ORPHAN)

    async def _orphan(self, dep: Node, owner_uid: str) -> None:
        res = self._resource(dep.identity)
        stub = {
            "metadata": {
                "name": dep.identity.name,
                "namespace": dep.identity.namespace if res.namespaced else "",
                "uid": dep.identity.uid,
            }
        }
        try:
            await remove_owner_refs(self.client, res.gvr, stub, {owner_uid})
        except errors.StatusError as e:
            if e.code not in (404, 422):
                raise
