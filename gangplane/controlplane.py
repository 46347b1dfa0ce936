"""The composition root: one API server plus the components ``gangplane serve`` runs beside it.

Tests build the same :class:`ControlPlane` in-process (no sockets) and start only the components
they need; ``gangplane serve`` adds the HTTP listener. This module (with :mod:`gangplane.cli`) is
the only code that imports both the API server and every component; nothing imports it back but
tests. Each component's factory receives a
:class:`~apiserver.client.context.ComponentContext` built for it here: in-process clients, its
own feature-gate view, the clock, the metrics registry and discovery, never the store or
registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import uvicorn
from prometheus_client import CollectorRegistry

from apiserver.api.types import Obj
from apiserver.auth.serviceaccount import SigningKey
from apiserver.client.context import Component, ComponentContext, ComponentFactory
from apiserver.client.discovery import APIResource, api_resources
from apiserver.client.events import EventRecorder
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import GVR
from apiserver.client.leaderelection import (
    KUBE_CONTROLLER_MANAGER_LEASE,
    KUBE_SCHEDULER_LEASE,
    NODE_AGENT_LEASE,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    new_identity,
)
from apiserver.client.sharedinformers import SHARED_INFORMERS_USER_AGENT, SharedInformerFactory
from apiserver.meta import Clock
from apiserver.registry.eventttl import DEFAULT_EVENT_TTL, EventExpiry
from apiserver.registry.generic import GenericStore
from apiserver.server.app import APIApp, status_response
from apiserver.server.discovery import api_resource_list
from apiserver.server.frontdoor import FrontDoor, FrontDoorPolicy
from apiserver.server.heaptrim import HeapTrimmer
from apiserver.server.instance import build_api, new_metrics_registry, publish_apiserver_endpoint
from apiserver.server.localclient import LocalClient, ReadOnlyObjects
from apiserver.server.loopshare import LoopShare
from apiserver.storage.interface import Storage
from controllers.manager import NODE_AGENT, register_controllers
from featuregates import FeatureGate
from featuregates.scopes import APISERVER, CONTROLLER_MANAGER
from scheduler.component import COMPONENT_NAME as SCHEDULER
from scheduler.component import register_scheduler
from scheduler.config import SchedulerConfig
from scheduler.records import RecordLimits
from scheduler.records.api import CONFIGZ_SECTION as RECORDS_CONFIGZ

if TYPE_CHECKING:
    from apiserver.api.types import Obj
    from apiserver.server.tlsgen import ServingFiles
    from gangplane.ui.app import UI

log = logging.getLogger("gangplane")

#: gangplane's watch hook (``gangplane bench --ui``): awaited with each ControlPlane that starts in
#: this context, once. A context variable, not a global: only the run that sets it is affected.
PLANE_STARTED: ContextVar[Callable[[ControlPlane], Awaitable[object]] | None] = ContextVar(
    "gangplane_plane_started", default=None
)

__all__ = [
    "Component",
    "ComponentContext",
    "ComponentFactory",
    "ControlPlane",
    "ControlPlaneOptions",
    "default_components",
    "tune_gc",
]


@dataclass
class ControlPlaneOptions:
    """How to build a :class:`ControlPlane`: gates, storage, auth, leader election and the other knobs
    ``gangplane serve`` sets from flags."""

    gates: FeatureGate = field(default_factory=FeatureGate)
    #: per-component gate overrides (``{"scheduler": {"GenericWorkload": False}}``) for skew tests;
    #: a key may also name a component group (``kube-controller-manager``)
    component_gates: dict[str, dict[str, bool]] = field(default_factory=dict)
    clock: Clock | None = None
    bookmark_interval: float = 15.0
    #: kube-apiserver's ``--service-cluster-ip-range`` / ``--service-node-port-range``
    service_cluster_ip_range: str = "10.96.0.0/12"
    service_node_port_range: str = "30000-32767"
    client_bookmark_interval: float = 5.0
    #: kube-apiserver's ``--authorization-mode``: ``AlwaysAllow`` (default) or ``RBAC``; decides HTTP
    #: requests behind the front door. In-process clients act as the loopback ``system:masters``.
    authorization_mode: str = "AlwaysAllow"
    #: the backend holding the cluster (``apiserver.storage.options.open_storage``); in memory if None
    storage: Storage | None = None
    #: ``--leader-elect``: components assigned to a Lease (:meth:`ControlPlane.elect`) run only
    #: while this process holds it; None runs every component unconditionally
    leader_election: LeaderElectionConfig | None = None
    #: the holder identity of every Lease this process competes for (default ``<hostname>_<uuid>``,
    #: one per Lease, as each kube component process makes its own)
    leader_election_identity: str = ""
    #: signs and checks service-account tokens (``--service-account-signing-key-file``, or the
    #: data dir's key); None makes one for this process, so its tokens end with it
    service_account_key: SigningKey | None = None
    #: kube-apiserver's ``--event-ttl``: seconds an Event lives after its last write (0: for ever)
    event_ttl: float = DEFAULT_EVENT_TTL
    #: where admission webhooks behind a Service listen (gangplane runs no pods):
    #: ``"<namespace>/<service>[:<port>]"`` -> ``"host:port"`` (``--webhook-service``)
    webhook_service_addresses: dict[str, str] = field(default_factory=dict)
    #: ``--scheduler-config``: the loaded ``KubeSchedulerConfiguration`` (None: kube's defaults);
    #: its effective form is served at ``/configz``
    scheduler_config: SchedulerConfig | None = None
    #: gangplane's scheduling records (``SchedulingRecord`` objects, ``gangplane explain``): off
    #: here (tests and benchmarks pay nothing), on in ``gangplane serve`` (``--scheduling-records``);
    #: True keeps them with the default bounds, a ``RecordLimits`` with its own
    #: (``--scheduling-records-max-subjects``)
    scheduling_records: bool | RecordLimits = False


class ControlPlane:
    def __init__(self, options: ControlPlaneOptions | None = None) -> None:
        self.options = options or ControlPlaneOptions()
        self.gates = self.options.gates
        self.clock = self.options.clock or Clock()
        self.metrics_registry: CollectorRegistry
        self.metrics_registry, self.metrics = new_metrics_registry()
        self._groups: dict[str, str] = {}
        self.api: GenericStore = build_api(
            self.gates_for(APISERVER),
            self.clock,
            store=self.options.storage,
            service_cluster_ip_range=self.options.service_cluster_ip_range,
            service_node_port_range=self.options.service_node_port_range,
            authorization_mode=self.options.authorization_mode,
            service_account_key=self.options.service_account_key,
            webhook_service_addresses=self.options.webhook_service_addresses,
        )
        self.app = APIApp(
            self.api, self.metrics, self.metrics_registry, bookmark_interval=self.options.bookmark_interval
        )
        self._default_scheduler_config: SchedulerConfig | None = None
        self.app.configz["componentconfig"] = self._scheduler_configz
        if self.options.scheduling_records:
            # gangplane's own section: what the scheduler keeps, for ``gangplane explain``
            self.app.configz[RECORDS_CONFIGZ] = self._records_configz
        #: the objects informers share (checked for in-place changes when the plane stops, in tests)
        self.read_only_objects = ReadOnlyObjects()
        #: which in-process requests give the loop back first: one share for all the plane's clients
        self.loop_share = LoopShare()
        self.components: dict[str, Component] = {}
        #: component group (``kube-controller-manager``) -> the informers its components share
        self.shared_informers: dict[str, SharedInformerFactory] = {}
        self._factories: dict[str, ComponentFactory] = {}
        #: component name -> the Lease that guards it (used only with ``options.leader_election``)
        self._leases: dict[str, str] = {}
        #: lease name -> the elector competing for it, while the guarded components are wanted
        self.electors: dict[str, LeaderElector] = {}
        self._server: _Server | None = None
        self._watched = False
        self._server_task: asyncio.Task[None] | None = None
        self._trim_task: asyncio.Task[None] | None = None
        #: returns freed heap to the system after connections close (set by serve_http)
        self.heap_trimmer: HeapTrimmer | None = None
        self._storage_started = False
        #: expires Events (``options.event_ttl``) while the storage runs
        self.event_expiry: EventExpiry | None = None
        if self.options.event_ttl > 0:
            events = self.api.registry.get("", "v1", "events")
            assert events is not None
            self.event_expiry = EventExpiry(
                self.api.store, events, self.clock, self.options.event_ttl, notify=self.api._notify
            )
        self.url = ""
        #: the CA of the HTTPS listener (:meth:`serve_http` with ``tls``), which controllers
        #: publish as ``ca.crt``; empty while nothing is served over TLS
        self.root_ca = b""

    def _scheduler_configz(self) -> dict[str, Any]:
        """The scheduler's effective configuration for ``/configz`` (kube's defaults when no file was
        given, built on the first request so that a start does not pay for it)."""
        config = self.options.scheduler_config or self._default_scheduler_config
        if config is None:
            from scheduler.config.load import default_scheduler_config

            config = self._default_scheduler_config = default_scheduler_config()
        return config.configz()

    def _records_configz(self) -> dict[str, Any]:
        records = self.options.scheduling_records
        limits = records if isinstance(records, RecordLimits) else RecordLimits()
        return {"maxSubjects": limits.subjects, "attemptsPerSubject": limits.attempts_per_subject}

    # ------------------------------------------------------------------ clients & gates
    def client(self, user_agent: str = "gangplane") -> LocalClient:
        return LocalClient(
            self.api,
            user_agent,
            self.options.client_bookmark_interval,
            self.read_only_objects,
            self.loop_share,
        )

    def gates_for(self, component: str) -> FeatureGate:
        """The component's gate view: global gates, then its group's overrides, then its own."""
        group = self._groups.get(component)
        overrides = {
            **(self.options.component_gates.get(group) or {} if group else {}),
            **(self.options.component_gates.get(component) or {}),
        }
        return self.gates.with_overrides(overrides) if overrides else self.gates

    def group_of(self, component: str) -> str | None:
        """The gate-view group ``component`` was registered with (``kube-controller-manager``)."""
        return self._groups.get(component)

    def informer_factory(self, user_agent: str) -> InformerFactory:
        return InformerFactory(self.client(user_agent))

    def shared_informers_for(self, name: str) -> InformerFactory:
        """Component ``name``'s share of its group's informers (one kube binary: the controllers of
        ``kube-controller-manager`` share one informer per resource, with handlers of their own);
        a component registered without a group gets its own factory."""
        group = self._groups.get(name)
        if group is None:
            return InformerFactory(self.client(name))
        shared = self.shared_informers.get(group)
        if shared is None:
            shared = self.shared_informers[group] = SharedInformerFactory(
                self.client(SHARED_INFORMERS_USER_AGENT)
            )
        return shared.for_component(name)

    def context_for(self, name: str) -> ComponentContext:
        """The context component ``name``'s factory receives: built afresh on every start, so a
        changed ``options.component_gates`` entry takes effect at the component's next start."""
        return _Context(self, name)

    # ------------------------------------------------------------------ components
    def register(self, name: str, factory: ComponentFactory, group: str | None = None) -> None:
        """Register a component; ``group`` (``featuregates.scopes.CONTROLLER_MANAGER``) shares gate overrides."""
        self._factories[name] = factory
        if group:
            self._groups[name] = group
        else:
            self._groups.pop(name, None)

    async def start_component(self, name: str) -> Component:
        if name in self.components:
            return self.components[name]
        comp = self._factories[name](self.context_for(name))
        await comp.start()
        self.components[name] = comp
        return comp

    async def stop_component(self, name: str) -> None:
        comp = self.components.pop(name, None)
        if comp is not None:
            await comp.stop()

    def elect(self, name: str, lease: str) -> None:
        """Guard component ``name`` by Lease ``lease`` in ``kube-system`` when leader election is on.

        Components sharing a Lease start and stop together, as one kube binary does.
        """
        self._leases[name] = lease

    def lease_of(self, name: str) -> str | None:
        return self._leases.get(name) if self.options.leader_election is not None else None

    async def start(self, names: list[str] | None = None) -> None:
        """Start ``names`` (default: every registered component), in order.

        With leader election on, the components guarded by a Lease are started by that Lease's
        elector instead: at once when the Lease is free (a fresh cluster, or released by a
        graceful stop), otherwise when this process takes it over.
        """
        if not self._storage_started:
            self._storage_started = True
            await self.api.store.start()
            if self.event_expiry is not None:
                self.event_expiry.start()
        groups: dict[str, list[str]] = {}
        for name in names if names is not None else list(self._factories):
            lease = self.lease_of(name)
            if lease is None:
                await self.start_component(name)
            else:
                groups.setdefault(lease, []).append(name)
        for lease, members in groups.items():
            await self.start_elector(lease, members)
        hook = PLANE_STARTED.get()
        if hook is not None and not self._watched:
            self._watched = True
            await hook(self)

    async def start_elector(self, lease: str, names: list[str]) -> LeaderElector:
        """Compete for ``lease``; while this process holds it, ``names`` run (in order)."""
        config = self.options.leader_election or LeaderElectionConfig()
        existing = self.electors.get(lease)
        if existing is not None:
            return existing
        client = self.client(lease)
        lock = LeaseLock(
            client,
            lease,
            self.options.leader_election_identity or new_identity(),
            recorder=EventRecorder(client, lease, clock=self.clock),
        )

        async def started() -> None:
            for name in names:
                await self.start_component(name)

        async def stopped() -> None:
            for name in reversed(names):
                await self.stop_component(name)

        elector = LeaderElector(
            lock,
            config,
            self.clock,
            on_started_leading=started,
            on_stopped_leading=stopped,
            metrics_registry=self.metrics_registry,
        )
        self.electors[lease] = elector
        await elector.start()
        return elector

    async def stop_elector(self, lease: str, *, release: bool | None = None) -> None:
        """Stop competing for ``lease``: its components stop, then the Lease is released
        (``release_on_cancel``; ``release=False`` leaves it held, as a killed process would)."""
        elector = self.electors.pop(lease, None)
        if elector is not None:
            await elector.stop(release=release)

    async def stop_components(self, *, release: bool | None = None) -> None:
        """Stop every elector and component, keeping the API server, its store and HTTP running.

        ``start()`` afterwards is a restart of the components against the stored state (what
        restarting ``gangplane serve`` on the same data does, minus the API server).
        """
        for lease in reversed(list(self.electors)):
            await self.stop_elector(lease, release=release)
        for name in reversed(list(self.components)):
            await self.stop_component(name)

    async def stop(self) -> None:
        await self.stop_components()
        await self.stop_http()
        if self.api.webhook_clients is not None:
            await self.api.webhook_clients.aclose()
        if self._storage_started:
            self._storage_started = False
            if self.event_expiry is not None:
                await self.event_expiry.stop()
            await self.api.store.close()
        self.read_only_objects.verify()

    # ------------------------------------------------------------------ HTTP
    async def serve_http(
        self,
        host: str = "127.0.0.1",
        port: int = 6443,
        *,
        front_door: FrontDoorPolicy | None = None,
        tls: ServingFiles | None = None,
        ui: UI | None = None,
    ) -> str:
        """Listen on ``host:port`` (0 picks a free port); returns the URL once accepting connections.

        ``front_door`` puts the Host check, bearer-token authentication (the policy's tokens and
        bound service-account tokens), impersonation and authorization (``authorization_mode``)
        in front of every request (``gangplane serve`` always does; in-process tests may not);
        ``tls`` serves HTTPS with those files. ``ui`` adds gangplane's live view at ``/ui/``
        (its assets public, its session cookie one more way through the front door).
        """
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto is
        # TCP, and without it every response waits ~40 ms for the client's delayed ACK.
        sock = socket.socket(
            socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
        )
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        real_port = sock.getsockname()[1]
        self.app.server_address = f"{host}:{real_port}"
        app: Any = self.app.asgi()
        if ui is not None:
            app = ui.wrap(app)
        if front_door is not None:
            if ui is not None:
                front_door.public_paths = (*front_door.public_paths, "/ui")
                front_door.cookie_authenticator = ui.sessions.authenticate_cookie
            if host in ("0.0.0.0", "::", ""):
                front_door.allow_ip_literals = True
            else:
                front_door.allowed_hosts.add(host.lower())
            if self.api.service_account_tokens not in front_door.authenticators:
                front_door.authenticators.append(self.api.service_account_tokens)
            if front_door.authorization is None:
                front_door.authorization = self.api.authorization
            app = FrontDoor(app, front_door, status_response)
            self.api.authenticate_token = front_door.authenticate
        tls_options: dict[str, Any] = {}
        if tls is not None:
            tls_options = {"ssl_certfile": str(tls.cert), "ssl_keyfile": str(tls.key)}
            self.root_ca = tls.ca_pem()
        from apiserver.server.transport import HTTPProtocol

        config = uvicorn.Config(
            app,
            **tls_options,
            http=HTTPProtocol,
            log_level="warning",
            lifespan="off",
            access_log=False,
            # kube trusts no X-Forwarded-* header; uvicorn's proxy middleware would, from loopback
            proxy_headers=False,
            timeout_graceful_shutdown=1,
            timeout_keep_alive=30,
        )
        self._server = _Server(config)
        self._server_task = asyncio.create_task(self._server.serve(sockets=[sock]))
        server = self._server
        self.heap_trimmer = HeapTrimmer(lambda: len(server.server_state.connections))
        self._trim_task = asyncio.create_task(self.heap_trimmer.run(), name="heap-trim")
        while not self._server.started:
            if self._server_task.done():
                self._server_task.result()
                raise RuntimeError("HTTP server exited during start-up")
            await asyncio.sleep(0.005)
        host_part = f"[{host}]" if ":" in host else host
        self.url = f"{'https' if tls is not None else 'http'}://{host_part}:{real_port}"
        publish_apiserver_endpoint(self.api, host, real_port)
        return self.url

    async def stop_http(self) -> None:
        if self._trim_task is not None:
            self._trim_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._trim_task
            self._trim_task = None
        if self._server is not None:
            # open watches end first, so their connections close cleanly instead of being
            # cancelled mid-response (uvicorn waits up to timeout_graceful_shutdown for them)
            self.app.close_watches()
            self._server.should_exit = True
            if self._server_task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(self._server_task, 5)
            self._server = None
            self._server_task = None


