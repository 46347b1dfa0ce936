"""Real kubectl (1.35 and 1.37): create -f, client- and server-side apply, diff, field validation,
and the KEP-6277 Story 1 StatefulSet (``spec.scheduling``) through client-side apply.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import fails, http_get, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("ka")


def cm(name: str, **data: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})


#: KEP-6277 "Story 1: All-or-Nothing Placement for a Quorum-Based Database", completed with the
#: selector and template labels apps/v1 requires (the KEP elides them), and 0 replicas so that the
#: test does not hold capacity of the session server's simulated nodes.
STORY1 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cockroachdb
spec:
  serviceName: cockroachdb
  replicas: 0
  podManagementPolicy: Parallel
  selector:
    matchLabels:
      app: cockroachdb
  scheduling:
    schedulingPolicy:
      gang: {}          # minCount derived from spec.replicas
  template:
    metadata:
      labels:
        app: cockroachdb
    spec:
      containers:
      - name: cockroachdb
        image: cockroachdb/cockroach:v23.2
        resources:
          requests:
            cpu: "4"
            memory: 8Gi
"""


def test_create_f_and_apply_twice(kubectl: Kubectl, ns: str, server: Server) -> None:
    assert ok(kubectl, "-n", ns, "create", "-f", "-", input=cm("made", a="1")) == "configmap/made created\n"
    proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=cm("made", a="1"))
    assert (
        proc.stderr
        == 'Error from server (AlreadyExists): error when creating "STDIN": configmaps "made" already exists\n'
    )

    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=cm("applied", a="1")) == "configmap/applied created\n"
    )
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=cm("applied", a="1"))
        == "configmap/applied unchanged\n"
    )
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=cm("applied", a="2"))
        == "configmap/applied configured\n"
    )
    live = http_get(server, f"/api/v1/namespaces/{ns}/configmaps/applied").json()
    assert live["data"] == {"a": "2"}
    last = json.loads(live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["data"] == {"a": "2"}
    managers = {(m["manager"], m["operation"]) for m in live["metadata"]["managedFields"]}
    assert ("kubectl-client-side-apply", "Update") in managers


def test_field_validation(kubectl: Kubectl, ns: str, server: Server) -> None:
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  labells: {a: b}\ndata: {a: '1'}\nbogus: 1\n"
    proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=body)
    assert proc.stderr == (
        'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a '
        'ConfigMap: strict decoding error: unknown field "bogus", unknown field "metadata.labells"\n'
    )
    proc = kubectl.run("-n", ns, "create", "-f", "-", "--validate=warn", input=body, check=False, timeout=30)
    assert proc.returncode == 0 and proc.stdout == "configmap/typo created\n"
    assert proc.stderr == 'Warning: unknown field "bogus"\nWarning: unknown field "metadata.labells"\n'
    live = http_get(server, f"/api/v1/namespaces/{ns}/configmaps/typo").json()
    assert "bogus" not in live and "labells" not in live["metadata"] and live["data"] == {"a": "1"}
    ok(kubectl, "-n", ns, "apply", "-f", "-", "--validate=false", input=body.replace("typo", "quiet"))
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=body.replace("typo", "strict"))
    assert "strict decoding error: unknown field" in proc.stderr
    # kubectl patch sends no fieldValidation: kube's default for built-in types is Warn.
    proc = kubectl.run(
        "-n", ns, "patch", "cm", "typo", "--type", "merge", "-p", '{"bogus": 1}', check=False, timeout=30
    )
    assert proc.returncode == 0 and proc.stderr == 'Warning: unknown field "bogus"\n'
    assert proc.stdout == "configmap/typo patched (no change)\n"


