"""``kubectl port-forward`` with real kubectl 1.35 and 1.37, over both transports kubectl uses:
SPDY/3.1 tunnelled in a WebSocket (``SPDY/3.1+portforward.k8s.io``, the default) and the plain
``Upgrade: SPDY/3.1`` it falls back to (``KUBECTL_PORT_FORWARD_WEBSOCKETS=false``). One error +
data stream pair per local connection, answered by the simulated container's generic echo
responder; the pod deleted ends the forward."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Kubectl, _start_server, _stop
from tests.e2e.kubectl_util import Background, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("pf")

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: web
    image: registry.example/anything:1
    ports: [{containerPort: 8080}]
"""


def running(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=POD)
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/web", "--timeout=30s", timeout=40)


@contextmanager
def forward(
    kubectl: Kubectl, ns: str, *ports: str, tunnel: bool = True
) -> Iterator[tuple[Background, list[int]]]:
    """kubectl port-forward in the background (remote ports distinct), and the local port it
    listens on for each, in order, once it says so. ``tunnel=False``: the plain SPDY upgrade."""
    env = {"KUBECTL_PORT_FORWARD_WEBSOCKETS": "true" if tunnel else "false"}
    with Background(kubectl, "-n", ns, "port-forward", "pod/web", *ports, env=env) as fwd:
        local = []
        for remote in ports:
            pattern = re.compile(rf"Forwarding from 127\.0\.0\.1:(\d+) -> {remote.split(':')[-1]}$")
            line = fwd.wait_line(lambda ln, p=pattern: bool(p.match(ln)))
            local.append(int(pattern.match(line).group(1)))  # type: ignore[union-attr]
        yield fwd, local


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    sock.settimeout(20)
    return sock


def read_exactly(sock: socket.socket, n: int) -> bytes:
    got = b""
    while len(got) < n:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {len(got)} of {n} bytes"
        got += chunk
    return got


TRANSPORTS = pytest.mark.parametrize("tunnel", [True, False], ids=["websocket-tunnel", "spdy-upgrade"])


@TRANSPORTS
def test_port_forward_answers_a_local_connection(kubectl: Kubectl, ns: str, tunnel: bool) -> None:
    running(kubectl, ns)
    with forward(kubectl, ns, "0:8080", tunnel=tunnel) as (fwd, (port,)):
        sock = connect(port)
        request = b"GET / HTTP/1.1\r\nHost: web\r\n\r\n"
        sock.sendall(request)
        assert read_exactly(sock, len(request)) == request
        sock.shutdown(socket.SHUT_WR)  # the client is done: the forwarded connection ends
        assert sock.recv(100) == b""
        sock.close()
        # the forward outlives a connection: a second one is served too
        again = connect(port)
        again.sendall(b"ping\n")
        assert read_exactly(again, 5) == b"ping\n"
        again.close()
        fwd.stop()
    assert "an error occurred forwarding" not in fwd.stderr


@TRANSPORTS
def test_two_concurrent_connections_and_two_ports(kubectl: Kubectl, ns: str, tunnel: bool) -> None:
    running(kubectl, ns)
    with forward(kubectl, ns, "0:8080", "0:9090", tunnel=tunnel) as (fwd, (p1, p2)):
        a, b, c = connect(p1), connect(p1), connect(p2)
        big = bytes(range(256)) * 800  # 200 KiB: more than one SPDY flow-control window
        a.sendall(b"first:")
        b.sendall(b"second")
        c.sendall(b"other port")
        assert read_exactly(b, 6) == b"second"
        assert read_exactly(c, 10) == b"other port"
        assert read_exactly(a, 6) == b"first:"
        a.sendall(big)
        assert read_exactly(a, len(big)) == big
        for s in (a, b, c):
            s.close()
        fwd.stop()
    assert "an error occurred forwarding" not in fwd.stderr


@TRANSPORTS
def test_deleting_the_pod_ends_the_forward(kubectl: Kubectl, ns: str, tunnel: bool) -> None:
    running(kubectl, ns)
    with forward(kubectl, ns, "0:8080", tunnel=tunnel) as (fwd, (port,)):
        sock = connect(port)
        sock.sendall(b"hi")
        assert read_exactly(sock, 2) == b"hi"
        ok(kubectl, "-n", ns, "delete", "pod", "web", "--wait=false")
        code, _, err = fwd.finish(timeout=30)
        sock.close()
    assert code == 1
    assert "lost connection to pod" in err


def test_the_spdy_upgrade_refuses_protocols_it_does_not_speak(kubectl: Kubectl, ns: str) -> None:
    """kube's ``httpstream.Handshake``: 403 naming both sides' protocols, before any upgrade."""
    running(kubectl, ns)
    resp = httpx.post(
        f"{kubectl.server.url}/api/v1/namespaces/{ns}/pods/web/portforward",
        headers={
            "Connection": "Upgrade",
            "Upgrade": "SPDY/3.1",
            "X-Stream-Protocol-Version": "portforward.v9",
        },
        timeout=30,
    )
    assert resp.status_code == 403
    assert resp.json()["message"] == (
        "unable to upgrade: unable to negotiate protocol: client supports [portforward.v9], "
        "server accepts [portforward.k8s.io]"
    )


def test_stopping_the_server_ends_spdy_connections_without_a_traceback(
    tmp_path: Path, kubectl137: Path
) -> None:
    """Connections taken over by the SPDY upgrade end when ``gangplane serve`` stops, as the
    WebSocket ones do, instead of holding the shutdown until its grace period runs out."""
    server = _start_server(tmp_path, ["--no-tls", "--anonymous"])
    try:
        kubectl = Kubectl(kubectl137, server, "1.37")
        ok(kubectl, "create", "namespace", "pf-stop")
        running(kubectl, "pf-stop")
        with (
            forward(kubectl, "pf-stop", "0:8080", tunnel=False) as (fwd, (port,)),
            Background(
                kubectl, "-v=6", "-n", "pf-stop", "exec", "web", "--", "sleep", "300", env=SPDY_EXEC
            ) as sleeper,
        ):
            sleeper.wait_request("/exec?")  # upgraded: the simulated sleep runs
            sock = connect(port)
            sock.sendall(b"up")
            assert read_exactly(sock, 2) == b"up"
            _stop(server)
            code, _, err = fwd.finish(timeout=30)
            sock.close()
            assert code == 1 and "lost connection to pod" in err
            sleeper.finish(timeout=30)
    finally:
        _stop(server)
    log = (tmp_path / "serve.log").read_text()
    assert server.proc.returncode == 0, log
    assert "Traceback" not in log and "graceful shutdown exceeded" not in log, log


SPDY_EXEC = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}
