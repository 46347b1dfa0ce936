"""Local APIServices for CustomResourceDefinition group-versions (kube-apiserver's
``crdRegistrationController`` feeding the aggregator's ``autoregister`` controller).

The built-in group-versions get their local APIServices once at start (labelled
``kube-aggregator.kubernetes.io/automanaged: onstart``). CRD group-versions come and go, so this
component keeps one APIService per *served* version of every CRD — ``<version>.<group>``, group
priority minimum 1000 and version priority 100, as kube registers them — labelled
``automanaged: "true"``, and deletes such an APIService once no CRD serves it any more. It never
touches an APIService it does not manage.

Keys are APIService names; every CRD event enqueues the names of its old and new versions.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.client.context import ComponentContext
from apiserver.client.interface import GVR
from controllers.base import Controller
from controllers.metrics import controller_metrics

Obj = dict[str, Any]

NAME = "apiservice-registration-controller"
CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
APISERVICES = GVR("apiregistration.k8s.io", "v1", "apiservices")
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
#: CRDs rank below every built-in group; versions among themselves by kube's version ordering.
CRD_GROUP_PRIORITY_MINIMUM = 1000
CRD_VERSION_PRIORITY = 100


def served_api_services(crd: Obj | None) -> list[str]:
    """``<version>.<group>`` for every served version of ``crd``."""
    if not crd:
        return []
    spec = crd.get("spec") or {}
    group = spec.get("group") or ""
    return [f"{v.get('name')}.{group}" for v in spec.get("versions") or [] if v.get("served") and v.get("name")]


def desired_api_service(name: str) -> Obj:
    version, _, group = name.partition(".")
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name, "labels": {AUTOMANAGED: "true"}},
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": CRD_GROUP_PRIORITY_MINIMUM,
            "versionPriority": CRD_VERSION_PRIORITY,
        },
    }


class APIServiceRegistrationController(Controller):
    name = NAME

    def setup(self) -> None:
        self.crds = self.informers.informer(CRDS)
        self.services = self.informers.informer(APISERVICES)
        self.crds.add_event_handler(self._on_crd, lambda old, new: self._on_crd(old, new), self._on_crd)
        self.services.add_event_handler(self._on_service, lambda old, new: self._on_service(new), self._on_service)

    def _on_crd(self, old: Obj | None, new: Obj | None = None) -> None:
        for name in {*served_api_services(old), *served_api_services(new)}:
            self.enqueue(name)

    def _on_service(self, svc: Obj) -> None:
        if ((svc.get("metadata") or {}).get("labels") or {}).get(AUTOMANAGED) == "true":
            self.enqueue(svc["metadata"]["name"])

    def _wanted(self, name: str) -> bool:
        return any(name in served_api_services(crd) for crd in self.crds.list())

    async def sync(self, key: str) -> None:
        existing = self.services.get(key)
        managed = existing is not None and ((existing.get("metadata") or {}).get("labels") or {}).get(AUTOMANAGED) == "true"
        try:
            if self._wanted(key):
                want = desired_api_service(key)
                if existing is None:
                    await self.client.create(APISERVICES, want)
                elif managed and existing.get("spec") != {**(existing.get("spec") or {}), **want["spec"]}:
                    await self.client.patch(APISERVICES, key, {"spec": want["spec"]})
            elif managed:
                await self.client.delete(APISERVICES, key)
        except errors.StatusError as e:
            if e.code in (404, 409):
                return
            raise


def new_apiservice_registration_controller(ctx: ComponentContext) -> APIServiceRegistrationController:
    return APIServiceRegistrationController(
        ctx.client(NAME), clock=ctx.clock, metrics=controller_metrics(ctx.metrics_registry)
    )
