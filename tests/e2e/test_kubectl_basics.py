"""Real kubectl (1.35 and 1.37) against ``gangplane serve``: version, discovery, generators, get, describe, explain.

Each test runs once per kubectl version (the ``kubectl`` fixture) in its own namespace and asserts
that kubectl prints no warning or error where a real cluster prints none.
"""

from __future__ import annotations

import uuid

import pytest
import yaml

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("kb")


def test_version(kubectl: Kubectl) -> None:
    """gangplane serves the 1.37 APIs but reports gitVersion v1.36: the one minor version within
    kubectl's supported skew (+/-1) of every client it promises to satisfy, 1.35 through 1.37."""
    proc = kubectl.run("version", check=False, timeout=20)
    assert proc.returncode == 0, proc.stderr
    assert f"Client Version: v{kubectl.version}." in proc.stdout
    assert "Server Version: v1.36.0+gangplane" in proc.stdout
    assert proc.stderr == ""


def test_api_resources(kubectl: Kubectl) -> None:
    out = ok(kubectl, "api-resources", timeout=20)
    rows: dict[str, list[str]] = {}
    for line in out.splitlines()[1:]:
        if (
            line.strip()
        ):  # nodes and pods are listed twice: core, and metrics.k8s.io's (as with metrics-server)
            rows.setdefault(line.split()[0], line.split())
    assert rows["statefulsets"][1:3] == ["sts", "apps/v1"]
    assert rows["pods"][1:3] == ["po", "v1"]
    assert rows["workloads"][1] == "scheduling.k8s.io/v1beta1"
    assert rows["podgroups"][1] == "scheduling.k8s.io/v1beta1"
    for name in (
        "configmaps",
        "secrets",
        "namespaces",
        "deployments",
        "controllerrevisions",
        "events",
        "nodes",
    ):
        assert name in rows, name
    out = ok(kubectl, "api-resources", "--api-group=scheduling.k8s.io", "-o", "name", timeout=20)
    assert {"workloads.scheduling.k8s.io", "podgroups.scheduling.k8s.io"} <= set(out.split())


def test_create_generators(kubectl: Kubectl, server: Server) -> None:
    demo = "demo-" + uuid.uuid4().hex[:8]
    assert ok(kubectl, "create", "namespace", demo) == f"namespace/{demo} created\n"
    try:
        assert (
            ok(kubectl, "-n", demo, "create", "configmap", "cfg", "--from-literal=a=1")
            == "configmap/cfg created\n"
        )
        assert (
            ok(kubectl, "-n", demo, "create", "secret", "generic", "sec", "--from-literal=p=s3cr3t")
            == "secret/sec created\n"
        )
        assert (
            ok(kubectl, "-n", demo, "create", "deployment", "web", "--image=nginx")
            == "deployment.apps/web created\n"
        )
        out = ok(kubectl, "-n", demo, "get", "cm/cfg", "secret/sec", "deploy/web", "-o", "yaml")
        items = yaml.safe_load(out)["items"]
        assert [i["kind"] for i in items] == ["ConfigMap", "Secret", "Deployment"]
        assert items[0]["data"] == {"a": "1"}
        assert items[1]["data"] == {"p": "czNjcjN0"} and items[1]["type"] == "Opaque"
        assert items[2]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"
    finally:
        kubectl.run("delete", "namespace", demo, "--wait=false", check=False, timeout=20)


