"""The composition root: one API server plus the components ``gangplane serve`` runs beside it.

Tests build the same :class:`ControlPlane` in-process (no sockets) and start only the components
they need; ``gangplane serve`` adds the HTTP listener. Components receive an in-process client
and their own feature-gate view, never the store or registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import uvicorn
from prometheus_client import CollectorRegistry

from apiserver.client.informer import InformerFactory
from apiserver.client.local import LocalClient
from apiserver.meta import Clock
from apiserver.registry.generic import API
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry
from featuregates import FeatureGate
from featuregates.scopes import APISERVER

log = logging.getLogger("gangplane")


class Component(Protocol):
    """Anything the control plane runs: a controller, the scheduler, the node agent."""

    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


ComponentFactory = Callable[["ControlPlane"], Component]


@dataclass
class ControlPlaneOptions:
    gates: FeatureGate = field(default_factory=FeatureGate)
    #: per-component gate overrides (``{"scheduler": {"GenericWorkload": False}}``) for skew tests;
    #: a key may also name a component group (``kube-controller-manager``)
    component_gates: dict[str, dict[str, bool]] = field(default_factory=dict)
    clock: Clock | None = None
    bookmark_interval: float = 15.0
    client_bookmark_interval: float = 5.0


class ControlPlane:
    def __init__(self, options: ControlPlaneOptions | None = None) -> None:
        self.options = options or ControlPlaneOptions()
        self.gates = self.options.gates
        self.clock = self.options.clock or Clock()
        self.metrics_registry: CollectorRegistry
        self.metrics_registry, self.metrics = new_metrics_registry()
        self._groups: dict[str, str] = {}
        self.api: API = build_api(self.gates_for(APISERVER), self.clock)
        self.app = APIApp(self.api, self.metrics, self.metrics_registry, bookmark_interval=self.options.bookmark_interval)
        self.components: dict[str, Component] = {}
        self._factories: dict[str, ComponentFactory] = {}
        self._server: _Server | None = None
        self._server_task: asyncio.Task[None] | None = None
        self.url = ""

    # ------------------------------------------------------------------ clients & gates
    def client(self, user_agent: str = "gangplane") -> LocalClient:
        return LocalClient(self.api, user_agent, self.options.client_bookmark_interval)

    def gates_for(self, component: str) -> FeatureGate:
        """The component's gate view: global gates, then its group's overrides, then its own."""
        group = self._groups.get(component)
        overrides = {
            **(self.options.component_gates.get(group) or {} if group else {}),
            **(self.options.component_gates.get(component) or {}),
        }
        return self.gates.with_overrides(overrides) if overrides else self.gates

    def informer_factory(self, user_agent: str) -> InformerFactory:
        return InformerFactory(self.client(user_agent))

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
        comp = self._factories[name](self)
        await comp.start()
        self.components[name] = comp
        return comp

    async def stop_component(self, name: str) -> None:
        comp = self.components.pop(name, None)
        if comp is not None:
            await comp.stop()

    async def start(self, names: list[str] | None = None) -> None:
        for name in names if names is not None else list(self._factories):
            await self.start_component(name)

    async def stop(self) -> None:
        for name in reversed(list(self.components)):
            await self.stop_component(name)
        await self.stop_http()

    # ------------------------------------------------------------------ HTTP
    async def serve_http(self, host: str = "127.0.0.1", port: int = 6443) -> str:
        """Listen on ``host:port`` (0 picks a free port); returns the URL once accepting connections."""
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto is
        # TCP, and without it every response waits ~40 ms for the client's delayed ACK.
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        real_port = sock.getsockname()[1]
        self.app.server_address = f"{host}:{real_port}"
        config = uvicorn.Config(
            self.app.asgi(),
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
            timeout_keep_alive=30,
        )
        self._server = _Server(config)
        self._server_task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._server_task.done():
                self._server_task.result()
                raise RuntimeError("HTTP server exited during start-up")
            await asyncio.sleep(0.005)
        host_part = f"[{host}]" if ":" in host else host
        self.url = f"http://{host_part}:{real_port}"
        return self.url

    async def stop_http(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
            if self._server_task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(self._server_task, 5)
            self._server = None
            self._server_task = None


def tune_gc() -> None:
    """Collect young objects less often and freeze start-up objects out of the collector.

    The control plane allocates many small dicts per write; CPython's default gen-0 threshold
    (700) makes the cyclic collector a large share of write latency. Reference counting still
    frees almost everything at once; only the cycle detector runs less often.
    """
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the CLI owns SIGINT/SIGTERM."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def default_components(cp: ControlPlane, cluster: Any = None, controllers: str = "*") -> list[str]:
    """Register every component gangplane ships; returns the names registered.

    Components live in the ``controllers`` and ``scheduler`` packages; they are imported here,
    at the composition root, so the API machinery never depends on them.
    """
    names: list[str] = []
    try:
        from controllers.manager import register_controllers
    except ImportError:
        register_controllers = None  # type: ignore[assignment]
    if register_controllers is not None:
        names.extend(register_controllers(cp, controllers, cluster))
    try:
        from scheduler.component import register_scheduler
    except ImportError:
        register_scheduler = None  # type: ignore[assignment]
    if register_scheduler is not None:
        names.extend(register_scheduler(cp))
    return names
