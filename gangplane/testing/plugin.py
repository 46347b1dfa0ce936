"""The ``gangplane`` pytest plugin: a fresh Kubernetes control plane per test, no cluster needed.

Enabled by installing gangplane (a ``pytest11`` entry point). Fixtures:

* ``gangplane`` — an in-process control plane (no sockets): ``client()``, ``informers()``,
  ``stop_component``/``start_component``, watch-based ``wait_for``/``wait_deleted``/
  ``wait_pods_running``;
* ``gangplane_webhooks`` — admission webhook handlers (Python callables on AdmissionReview dicts,
  or ASGI apps) served over HTTPS from the test process and registered, removed at teardown
  (:mod:`gangplane.testing.webhook`);
* ``gangplane_server`` — the same served over HTTP on a free loopback port, with ``kubeconfig``,
  ``server``, ``api_client`` (the official ``kubernetes`` client) and ``kubectl(*args)``.

``@pytest.mark.gangplane(cluster=..., nodes=[...], feature_gates={...}, component_gates={...},
controllers="*", crds=["config/crd"])`` configures the plane of a test (or, as ``pytestmark``, of
a module). ``--gangplane-scope=module|session`` shares one plane per module or session (cleaned
between tests: everything a test created is deleted) instead of starting one per test; a test
whose marker asks for another configuration still gets its own.

``--gangplane-ui`` serves gangplane's live view of each test's control plane and prints its login
URL, so a run can be watched in a browser; ``--gangplane-ui-hold=SECONDS`` keeps a failed test's
plane up that long before tearing it down.

On a failing test the plugin adds the tail of the control plane's log and the cluster's events
to the report, beside pytest's own sections.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gangplane.testing.plane import GangplaneServer, InProcessPlane, PlaneConfig, PlaneHost
from gangplane.testing.webhook import Webhooks
from gangplane.ui.watch import PlaneWatcher

SCOPES = ("function", "module", "session")
_HOSTS = pytest.StashKey[dict[tuple[str, PlaneConfig], PlaneHost]]()
_USED = pytest.StashKey[list[PlaneHost]]()
_WATCHER = pytest.StashKey[PlaneWatcher]()
_FAILED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gangplane")
    group.addoption(
        "--gangplane-scope",
        choices=SCOPES,
        default=None,
        help="share one gangplane control plane per module or session (cleaned between tests); default: per test",
    )
    parser.addini("gangplane_scope", "default for --gangplane-scope", default="function")
    group.addoption(
        "--gangplane-ui",
        action="store_true",
        default=False,
        help="serve gangplane's live view of each test's control plane and print its login URL",
    )
    group.addoption(
        "--gangplane-ui-port",
        type=int,
        default=6445,
        help="with --gangplane-ui: the port in-process planes are viewed on, kept from test to test (6445)",
    )
    group.addoption(
        "--gangplane-ui-hold",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --gangplane-ui: keep a failed test's control plane serving this long before its teardown",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gangplane(cluster=None, nodes=None, feature_gates=None, component_gates=None, controllers='*', crds=()):"
        " configure the gangplane control plane of this test",
    )
    config.stash[_HOSTS] = {}


def pytest_unconfigure(config: pytest.Config) -> None:
    for host in config.stash.get(_HOSTS, {}).values():
        host.stop()
    config.stash[_HOSTS] = {}


def _watcher(config: pytest.Config) -> PlaneWatcher | None:
    """The run's view server (``--gangplane-ui``): one set of sessions for every plane."""
    if not config.getoption("--gangplane-ui"):
        return None
    watcher = config.stash.get(_WATCHER, None)
    if watcher is None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")

        def say(line: str) -> None:
            if reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(line)
            else:
                print(line, flush=True)

        watcher = config.stash[_WATCHER] = PlaneWatcher(config.getoption("--gangplane-ui-port"), say)
    return watcher


def _watch(request: pytest.FixtureRequest, host: PlaneHost) -> None:
    """Serve an in-process plane's API and view (behind a front door only the view's cookie opens)."""
    watcher = _watcher(request.config)
    if watcher is not None and host.plane.control_plane.url == "":
        host.call(watcher.serve(host.plane.control_plane, request.node.nodeid))