def test_apply_server_side_and_conflict(kubectl: Kubectl, ns: str, server: Server) -> None:
    assert (
        ok(kubectl, "-n", ns, "apply", "--server-side", "-f", "-", input=cm("ssa", a="1", b="1"))
        == "configmap/ssa serverside-applied\n"
    )
    assert (
        ok(kubectl, "-n", ns, "apply", "--server-side", "-f", "-", input=cm("ssa", a="1", b="1"))
        == "configmap/ssa serverside-applied\n"
    )
    proc = fails(
        kubectl,
        "-n",
        ns,
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        "-",
        input=cm("ssa", a="2"),
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl": .data.a\n')
    assert "--force-conflicts" in proc.stderr
    out = ok(
        kubectl,
        "-n",
        ns,
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
        input=cm("ssa", a="2"),
    )
    assert out == "configmap/ssa serverside-applied\n"
    live = http_get(server, f"/api/v1/namespaces/{ns}/configmaps/ssa").json()
    assert live["data"] == {"a": "2", "b": "1"}
    owners = {m["manager"]: m["fieldsV1"] for m in live["metadata"]["managedFields"]}
    assert owners["other"] == {"f:data": {"f:a": {}}}
    assert owners["kubectl"] == {"f:data": {"f:b": {}}}
    proc = fails(
        kubectl, "-n", ns, "apply", "--server-side", "--dry-run=server", "-f", "-", input=cm("ssa", a="3")
    )
    assert 'conflict with "other"' in proc.stderr


def test_diff(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cm("d", a="1"))
    proc = kubectl.run("-n", ns, "diff", "-f", "-", input=cm("d", a="1"), check=False, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc = kubectl.run("-n", ns, "diff", "-f", "-", input=cm("d", a="2"), check=False, timeout=30)
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    changed = [line for line in proc.stdout.splitlines() if line.startswith(("-  ", "+  "))]
    assert '-  a: "1"' in changed and '+  a: "2"' in changed
    proc = kubectl.run("-n", ns, "diff", "-f", "-", input=cm("new", a="1"), check=False, timeout=30)
    assert proc.returncode == 1 and "+  name: new" in proc.stdout


def test_kep_story1_client_side_apply(kubectl: Kubectl, ns: str, server: Server) -> None:
    assert ok(kubectl, "-n", ns, "apply", "-f", "-", input=STORY1) == "statefulset.apps/cockroachdb created\n"
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=STORY1) == "statefulset.apps/cockroachdb unchanged\n"
    )
    # A later apply changing unrelated fields: kubectl builds the strategic merge patch from the
    # served OpenAPI v3 schema, which must describe spec.scheduling (else "unable to find api field").
    changed = STORY1.replace(
        "  podManagementPolicy: Parallel\n", "  podManagementPolicy: Parallel\n  minReadySeconds: 5\n"
    )
    changed = changed.replace("memory: 8Gi", "memory: 4Gi")
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=changed)
        == "statefulset.apps/cockroachdb configured\n"
    )
    live = http_get(server, f"/apis/apps/v1/namespaces/{ns}/statefulsets/cockroachdb").json()
    assert live["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {}}}
    assert live["spec"]["minReadySeconds"] == 5
    assert live["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "4",
        "memory": "4Gi",
    }
    out = ok(
        kubectl, "-n", ns, "get", "sts", "cockroachdb", "-o", "jsonpath={.spec.scheduling.schedulingPolicy}"
    )
    assert json.loads(out) == {"gang": {}}
    proc = kubectl.run("-n", ns, "diff", "-f", "-", input=changed, check=False, timeout=30)
    assert (proc.returncode, proc.stderr) == (0, "")
    # Changing spec.scheduling itself: the field is immutable in Alpha, so the server says no
    # (a 422 that kubectl prints with its causes; the patch itself was built without trouble).
    proc = fails(
        kubectl, "-n", ns, "apply", "-f", "-", input=changed.replace("      gang: {}", "      basic: {}")
    )
    assert proc.stderr.startswith(
        'The StatefulSet "cockroachdb" is invalid: spec.scheduling: Invalid value: '
    )
    assert proc.stderr.endswith("field is immutable\n")