#: the cyclic collector's thresholds :func:`tune_gc` sets (the bench runs its in-process planes
#: under the same): a young pass every 200,000 net allocations of tracked objects, a
#: generation-1 pass on every fifth trigger, after four young passes (every 1,000,000
#: allocations: no later than the 1,100,000 of the former ``(50_000, 20, 20)``, see
#: :data:`GEN1_INTERVAL`), a full pass by CPython's own rule (20 generation-1 passes and a
#: quarter of the long-lived heap new since the last one).
#:
#: Why 200,000 and not 50,000: a young pass traverses every tracked object alive at that moment
#: that arrived since the last one, and a plane busy with a gang always holds tens of thousands
#: of short-lived ones (a member's cycle state, assignment and waiting pod until the gang is
#: bound; binding tasks, their coroutines and futures; watch events on their way): with a pass
#: every 50,000 allocations about half of what a pass traversed was such work in flight, which
#: a pass four times rarer mostly finds gone (the session-16 ``gcshare`` section of
#: docs/bench.md has the measurements). What survives is traversed once per generation either
#: way. The cost is a longer pause per young pass (~50 ms → ~150 ms with 5,000-pod gangs) and
#: cyclic garbage waiting up to 200,000 allocations instead of 50,000 (the plane makes little:
#: tens of objects per pass).
GC_THRESHOLD = (200_000, 3, 20)

