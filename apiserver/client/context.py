"""What a component is given: :class:`ComponentContext`, the narrow view of the control plane.

kube's components get a kubeconfig, their flags and a discovery client; gangplane's factories
(``controllers.manager``, ``scheduler.component``, ``controllers.nodeagent`` …) get a
``ComponentContext`` built by the composition root (:mod:`gangplane.controlplane`) for that one
component. It hands out API clients, informer factories, the component's own feature-gate view
(so skew tests can turn a gate off for one component), the clock and the metrics registry, and
answers "is this resource served" through discovery. It never exposes the registry or the
store: everything a component learns about the API it learns through the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from prometheus_client import CollectorRegistry

from apiserver.api.types import Obj
from apiserver.client.discovery import APIResource
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import GVR, Client
from apiserver.meta import Clock
from featuregates import FeatureGate


class Component(Protocol):
    """Anything the control plane runs: a controller, the scheduler, the node agent."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class ComponentContext(Protocol):
    """The dependencies one component's factory may draw on."""

    #: the component's name (``statefulset-controller``, ``scheduler`` …); the default user agent
    name: str
    #: this component's feature-gate view (the server's gates with the component's overrides)
    gates: FeatureGate
    clock: Clock
    metrics_registry: CollectorRegistry

    def client(self, user_agent: str = "") -> Client:
        """A new API client whose user agent (default field manager) is ``user_agent`` or :attr:`name`."""
        ...

    def informer_factory(self, user_agent: str = "") -> InformerFactory:
        """A fresh informer factory over a new client (see :meth:`client`)."""
        ...

    def shared_informers(self) -> InformerFactory:
        """The informers of this component's process binary, shared with the binary's other
        components: kube-controller-manager's controllers share ONE informer per resource and each
        registers its own handlers (:mod:`apiserver.client.sharedinformers`). A component that is
        its own binary (the scheduler, the node agent) gets a fresh factory of its own."""
        ...

    def served_resources(self) -> list[APIResource]:
        """Discovery's top-level resources this component may use, each storage listed once.

        A resource is listed when the API serves it and this component's gate view does not
        turn off the gate that guards it.
        """
        ...

    def is_served(self, gvr: GVR) -> bool:
        """Whether ``gvr`` is in :meth:`served_resources`."""
        ...

    def sign_service_account_token(self, claims: Obj) -> str:
        """A JWT of ``claims`` signed with the cluster's service-account key (kube-controller-manager's
        ``--service-account-private-key-file``), which the API server's authenticator accepts."""
        ...

    def root_ca(self) -> bytes:
        """The CA bundle clients verify the API server with (``--root-ca-file``); empty over plain HTTP."""
        ...


ComponentFactory = Callable[[ComponentContext], Component]


class ComponentRegistrar(Protocol):
    """Where wiring code registers factories: the composition root's ``ControlPlane``."""

    def register(self, name: str, factory: ComponentFactory, group: str | None = None) -> None:
        """``group`` names a gate-view group the component belongs to (``kube-controller-manager``)."""
        ...

    def context_for(self, name: str) -> ComponentContext: ...
