"""Real kubectl (1.35 and 1.37): the commands that watch — get -w, wait, rollout status.

They run as subprocesses; the test changes the object (over HTTP or with ``kubectl patch
--subresource=status``, since no controller owns the objects used here) and polls the output.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import TIMEOUT, Background, fails, http_get, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("kw")


def _cm(server: Server, ns: str, name: str) -> None:
    r = httpx.post(
        f"{server.url}/api/v1/namespaces/{ns}/configmaps",
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}},
        timeout=TIMEOUT,
    )
    assert r.status_code == 201, r.text


def test_get_watch(kubectl: Kubectl, ns: str, server: Server) -> None:
    _cm(server, ns, "first")
    with Background(kubectl, "-n", ns, "get", "configmaps", "-w") as w:
        header = w.wait_line(lambda line: line.startswith("NAME"))
        assert header.split() == ["NAME", "DATA", "AGE"]
        assert w.wait_line(lambda line: line.startswith("first ")).split()[:2] == ["first", "1"]
        _cm(server, ns, "second")
        assert w.wait_line(lambda line: line.startswith("second ")).split()[:2] == ["second", "1"]
        httpx.delete(f"{server.url}/api/v1/namespaces/{ns}/configmaps/first", timeout=TIMEOUT)
        # the deletion is printed as one more row of the object
        w.wait_line(
            lambda line: line.startswith("first ") and sum(x.startswith("first ") for x in w.lines) == 2
        )
        assert w.proc.poll() is None  # the stream stays open
        assert sum(1 for line in w.lines if line.startswith("NAME")) == 1  # Table rows, one header
    assert "warning" not in w.stderr.lower() and "error" not in w.stderr.lower(), w.stderr


def test_get_watch_named_object_and_output_name(kubectl: Kubectl, ns: str, server: Server) -> None:
    _cm(server, ns, "one")
    with Background(kubectl, "-n", ns, "get", "configmap", "one", "-w", "-o", "name") as w:
        assert w.wait_line(lambda line: line == "configmap/one")
        ok(kubectl, "-n", ns, "label", "configmap", "one", "x=y")
        w.wait_line(lambda line: line == "configmap/one" and len(w.lines) >= 2)
    assert w.stderr == ""


def test_wait_for_condition(kubectl: Kubectl, ns: str) -> None:
    """The Deployment controller sets Available; ``wait`` sees it (and times out on one that never comes)."""
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx")
    assert (
        ok(
            kubectl,
            "-n",
            ns,
            "wait",
            "--for=condition=Available",
            "deployment/web",
            "--timeout=30s",
            timeout=60,
        )
        == "deployment.apps/web condition met\n"
    )
    # already true: returns at once
    assert (
        ok(kubectl, "-n", ns, "wait", "--for=condition=Available", "deploy/web", "--timeout=10s")
        == "deployment.apps/web condition met\n"
    )
    proc = fails(kubectl, "-n", ns, "wait", "--for=condition=ReplicaFailure", "deploy/web", "--timeout=1s")
    assert proc.returncode == 1
    assert proc.stderr == "error: timed out waiting for the condition on deployments/web\n"


def test_wait_for_jsonpath(kubectl: Kubectl, ns: str) -> None:
    """``--for=jsonpath`` follows the status the Deployment controller writes as pods become Ready."""
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=2")
    out = ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.readyReplicas}=2",
        "deployment/web",
        "--timeout=30s",
        timeout=60,
    )
    assert out == "deployment.apps/web condition met\n"


def test_wait_for_delete(kubectl: Kubectl, ns: str, server: Server) -> None:
    _cm(server, ns, "gone")
    with Background(
        kubectl, "-v=6", "-n", ns, "wait", "--for=delete", "configmap/gone", "--timeout=30s"
    ) as w:
        w.wait_request("watch=true")
        httpx.delete(f"{server.url}/api/v1/namespaces/{ns}/configmaps/gone", timeout=TIMEOUT)
        rc, stdout, stderr = w.finish()
    assert (rc, stdout, stderr) == (0, "configmap/gone condition met", "")


STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx
"""


def test_rollout_status_statefulset(kubectl: Kubectl, ns: str, server: Server) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=STS)
    sts = http_get(server, f"/apis/apps/v1/namespaces/{ns}/statefulsets/web").json()
    assert sts["spec"]["updateStrategy"]["type"] == "RollingUpdate"  # defaulted: rollout status needs it
    with Background(kubectl, "-v=6", "-n", ns, "rollout", "status", "sts/web", "--timeout=40s") as w:
        w.wait_request("watch=true")
        # Say the rollout is complete (when the session server runs the StatefulSet controller,
        # scheduler and simulated nodes, they get there on their own as well).
        status = {
            "status": {
                "observedGeneration": sts["metadata"]["generation"],
                "replicas": 2,
                "readyReplicas": 2,
                "currentReplicas": 2,
                "updatedReplicas": 2,
                "availableReplicas": 2,
                "currentRevision": "web-1",
                "updateRevision": "web-1",
            }
        }
        kubectl.run(
            "-n",
            ns,
            "patch",
            "sts",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(status),
            timeout=TIMEOUT,
        )
        rc, stdout, stderr = w.finish(45)
    assert rc == 0 and stderr == "", stderr
    assert stdout.splitlines()[-1] == "partitioned roll out complete: 2 new pods have been updated..."