#: the net allocations between two generation-1 passes at most, for :data:`GC_THRESHOLD`:
#: CPython collects generation 1 on the first trigger that finds its count (the young passes
#: since the last one) above its threshold, so ``threshold[1] + 1`` young passes and then the
#: generation-1 pass come ``threshold[0]`` allocations apart. A garbage cycle that outlived a young pass waits this long; the plane keeps
#: it at or below the 1,100,000 of the former (50,000, 20, 20), so that making young passes
#: rarer never postpones a generation-1 pass (which would only move its cost, not remove it).
GEN1_INTERVAL = GC_THRESHOLD[0] * (GC_THRESHOLD[1] + 2)


def tune_gc() -> None:
    """Collect young objects less often and freeze start-up objects out of the collector.

    The control plane allocates many small dicts per write; CPython's default gen-0 threshold
    (700) makes the cyclic collector a large share of write latency. Reference counting still
    frees almost everything at once; only the cycle detector runs less often.

    No full collection runs first: ``gangplane serve`` starts with the collector off (its
    collections would traverse the growing start-up heap for nothing), so the cycles a start
    leaves (a few hundred small objects with the default fleet: import-time tracebacks,
    finished tasks) are frozen with the rest instead of costing a traversal of every object
    of the start (about 45 ms). The collector is (re-)enabled here.
    """
    import gc

    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    gc.enable()


