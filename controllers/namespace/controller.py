"""Namespace controller (kube's ``namespace_controller.go``): finishes namespaces being deleted.

Deleting a namespace only marks it (``deletionTimestamp``, phase ``Terminating``, the
``kubernetes`` finalizer in ``spec.finalizers``). Each sync of such a namespace runs one pass of
:class:`~controllers.namespace.deleter.NamespacedResourcesDeleter`; while content remains the
key comes back after half the estimate (kube), and sooner when a pod of a terminating namespace
disappears — graceful pod deletion is what usually holds a namespace up, so the controller also
watches pods (only to enqueue).
"""

from __future__ import annotations

from apiserver.api.types import Obj
from apiserver.client.events import EventRecorder
from apiserver.client.informer import Informer, InformerFactory
from apiserver.client.interface import NAMESPACES, PODS, Client
from apiserver.meta import Clock, is_being_deleted, name_of, namespace_of
from controllers.base import Controller, Requeue
from controllers.customresources import CustomResourceDiscovery
from controllers.metrics import ControllerMetrics
from controllers.namespace.deleter import NamespacedResourcesDeleter, ResourcesRemaining
from controllers.resources import APIResource

NAME = "namespace-controller"


class NamespaceController(Controller):
    name = NAME
    workers = 10  # kube's --concurrent-namespace-syncs
    max_backoff = 30.0

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
        self.deleter = NamespacedResourcesDeleter(client, resources, clock)
        super().__init__(
            client, informers=informers, clock=clock, metrics=metrics, recorder=recorder, workers=workers
        )

    def setup(self) -> None:
        self.namespaces: Informer = self.informers.informer(NAMESPACES)
        self.pods: Informer = self.informers.informer(PODS)
        self.namespaces.add_event_handler(self._on_namespace, lambda old, new: self._on_namespace(new))
        # Custom resources are namespaced content too; they are found from the CRDs (via the API).
        self.custom = CustomResourceDiscovery(self.informers)
        self.deleter.more = self._custom_preferred
        self.pods.add_event_handler(on_delete=self._on_pod_gone)

    def _custom_preferred(self) -> list[APIResource]:
        """One version of each custom resource (the preferred): all versions share one storage."""
        seen: set[tuple[str, str]] = set()
        out = []
        for r in self.custom.resources():
            if (r.gvr.group, r.gvr.resource) not in seen:
                seen.add((r.gvr.group, r.gvr.resource))
                out.append(r)
        return out

    def _on_namespace(self, ns: Obj) -> None:
        if is_being_deleted(ns):
            self.enqueue(name_of(ns))

    def _on_pod_gone(self, pod: Obj) -> None:
        ns = self.namespaces.get_by_name("", namespace_of(pod))
        if ns is not None and is_being_deleted(ns):
            self.enqueue(name_of(ns))

    async def sync(self, key: str) -> None:
        try:
            await self.deleter.delete(key)
        except ResourcesRemaining as r:
            raise Requeue(str(r), after=r.estimate / 2) from r