def test_get_output_formats(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx:1.27")
    ok(kubectl, "-n", ns, "create", "configmap", "cfg", "--from-literal=a=1")
    ok(kubectl, "-n", ns, "label", "configmap", "cfg", "tier=db")

    wide = ok(kubectl, "-n", ns, "get", "deploy", "-o", "wide").splitlines()
    assert wide[0].split() == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1].split()[0] == "web" and wide[1].split()[-3:] == ["nginx", "nginx:1.27", "app=web"]

    narrow = ok(kubectl, "-n", ns, "get", "deploy").splitlines()
    assert narrow[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]

    doc = yaml.safe_load(ok(kubectl, "-n", ns, "get", "configmap", "cfg", "-o", "yaml"))
    assert doc["kind"] == "ConfigMap" and doc["metadata"]["namespace"] == ns and doc["data"] == {"a": "1"}

    all_ns = ok(kubectl, "get", "configmaps", "-A").splitlines()
    assert all_ns[0].split() == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert any(line.split()[:3] == [ns, "cfg", "1"] for line in all_ns[1:])

    labels = ok(kubectl, "-n", ns, "get", "configmap", "--show-labels").splitlines()
    assert labels[0].split() == ["NAME", "DATA", "AGE", "LABELS"]
    assert labels[1].split()[0] == "cfg" and labels[1].split()[-1] == "tier=db"

    assert ok(kubectl, "-n", ns, "get", "configmap", "-l", "tier=db", "-o", "name") == "configmap/cfg\n"
    # the Deployment above has pods now; a selector that matches none lists nothing
    proc = kubectl.run("-n", ns, "get", "pods", "-l", "app=nothing", check=False, timeout=20)
    assert (
        proc.returncode == 0
        and proc.stdout == ""
        and proc.stderr == f"No resources found in {ns} namespace.\n"
    )


def test_describe_configmap_and_namespace(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "configmap", "cfg", "--from-literal=key=value")
    out = ok(kubectl, "-n", ns, "describe", "configmap", "cfg")
    lines = out.splitlines()
    assert lines[0].split() == ["Name:", "cfg"] and lines[1].split() == ["Namespace:", ns]
    assert "key:" in lines and "value" in lines and "Events:  <none>" in lines
    out = ok(kubectl, "describe", "namespace", ns)
    assert out.splitlines()[0].split() == ["Name:", ns]
    assert "Status:       Active" in out and f"kubernetes.io/metadata.name={ns}" in out


def test_explain_statefulset_scheduling(kubectl: Kubectl) -> None:
    out = ok(kubectl, "explain", "statefulset.spec")
    assert "FIELD: spec <StatefulSetSpec>" in out
    assert "scheduling\t<StatefulSetSchedulingConfiguration>" in out
    assert "podManagementPolicy\t<string>" in out
    out = ok(kubectl, "explain", "statefulset.spec.scheduling")
    assert "FIELD: scheduling <StatefulSetSchedulingConfiguration>" in out
    for field in (
        "schedulingPolicy\t<WorkloadPodGroupSchedulingPolicy>",
        "schedulingConstraints\t",
        "disruptionMode\t",
        "resourceClaims\t",
    ):
        assert field in out, field
    out = ok(kubectl, "explain", "statefulset.spec.scheduling", "--recursive")
    assert "gang\t<WorkloadPodGroupGangSchedulingPolicy>" in out
    assert "minCount\t<integer>" in out
    out = ok(kubectl, "explain", "statefulset.spec.scheduling.schedulingPolicy.gang.minCount")
    assert "FIELD: minCount <integer>" in out


def test_get_raw_metrics(kubectl: Kubectl) -> None:
    out = ok(kubectl, "get", "--raw", "/metrics")
    assert "# TYPE apiserver_request_total counter" in out
    assert 'kubernetes_feature_enabled{name="WorkloadWithStatefulSet",stage="ALPHA"} 1.0' in out


def test_logs_of_a_simulated_container(kubectl: Kubectl, ns: str) -> None:
    """Without a ``gangplane.dev/log`` annotation a container prints its start line (docs/cluster.md)."""
    ok(kubectl, "-n", ns, "run", "p", "--image=nginx")
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/p", "--timeout=30s", timeout=40)
    assert ok(kubectl, "-n", ns, "logs", "p") == "gangplane: simulated container p (nginx) started\n"
    assert ok(kubectl, "-n", ns, "logs", "p", "--tail=5", "-c", "p").endswith("started\n")
    proc = fails(kubectl, "-n", ns, "logs", "p", "-c", "nope", timeout=20)
    assert "container nope is not valid for pod p" in proc.stderr  # kubectl checks it first
