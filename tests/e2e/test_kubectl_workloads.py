"""The everyday workload plumbing with real kubectl against ``gangplane serve``.

A new namespace has its ``default`` ServiceAccount within a second; ``kubectl create token`` gets a
signed JWT; Services get ClusterIPs and NodePorts from the configured ranges (and kube's errors for
taken ones); EndpointSlices track Ready pods; a DaemonSet puts one pod on every eligible node; the
``kubernetes`` Service points at the API server.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import time

import httpx
import pytest

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import delete_namespace, fails, namespace, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("wl")


def test_a_new_namespace_has_a_default_service_account_within_a_second(server: Server) -> None:
    started = time.monotonic()
    name = namespace(server, "sa")
    try:
        url = f"{server.url}/api/v1/namespaces/{name}/serviceaccounts"
        lst = httpx.get(url, timeout=5).json()
        found = any(i["metadata"]["name"] == "default" for i in lst["items"])
        if not found:
            remaining = max(0.05, 1.0 - (time.monotonic() - started))
            params = {
                "watch": "1",
                "resourceVersion": lst["metadata"]["resourceVersion"],
                "fieldSelector": "metadata.name=default",
                "timeoutSeconds": "1",
            }
            with httpx.stream("GET", url, params=params, timeout=remaining + 1) as r:
                for line in r.iter_lines():
                    if line and json.loads(line)["type"] == "ADDED":
                        found = True
                        break
        assert found and time.monotonic() - started < 1.0
    finally:
        delete_namespace(server, name)


def test_kubectl_create_token_returns_a_service_account_jwt(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "wait", "--for=create", "serviceaccount/default", "--timeout=10s")
    token = ok(kubectl, "-n", ns, "create", "token", "default", "--audience=vault", "--duration=15m").strip()
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == f"system:serviceaccount:{ns}:default" and claims["aud"] == ["vault"]
    assert claims["exp"] - claims["iat"] == 900 and signature


def test_services_get_addresses_from_the_ranges(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "service", "clusterip", "web", "--tcp=80:8080")
    svc = json.loads(ok(kubectl, "-n", ns, "get", "svc", "web", "-o", "json"))
    assert ipaddress.ip_address(svc["spec"]["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    ok(kubectl, "-n", ns, "create", "service", "nodeport", "np", "--tcp=80:8080")
    np = json.loads(ok(kubectl, "-n", ns, "get", "svc", "np", "-o", "json"))
    assert 30000 <= np["spec"]["ports"][0]["nodePort"] <= 32767
    ok(kubectl, "-n", ns, "create", "service", "clusterip", "db", "--clusterip=None")
    assert json.loads(ok(kubectl, "-n", ns, "get", "svc", "db", "-o", "json"))["spec"]["clusterIPs"] == [
        "None"
    ]
    proc = fails(
        kubectl, "-n", ns, "create", "service", "clusterip", "clash", "--clusterip=10.96.0.1", "--tcp=80:80"
    )
    assert (
        'spec.clusterIPs: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: provided IP is already allocated'
        in proc.stderr
    )
    kubernetes = json.loads(ok(kubectl, "get", "endpointslice", "kubernetes", "-n", "default", "-o", "json"))
    assert kubernetes["ports"][0]["port"] == int(server_port(kubectl.server))


def server_port(server: Server) -> str:
    return server.url.rsplit(":", 1)[1]


def test_endpoint_slices_track_ready_pods_of_a_deployment(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80")
    ok(kubectl, "-n", ns, "expose", "deployment", "web", "--port=8080", "--target-port=80")
    ok(kubectl, "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s", timeout=90)
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.endpoints[1].conditions.ready}=true",
        "endpointslice",
        "-l",
        "kubernetes.io/service-name=web",
        "--timeout=30s",
    )
    table = ok(kubectl, "-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name=web")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert row.split()[1:3] == ["IPv4", "80"] and len(row.split()[3].split(",")) == 2
    pods = json.loads(ok(kubectl, "-n", ns, "get", "pods", "-l", "app=web", "-o", "json"))["items"]
    eps = json.loads(ok(kubectl, "-n", ns, "get", "endpointslices", "-o", "json"))["items"][0]
    assert sorted(e["addresses"][0] for e in eps["endpoints"]) == sorted(p["status"]["podIP"] for p in pods)


def test_daemonset_runs_one_pod_per_node(kubectl: Kubectl, ns: str) -> None:
    nodes = json.loads(ok(kubectl, "get", "nodes", "-o", "json"))["items"]
    eligible = [
        n
        for n in nodes
        if not any(t["effect"] in ("NoSchedule", "NoExecute") for t in n["spec"].get("taints") or [])
    ]
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {"name": "a", "image": "agent:1", "resources": {"requests": {"cpu": "1m"}}}
                    ],
                },
            },
        },
    }
    assert "daemonset.apps/agent created" in ok(
        kubectl, "-n", ns, "create", "-f", "-", input=json.dumps(manifest)
    )
    ok(kubectl, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=60s", timeout=90)
    pods = json.loads(ok(kubectl, "-n", ns, "get", "pods", "-l", "app=agent", "-o", "json"))["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted(n["metadata"]["name"] for n in eligible)
    ok(kubectl, "-n", ns, "set", "image", "daemonset/agent", "a=agent:2")
    ok(kubectl, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=90s", timeout=120)
    history = ok(kubectl, "-n", ns, "rollout", "history", "daemonset/agent")
    assert [ln.split()[0] for ln in history.strip().splitlines()[2:]] == ["1", "2"]
    table = ok(kubectl, "-n", ns, "get", "ds", "agent").splitlines()[1].split()
    assert table[1:6] == [str(len(eligible))] * 5
    assert "daemonset.apps/agent rolled back" in ok(kubectl, "-n", ns, "rollout", "undo", "daemonset/agent")
    ok(kubectl, "-n", ns, "rollout", "status", "daemonset/agent", "--timeout=90s", timeout=120)
    pods = json.loads(ok(kubectl, "-n", ns, "get", "pods", "-l", "app=agent", "-o", "json"))["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert {p["spec"]["containers"][0]["image"] for p in live} == {"agent:1"}


def test_deleting_a_deployment_cascades_to_its_replicasets_and_pods(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "deployment", "gone", "--image=nginx:1.27", "--replicas=2")
    ok(kubectl, "-n", ns, "rollout", "status", "deployment/gone", "--timeout=60s", timeout=90)
    assert 'deployment.apps "gone" deleted' in ok(
        kubectl, "-n", ns, "delete", "deployment", "gone", "--wait=true"
    )
    ok(kubectl, "-n", ns, "wait", "--for=delete", "pod", "-l", "app=gone", "--timeout=60s", timeout=90)
    assert ok(kubectl, "-n", ns, "get", "rs", "-l", "app=gone", "-o", "name").strip() == ""


def test_explain_endpointslice(kubectl: Kubectl) -> None:
    out = ok(kubectl, "explain", "endpointslice.endpoints.conditions")
    assert "serving" in out and "terminating" in out