def _hold_if_failed(request: pytest.FixtureRequest) -> None:
    hold = request.config.getoption("--gangplane-ui-hold")
    watcher = _watcher(request.config)
    if watcher is not None and hold > 0 and request.node.stash.get(_FAILED, False):
        watcher.say(
            f"gangplane: {request.node.nodeid} failed; its plane stays up {hold:g}s for the live view"
        )
        time.sleep(hold)  # the plane runs on its own thread: the view stays live meanwhile


def _scope(config: pytest.Config) -> str:
    scope = config.getoption("--gangplane-scope") or config.getini("gangplane_scope") or "function"
    if scope not in SCOPES:
        raise pytest.UsageError(f"gangplane_scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


def _config_for(request: pytest.FixtureRequest) -> tuple[PlaneConfig, bool]:
    """The test's plane configuration and whether a marker set it on the test itself."""
    kwargs: dict[str, Any] = {}
    own = False
    for mark in reversed(list(request.node.iter_markers("gangplane"))):
        if mark.args:
            raise pytest.UsageError("@pytest.mark.gangplane takes keyword arguments only")
        kwargs.update(mark.kwargs)
    own = any(m.name == "gangplane" for m in request.node.own_markers)
    base = Path(str(request.node.fspath)).parent
    return PlaneConfig.from_kwargs(base, **kwargs), own


def _scope_key(request: pytest.FixtureRequest, scope: str) -> str:
    if scope == "session":
        return "session"
    return str(request.node.fspath)


def _host(request: pytest.FixtureRequest) -> Iterator[PlaneHost]:
    """A started plane for this test: fresh, or the shared one of its module/session (reset after)."""
    config, own = _config_for(request)
    scope = _scope(request.config)
    if scope == "function" or own:
        host = PlaneHost(config).start()
        request.node.stash[_USED] = [host]
        try:
            _watch(request, host)
            yield host
        finally:
            _hold_if_failed(request)
            host.stop()
        return
    hosts = request.config.stash[_HOSTS]
    key = (_scope_key(request, scope), config)
    if scope == "module":
        # a module's plane ends with the module: stop the others of earlier modules
        for other_key in [k for k in hosts if k[0] != key[0] and k[0] != "session"]:
            hosts.pop(other_key).stop()
    shared = hosts.get(key)
    if shared is None:
        shared = hosts[key] = PlaneHost(config).start()
    host = shared
    request.node.stash[_USED] = [host]
    try:
        _watch(request, host)
        yield host
    finally:
        _hold_if_failed(request)
        host.reset()


@pytest.fixture
def gangplane(request: pytest.FixtureRequest) -> Iterator[InProcessPlane]:
    """An in-process control plane (API server, controllers, scheduler, simulated nodes)."""
    for host in _host(request):
        yield InProcessPlane(host)


@pytest.fixture
def gangplane_webhooks(gangplane: InProcessPlane) -> Iterator[Webhooks]:
    """Admission webhooks served from the test process (envtest's ``WebhookInstallOptions``):
    ``await gangplane_webhooks.validating(handler, rules=[rule("", "v1", "configmaps")])`` serves
    ``handler`` over HTTPS with a fresh CA and registers its configuration; both go at teardown."""
    hooks = Webhooks(gangplane.client("gangplane-webhooks"))
    try:
        yield hooks
    finally:
        gangplane.call(hooks.close(gangplane.control_plane.client("gangplane-webhooks")))


@pytest.fixture
def gangplane_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GangplaneServer]:
    """A control plane served over HTTP on a free loopback port, with a kubeconfig and clients."""
    config, own = _config_for(request)
    scope = _scope(request.config)
    if scope != "function" and not own:
        raise pytest.UsageError(
            "gangplane_server always starts its own plane; use --gangplane-scope only with the in-process fixture"
        )
    host = PlaneHost(config).start()
    request.node.stash[_USED] = [host]
    server = GangplaneServer(host, tmp_path / "gangplane")
    watcher = _watcher(request.config)
    try:
        server.start(ui=watcher.ui if watcher is not None else None)
        if watcher is not None:
            watcher.announce(server.server, request.node.nodeid)
        yield server
    finally:
        _hold_if_failed(request)
        server.close_clients()
        host.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and call.when in ("call", "setup"):
        item.stash[_FAILED] = True
        for host in item.stash.get(_USED, []):
            try:
                log_tail, events = host.report()
            except Exception as e:  # the report must never hide the test's own failure
                log_tail, events = "", f"<unavailable: {e}>"
            report.sections.append(("gangplane log (tail)", log_tail or "<empty>"))
            report.sections.append(("gangplane events", events))
    return report
