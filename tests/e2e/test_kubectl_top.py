"""``kubectl top nodes|pods`` (1.35 and 1.37) against gangplane's ``metrics.k8s.io/v1beta1``: usage is
what the running containers request, scaled or set by the ``gangplane.dev/usage`` annotation."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import http_get, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("top")

PODS = """\
apiVersion: v1
kind: Pod
metadata:
  name: half
  labels: {{app: top}}
  annotations: {{gangplane.dev/usage: "50%"}}
spec:
  nodeName: {node}
  containers:
  - name: c
    image: busybox
    resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: fixed
  labels: {{app: top}}
  annotations: {{gangplane.dev/usage.c: "cpu=100m,memory=64Mi"}}
spec:
  nodeName: {node}
  containers:
  - name: c
    image: busybox
    resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
"""


def test_top_pods_and_nodes(kubectl: Kubectl, server: Server, ns: str) -> None:
    node = json.loads(ok(kubectl, "get", "nodes", "-o", "json"))["items"][0]["metadata"]["name"]
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=PODS.format(node=node))
    for name in ("half", "fixed"):
        ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=30s", timeout=40)
    rows = {
        line.split()[0]: line.split()[1:] for line in ok(kubectl, "-n", ns, "top", "pods").splitlines()[1:]
    }
    assert rows == {"half": ["250m", "128Mi"], "fixed": ["100m", "64Mi"]}
    out = ok(kubectl, "-n", ns, "top", "pods", "-l", "app=top", "--containers")
    assert [line.split() for line in out.splitlines()] == [
        ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"],
        ["fixed", "c", "100m", "64Mi"],
        ["half", "c", "250m", "128Mi"],
    ]
    nodes = ok(kubectl, "top", "nodes").splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    (row,) = [line.split() for line in nodes if line.split()[0] == node]
    # other tests share the server: the node uses at least what these two pods use
    assert int(row[1].removesuffix("m")) >= 350 and int(row[3].removesuffix("Mi")) >= 192
    m = http_get(server, f"/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods/half").json()
    assert (m["kind"], m["window"], m["containers"][0]["usage"]) == (
        "PodMetrics",
        "30s",
        {"cpu": "250000000n", "memory": "131072Ki"},
    )
    r = http_get(server, "/apis/metrics.k8s.io/v1beta1/nodes?watch=true")
    assert r.status_code == 405