class _Context:
    """:class:`ComponentContext` over one :class:`ControlPlane`, for one component."""

    def __init__(self, cp: ControlPlane, name: str) -> None:
        self._cp = cp
        self.name = name
        self.gates = cp.gates_for(name)
        self.clock = cp.clock
        self.metrics_registry = cp.metrics_registry

    def client(self, user_agent: str = "") -> LocalClient:
        return self._cp.client(user_agent or self.name)

    def informer_factory(self, user_agent: str = "") -> InformerFactory:
        return InformerFactory(self.client(user_agent))

    def shared_informers(self) -> InformerFactory:
        return self._cp.shared_informers_for(self.name)

    def served_resources(self) -> list[APIResource]:
        return self._discovered(dedupe_storage=True)

    def is_served(self, gvr: GVR) -> bool:
        # Only the resource's own group-version document can list it, so that one is built,
        # not all of discovery (~1 ms each, for the ~6 questions a start asks while wiring).
        api = self._cp.api
        doc = api_resource_list(api.registry, gvr.group, gvr.version, api.gates)
        if doc is None:
            return False
        return any(r.gvr == gvr for r in self._narrowed([doc], dedupe_storage=False))

    def sign_service_account_token(self, claims: Obj) -> str:
        token: str = self._cp.api.service_account_tokens.sign(claims)
        return token

    def root_ca(self) -> bytes:
        return self._cp.root_ca

    def _discovered(self, *, dedupe_storage: bool) -> list[APIResource]:
        return self._narrowed(self.client().discovery_documents(), dedupe_storage=dedupe_storage)

    def _narrowed(self, docs: list[Obj], *, dedupe_storage: bool) -> list[APIResource]:
        # Discovery says what the API server serves; this component's own gate view can only
        # narrow it (version skew: a component that does not know a gated API ignores it).
        # Which gate guards which resource is wiring knowledge, kept here in the root.
        gated = {
            GVR(rd.group, rd.version, rd.plural): rd.gate
            for rd in self._cp.api.registry.all()
            if rd.gate is not None
        }
        return [
            r
            for r in api_resources(docs, dedupe_storage=dedupe_storage)
            if r.gvr not in gated or self.gates.enabled(gated[r.gvr])
        ]


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the CLI owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def default_components(cp: ControlPlane, cluster: Any = None, controllers: str = "*") -> list[str]:
    """Register every component gangplane ships; returns the names registered, in start order.

    Components live in the ``controllers`` and ``scheduler`` packages; they are imported here,
    at the composition root, so the API machinery never depends on them. Each is assigned the
    Lease kube's binary would hold (used when ``options.leader_election`` is on): the controllers
    share ``kube-controller-manager``, the scheduler holds ``kube-scheduler`` and the node agent
    ``gangplane-node-agent`` (one agent simulates every node, so it is elected rather than sharded).
    """
    names = [
        *register_controllers(cp, controllers, cluster),
        *register_scheduler(cp, cp.options.scheduler_config, cp.options.scheduling_records),
    ]
    for name in names:
        if name == SCHEDULER:
            cp.elect(name, KUBE_SCHEDULER_LEASE)
        elif name == NODE_AGENT:
            cp.elect(name, NODE_AGENT_LEASE)
        elif cp.group_of(name) == CONTROLLER_MANAGER:
            cp.elect(name, KUBE_CONTROLLER_MANAGER_LEASE)
    return names
