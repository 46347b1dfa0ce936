"""The official Python client's ``stream()`` exec against simulated containers: the commands its
own e2e suite runs (a ``for`` loop over ``seq``, a gzip pipe read as bytes, ``uptime``, an
interactive ``sh`` fed over stdin, ``cat`` ended by closing stdin with v5's close signal, and the
exit codes of ``false``, ``exit 3``, ``true`` and ``ls /``)."""

from __future__ import annotations

import gc
import gzip
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace

pytestmark = [
    pytest.mark.e2e,
    # kubernetes.stream's preloaded calls never close their websocket-client socket (the library's
    # ``websocket_call`` returns the output without ``close()``): the warning is about the client
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")
stream_mod = pytest.importorskip("kubernetes.stream")
ws_client = pytest.importorskip("kubernetes.stream.ws_client")
watch = pytest.importorskip("kubernetes.watch")


@pytest.fixture(autouse=True)
def _collect_client_sockets() -> Iterator[None]:
    """Collect the sockets ``kubernetes.stream`` leaves open now, under this module's warning
    filter, rather than in whichever later test the garbage collector happens to run."""
    yield
    gc.collect()


@pytest.fixture
def core(server: Server) -> Iterator[tuple[Any, str]]:
    client = config.new_client_from_config(config_file=str(server.kubeconfig))
    api = k8s.CoreV1Api(client)
    ns = "pyx-" + uuid.uuid4().hex[:8]
    api.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "box"},
        "spec": {
            "containers": [
                {
                    "name": "sleep",
                    "image": "busybox",
                    "args": ["/bin/sh", "-c", "while true; do date; sleep 5; done"],
                }
            ]
        },
    }
    api.create_namespaced_pod(ns, pod)
    w = watch.Watch()
    for ev in w.stream(api.list_namespaced_pod, ns, field_selector="metadata.name=box", timeout_seconds=30):
        if ev["object"].status.phase == "Running":
            w.stop()
    yield api, ns
    delete_namespace(server, ns)
    client.close()


def test_exec_output_as_text_and_bytes(core: tuple[Any, str]) -> None:
    api, ns = core
    out = stream_mod.stream(
        api.connect_get_namespaced_pod_exec,
        "box",
        ns,
        command=["/bin/sh", "-c", "for i in $(seq 1 3); do date; done"],
        stderr=False,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert isinstance(out, str) and len(out.splitlines()) == 3
    raw = stream_mod.stream(
        api.connect_get_namespaced_pod_exec,
        "box",
        ns,
        command=["/bin/sh", "-c", 'echo -n "This is a test string" | gzip'],
        stderr=False,
        stdin=False,
        stdout=True,
        tty=False,
        binary=True,
    )
    assert gzip.decompress(raw) == b"This is a test string"
    out = stream_mod.stream(
        api.connect_post_namespaced_pod_exec,
        "box",
        ns,
        command=["uptime"],
        stderr=False,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert len(out.splitlines()) == 1


def test_interactive_shell_over_stdin(core: tuple[Any, str]) -> None:
    api, ns = core
    resp = stream_mod.stream(
        api.connect_post_namespaced_pod_exec,
        "box",
        ns,
        command=["/bin/sh"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.write_stdin("echo test string 1\n")
    assert resp.readline_stdout(timeout=5) == "test string 1"
    assert not resp.peek_stderr()
    resp.write_stdin("echo test string 2 >&2\n")
    assert resp.readline_stderr(timeout=5) == "test string 2"
    resp.write_stdin("exit\n")
    resp.run_forever(timeout=5)
    status = json.loads(resp.read_channel(ws_client.ERROR_CHANNEL))
    assert status["status"] == "Success"
    assert not resp.is_open()


def test_closing_stdin_ends_cat_over_v5(core: tuple[Any, str]) -> None:
    api, ns = core
    resp = stream_mod.stream(
        api.connect_post_namespaced_pod_exec,
        "box",
        ns,
        command=["/bin/sh", "-c", "cat"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    assert resp.subprotocol == "v5.channel.k8s.io"
    resp.write_stdin("test-close\n")
    assert resp.readline_stdout(timeout=5) == "test-close"
    resp.close_channel(0)
    resp.run_forever(timeout=15)
    assert not resp.is_open()
    assert resp.returncode == 0


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["false"], 1),
        (["/bin/sh", "-c", "sleep 1; exit 3"], 3),
        (["true"], 0),
        (["/bin/sh", "-c", "ls /"], 0),
    ],
)
def test_exit_codes(core: tuple[Any, str], command: list[str], code: int) -> None:
    api, ns = core
    client = stream_mod.stream(
        api.connect_get_namespaced_pod_exec,
        "box",
        ns,
        command=command,
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    assert client.returncode is None
    client.run_forever(timeout=10)
    assert client.returncode == code


def test_portforward_reaches_the_generic_echo_responder(core: tuple[Any, str]) -> None:
    """Nothing listens in a simulated container: every forwarded port echoes (gangplane's generic
    responder), so the official suite's raw test passes its echo part and fails its closed-port
    check (port 1236 answers too), and its nginx test finds no nginx page."""
    api, ns = core
    pf = stream_mod.portforward(api.connect_get_namespaced_pod_portforward, "box", ns, ports="1234,1235")
    assert pf.connected
    socks = {port: pf.socket(port) for port in (1234, 1235)}
    for port, sock in socks.items():
        sock.settimeout(10)  # a broken forward fails the test instead of hanging it
        sent = f"Test port {port} forwarding".encode()
        sock.sendall(sent)
        got = b""
        while len(got) < len(sent):
            chunk = sock.recv(1024)
            assert chunk, "unexpected close"
            got += chunk
        assert got == sent
        assert pf.error(port) is None
    for sock in socks.values():
        sock.close()
