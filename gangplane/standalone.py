"""One component in its own process, against any API server over HTTP: what ``gangplane scheduler``,
``gangplane controller-manager`` and ``gangplane node-agent`` run.

kube ships its components as separate binaries that know the API server only from a kubeconfig;
this module is gangplane's equivalent. :class:`StandaloneComponents` is a
:class:`~apiserver.client.context.ComponentRegistrar` whose contexts hand out
:class:`~apiserver.client.http.HTTPClient`\\ s (one shared connection pool), answer discovery
from the server's own documents (read once at start), and carry the process's gate view, clock
and metrics registry. The very factories ``gangplane serve`` registers in-process
(``controllers.manager.register_controllers``, ``scheduler.component.register_scheduler``) are
registered here, so a component cannot tell the two apart. With leader election on, the
process competes for the component's Lease (``kube-scheduler``, ``kube-controller-manager``,
``gangplane-node-agent``) exactly like the in-process control plane does, so a standalone
scheduler and a ``gangplane serve`` that also runs one never both act.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from apiserver.api.types import Obj
from apiserver.auth.serviceaccount import SigningKey
from apiserver.client.context import Component, ComponentContext, ComponentFactory
from apiserver.client.discovery import APIResource, api_resources
from apiserver.client.events import EventRecorder
from apiserver.client.http import HTTPClient, HTTPTransport
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import GVR
from apiserver.client.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock, new_identity
from apiserver.client.restconfig import RESTConfig
from apiserver.client.sharedinformers import SHARED_INFORMERS_USER_AGENT, SharedInformerFactory
from apiserver.meta import Clock
from featuregates import FeatureGate

log = logging.getLogger("gangplane.standalone")


class NoSigningKey(RuntimeError):
    """A component asked to sign a service-account token in a process given no key."""


@dataclass
class StandaloneOptions:
    """What one component process is given on its command line."""

    config: RESTConfig
    gates: FeatureGate = field(default_factory=FeatureGate)
    leader_election: LeaderElectionConfig | None = None
    #: signs service-account tokens (kube-controller-manager's ``--service-account-private-key-file``)
    signer: SigningKey | None = None
    #: the CA published as ``ca.crt`` (``--root-ca-file``; default: the kubeconfig's CA)
    root_ca: bytes = b""
    clock: Clock | None = None


class StandaloneComponents:
    """The components of one process, wired to a remote API server (see the module docstring)."""

    def __init__(self, options: StandaloneOptions) -> None:
        self.options = options
        self.clock = options.clock or Clock()
        self.metrics_registry = CollectorRegistry()
        self.transport = HTTPTransport(options.config)
        self._factories: dict[str, ComponentFactory] = {}
        self.components: dict[str, Component] = {}
        self.electors: dict[str, LeaderElector] = {}
        #: the informers this process's controllers share (kube-controller-manager's one factory)
        self.shared_informers = SharedInformerFactory(self.client(SHARED_INFORMERS_USER_AGENT))
        self._discovery: list[Obj] = []
        #: resources whose feature gate this process's view may turn off (gate per GVR)
        self._gated: dict[GVR, str] = {}

    async def discover(self) -> None:
        """Read the server's discovery documents (needed before factories are registered or run)."""
        from apiserver.registry.builtin import builtin_resources

        self._discovery = await self.client("discovery").server_resources()
        self._gated = {
            GVR(rd.group, rd.version, rd.plural): rd.gate for rd in builtin_resources() if rd.gate is not None
        }

    def client(self, user_agent: str) -> HTTPClient:
        return HTTPClient(self.transport, user_agent)

    # ------------------------------------------------------------------ ComponentRegistrar
    def register(self, name: str, factory: ComponentFactory, group: str | None = None) -> None:
        self._factories[name] = factory

    def context_for(self, name: str) -> ComponentContext:
        return _StandaloneContext(self, name)

    def served(self, *, dedupe_storage: bool) -> list[APIResource]:
        gates = self.options.gates
        return [
            r
            for r in api_resources(self._discovery, dedupe_storage=dedupe_storage)
            if r.gvr not in self._gated or gates.enabled(self._gated[r.gvr])
        ]

    # ------------------------------------------------------------------ running
    async def start_component(self, name: str) -> None:
        if name in self.components:
            return
        comp = self._factories[name](self.context_for(name))
        await comp.start()
        self.components[name] = comp
        log.info("started %s", name)

    async def stop_component(self, name: str) -> None:
        comp = self.components.pop(name, None)
        if comp is not None:
            await comp.stop()

    async def start(self, names: list[str], lease: str) -> None:
        """Run ``names`` (in order): at once without leader election, else while holding ``lease``."""
        if self.options.leader_election is None:
            for name in names:
                await self.start_component(name)
            return
        client = self.client(lease)
        lock = LeaseLock(
            client, lease, new_identity(), recorder=EventRecorder(client, lease, clock=self.clock)
        )

        async def started() -> None:
            for name in names:
                await self.start_component(name)

        async def stopped() -> None:
            for name in reversed(names):
                await self.stop_component(name)

        elector = LeaderElector(
            lock,
            self.options.leader_election,
            self.clock,
            on_started_leading=started,
            on_stopped_leading=stopped,
            metrics_registry=self.metrics_registry,
        )
        self.electors[lease] = elector
        await elector.start()

    async def stop(self) -> None:
        """Stop competing (releasing held Leases), stop every component, close the connections."""
        for lease in reversed(list(self.electors)):
            await self.electors.pop(lease).stop()
        for name in reversed(list(self.components)):
            await self.stop_component(name)
        await self.transport.aclose()


class _StandaloneContext:
    """:class:`ComponentContext` of one component in a :class:`StandaloneComponents` process."""

    def __init__(self, owner: StandaloneComponents, name: str) -> None:
        self._owner = owner
        self.name = name
        self.gates = owner.options.gates
        self.clock = owner.clock
        self.metrics_registry = owner.metrics_registry

    def client(self, user_agent: str = "") -> HTTPClient:
        return self._owner.client(user_agent or self.name)

    def informer_factory(self, user_agent: str = "") -> InformerFactory:
        return InformerFactory(self.client(user_agent))

    def shared_informers(self) -> InformerFactory:
        return self._owner.shared_informers.for_component(self.name)

    def served_resources(self) -> list[APIResource]:
        return self._owner.served(dedupe_storage=True)

    def is_served(self, gvr: GVR) -> bool:
        return any(r.gvr == gvr for r in self._owner.served(dedupe_storage=False))

    def sign_service_account_token(self, claims: Obj) -> str:
        signer = self._owner.options.signer
        if signer is None:
            raise NoSigningKey("no --service-account-private-key-file was given to sign tokens with")
        return signer.sign(claims)

    def root_ca(self) -> bytes:
        return self._owner.options.root_ca or self._owner.options.config.ca_pem
