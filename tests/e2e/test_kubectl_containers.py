"""Containers that answer, with real kubectl 1.35 and 1.37: ``logs`` (incl. ``-f`` ending when the
pod stops), ``exec`` over WebSocket (``echo hi``, ``sh -c 'exit 3'``), ``cp`` both ways through
exec's ``tar``, and ``attach``. Everything runs in gangplane's simulated shell, never on the host."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import Background, fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("ctr")

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    gangplane.dev/log: |-
      starting up
      listening on :8080
spec:
  terminationGracePeriodSeconds: {grace}
  containers:
  - name: web
    image: nginx:1.27
    env:
    - {{name: MODE, value: fast}}
    - name: MY_POD
      valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}
"""


def running(kubectl: Kubectl, ns: str, name: str = "web", grace: int = 0) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=POD.format(name=name, grace=grace))
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=30s", timeout=40)


def test_exec_echo_and_exit_codes(kubectl: Kubectl, ns: str) -> None:
    running(kubectl, ns)
    assert ok(kubectl, "-n", ns, "exec", "web", "--", "echo", "hi") == "hi\n"
    proc = kubectl.run("-n", ns, "exec", "web", "--", "sh", "-c", "exit 3", check=False)
    assert proc.returncode == 3, proc.stderr
    assert "command terminated with exit code 3" in proc.stderr
    assert ok(kubectl, "-n", ns, "exec", "web", "--", "sh", "-c", 'echo "$MODE $MY_POD $(hostname)"') == (
        "fast web web\n"
    )
    out = ok(kubectl, "-n", ns, "exec", "-i", "web", "--", "sh", input="echo one\necho two >&2\nexit 0\n")
    assert out == "one\n"
    proc = kubectl.run("-n", ns, "exec", "web", "--", "python3", "-V", check=False)
    assert proc.returncode != 0
    assert 'exec: "python3": executable file not found in $PATH' in proc.stderr


def test_exec_errors_name_the_problem(kubectl: Kubectl, ns: str) -> None:
    running(kubectl, ns)
    proc = fails(kubectl, "-n", ns, "exec", "web", "-c", "nope", "--", "true")
    assert "container nope is not valid for pod web" in proc.stderr
    proc = fails(kubectl, "-n", ns, "exec", "ghost", "--", "true")
    assert 'pods "ghost" not found' in proc.stderr
    assert "body of the request was empty" not in proc.stderr


def test_logs_tail_timestamps_and_follow_until_the_pod_stops(kubectl: Kubectl, ns: str) -> None:
    running(kubectl, ns, grace=2)
    out = ok(kubectl, "-n", ns, "logs", "web")
    assert out == "starting up\nlistening on :8080\n"
    assert ok(kubectl, "-n", ns, "logs", "web", "--tail=1") == "listening on :8080\n"
    stamped = ok(kubectl, "-n", ns, "logs", "web", "--timestamps").splitlines()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z starting up", stamped[0])
    proc = fails(kubectl, "-n", ns, "logs", "web", "--previous")
    assert 'previous terminated container "web" in pod "web" not found' in proc.stderr
    with Background(kubectl, "-n", ns, "logs", "-f", "web") as follow:
        follow.wait_line(lambda line: line == "listening on :8080")
        ok(kubectl, "-n", ns, "delete", "pod", "web", "--wait=false")
        code, out, err = follow.finish(timeout=30)
    assert code == 0, err
    assert out.splitlines()[-1] == "gangplane: simulated container web exited with code 0"


def test_cp_into_and_out_of_a_pod(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    running(kubectl, ns)
    src = tmp_path / "notes.txt"
    src.write_text("hello from the host\n")
    ok(kubectl, "-n", ns, "cp", str(src), "web:/tmp/notes.txt")
    assert ok(kubectl, "-n", ns, "exec", "web", "--", "cat", "/tmp/notes.txt") == "hello from the host\n"
    back = tmp_path / "back.txt"
    ok(kubectl, "-n", ns, "cp", "web:/tmp/notes.txt", str(back))
    assert back.read_text() == "hello from the host\n"


def test_exec_events_are_not_needed_and_the_pod_is_untouched(kubectl: Kubectl, ns: str) -> None:
    running(kubectl, ns)
    before = json.loads(ok(kubectl, "-n", ns, "get", "pod", "web", "-o", "json"))
    ok(kubectl, "-n", ns, "exec", "web", "--", "sh", "-c", "echo x > /tmp/x")
    after = json.loads(ok(kubectl, "-n", ns, "get", "pod", "web", "-o", "json"))
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


ATTACHABLE = """\
apiVersion: v1
kind: Pod
metadata: {name: tty}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: sh, image: busybox, stdin: true}
"""


def test_attach_to_a_shell(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=ATTACHABLE)
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/tty", "--timeout=30s", timeout=40)
    proc = kubectl.run(
        "-n", ns, "attach", "-i", "tty", input="echo attached $HOSTNAME\nexit 0\n", check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "attached tty" in proc.stdout


SPDY = {"KUBECTL_REMOTE_COMMAND_WEBSOCKETS": "false"}


def test_exec_attach_and_cp_over_the_spdy_upgrade(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    """kubectl's SPDY/3.1 fallback (``v4.channel.k8s.io`` streams in a plain ``Upgrade: SPDY/3.1``
    connection) reaches the same simulated shell, with exit codes on the error stream."""
    running(kubectl, ns)
    proc = kubectl.run("-n", ns, "exec", "web", "--", "echo", "hi", env=SPDY, check=False)
    assert (proc.returncode, proc.stdout) == (0, "hi\n"), proc.stderr
    proc = kubectl.run(
        "-n", ns, "exec", "web", "--", "sh", "-c", "echo out; echo err >&2; exit 3", env=SPDY, check=False
    )
    assert (proc.returncode, proc.stdout) == (3, "out\n")
    assert "err\n" in proc.stderr and "command terminated with exit code 3" in proc.stderr
    proc = kubectl.run(
        "-n", ns, "exec", "-i", "web", "--", "sh", input="echo typed\nexit 0\n", env=SPDY, check=False
    )
    assert (proc.returncode, proc.stdout) == (0, "typed\n"), proc.stderr
    src = tmp_path / "notes.txt"
    src.write_text("over spdy\n")
    proc = kubectl.run("-n", ns, "cp", str(src), "web:/tmp/notes.txt", env=SPDY, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ok(kubectl, "-n", ns, "exec", "web", "--", "cat", "/tmp/notes.txt") == "over spdy\n"
    proc = kubectl.run("-n", ns, "exec", "web", "-c", "nope", "--", "true", env=SPDY, check=False)
    assert proc.returncode != 0 and "container nope is not valid for pod web" in proc.stderr
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=ATTACHABLE)
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/tty", "--timeout=30s", timeout=40)
    proc = kubectl.run(
        "-n", ns, "attach", "-i", "tty", input="echo attached $HOSTNAME\nexit 0\n", env=SPDY, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "attached tty" in proc.stdout
