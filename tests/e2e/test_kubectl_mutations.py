"""Real kubectl (1.35 and 1.37): patch (strategic, merge, json), scale, label, annotate, delete."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import fails, http_get, http_patch, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("km")

STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 0
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


def jsonpath(kubectl: Kubectl, ns: str, obj: str, path: str) -> str:
    return ok(kubectl, "-n", ns, "get", obj, "-o", f"jsonpath={path}")


def test_patch_strategic_merge_json(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx:1")
    ok(kubectl, "-n", ns, "set", "env", "deployment/web", "A=1")
    # strategic (the default): containers merge by name, env merges by name
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:2", "env": [{"name": "B", "value": "2"}]}
                    ]
                }
            }
        }
    }
    assert (
        ok(kubectl, "-n", ns, "patch", "deployment", "web", "-p", json.dumps(patch))
        == "deployment.apps/web patched\n"
    )
    containers = json.loads(jsonpath(kubectl, ns, "deploy/web", "{.spec.template.spec.containers}"))
    assert [(c["name"], c["image"]) for c in containers] == [("nginx", "nginx:2")]
    assert [e["name"] for e in containers[0]["env"]] == ["B", "A"]
    # the same patch again changes nothing
    assert (
        ok(kubectl, "-n", ns, "patch", "deployment", "web", "-p", json.dumps(patch))
        == "deployment.apps/web patched (no change)\n"
    )
    # merge: lists are replaced wholesale
    merge = {"spec": {"template": {"spec": {"containers": [{"name": "other", "image": "busybox"}]}}}}
    assert (
        ok(kubectl, "-n", ns, "patch", "deployment", "web", "--type", "merge", "-p", json.dumps(merge))
        == "deployment.apps/web patched\n"
    )
    assert jsonpath(kubectl, ns, "deploy/web", "{.spec.template.spec.containers[*].name}") == "other"
    # json patch
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 3},
        {"op": "add", "path": "/metadata/labels/x", "value": "y"},
    ]
    assert (
        ok(kubectl, "-n", ns, "patch", "deployment", "web", "--type", "json", "-p", json.dumps(ops))
        == "deployment.apps/web patched\n"
    )
    assert jsonpath(kubectl, ns, "deploy/web", "{.spec.replicas} {.metadata.labels.x}") == "3 y"
    proc = fails(
        kubectl,
        "-n",
        ns,
        "patch",
        "deployment",
        "web",
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/spec/replicas","value":1}]',
    )
    assert proc.stderr.startswith("The request is invalid:"), proc.stderr


def test_scale_statefulset(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=STS)
    assert ok(kubectl, "-n", ns, "scale", "sts", "web", "--replicas=2") == "statefulset.apps/web scaled\n"
    assert jsonpath(kubectl, ns, "sts/web", "{.spec.replicas}") == "2"
    # --current-replicas: GET /scale then PUT /scale with the precondition
    assert (
        ok(kubectl, "-n", ns, "scale", "sts/web", "--current-replicas=2", "--replicas=1")
        == "statefulset.apps/web scaled\n"
    )
    assert jsonpath(kubectl, ns, "sts/web", "{.spec.replicas}") == "1"
    proc = fails(kubectl, "-n", ns, "scale", "sts/web", "--current-replicas=5", "--replicas=0")
    assert proc.stderr == "error: Expected replicas to be 5, was 1\n"
    assert ok(kubectl, "-n", ns, "scale", "sts/web", "--replicas=0") == "statefulset.apps/web scaled\n"
    assert jsonpath(kubectl, ns, "sts/web", "{.spec.replicas}") == "0"


def test_label_and_annotate(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "configmap", "c")
    assert ok(kubectl, "-n", ns, "label", "configmap", "c", "tier=db", "team=a") == "configmap/c labeled\n"
    assert jsonpath(kubectl, ns, "cm/c", "{.metadata.labels}") == '{"team":"a","tier":"db"}'
    proc = fails(kubectl, "-n", ns, "label", "configmap", "c", "tier=web")
    assert proc.stderr == "error: 'tier' already has a value (db), and --overwrite is false\n"
    assert (
        ok(kubectl, "-n", ns, "label", "configmap", "c", "tier=web", "--overwrite") == "configmap/c labeled\n"
    )
    assert ok(kubectl, "-n", ns, "label", "configmap", "c", "team-") == "configmap/c unlabeled\n"
    assert jsonpath(kubectl, ns, "cm/c", "{.metadata.labels}") == '{"tier":"web"}'
    assert (
        ok(kubectl, "-n", ns, "annotate", "configmap", "c", "note=hello world") == "configmap/c annotated\n"
    )
    assert jsonpath(kubectl, ns, "cm/c", "{.metadata.annotations.note}") == "hello world"
    assert ok(kubectl, "-n", ns, "annotate", "configmap", "c", "note-") == "configmap/c annotated\n"
    assert jsonpath(kubectl, ns, "cm/c", "{.metadata.annotations}") == ""
    assert ok(kubectl, "-n", ns, "get", "cm", "-l", "tier in (web,db),!team", "-o", "name") == "configmap/c\n"


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
def test_delete_cascade(kubectl: Kubectl, ns: str, server: Server, cascade: str) -> None:
    ok(kubectl, "-n", ns, "create", "configmap", "c")
    out = ok(kubectl, "-n", ns, "delete", "configmap", "c", f"--cascade={cascade}")
    assert out == f'configmap "c" deleted from {ns} namespace\n'
    assert http_get(server, f"/api/v1/namespaces/{ns}/configmaps/c").status_code == 404


def test_delete_by_label_and_all(kubectl: Kubectl, ns: str, server: Server) -> None:
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        ok(kubectl, "-n", ns, "create", "configmap", name)
        ok(kubectl, "-n", ns, "label", "configmap", name, f"tier={tier}")
    out = ok(kubectl, "-n", ns, "delete", "configmap", "-l", "tier=x")
    assert sorted(out.splitlines()) == [
        f'configmap "a" deleted from {ns} namespace',
        f'configmap "b" deleted from {ns} namespace',
    ]
    ok(kubectl, "-n", ns, "delete", "configmap", "--all")
    assert http_get(server, f"/api/v1/namespaces/{ns}/configmaps").json()["items"] == []


def test_delete_waits_for_finalizers(kubectl: Kubectl, ns: str, server: Server) -> None:
    held = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  finalizers: [example.com/hold]\n"
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=held.format("held"))
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=held.format("kept"))
    # --wait=false returns while the finalizer holds the object
    assert (
        ok(kubectl, "-n", ns, "delete", "configmap", "kept", "--wait=false")
        == f'configmap "kept" deleted from {ns} namespace\n'
    )
    assert http_get(server, f"/api/v1/namespaces/{ns}/configmaps/kept").json()["metadata"][
        "deletionTimestamp"
    ]

    path = f"/api/v1/namespaces/{ns}/configmaps/held"
    start_rv = http_get(server, path).json()["metadata"]["resourceVersion"]
    released_at: list[float] = []

    def release() -> None:
        # Watch until kubectl's DELETE marked the object, then drop the finalizer like a controller.
        params = {
            "watch": "true",
            "fieldSelector": "metadata.name=held",
            "resourceVersion": start_rv,
            "timeoutSeconds": "30",
        }
        watch_path = server.url + f"/api/v1/namespaces/{ns}/configmaps"
        with httpx.stream("GET", watch_path, params=params, timeout=60) as events:
            for line in events.iter_lines():
                if line.strip() and json.loads(line)["object"]["metadata"].get("deletionTimestamp"):
                    released_at.append(time.monotonic())  # before the patch: kubectl may end first
                    http_patch(server, path, {"metadata": {"finalizers": None}})
                    return

    t = threading.Thread(target=release, daemon=True)
    t.start()
    out = ok(kubectl, "-n", ns, "delete", "configmap", "held")  # --wait is the default
    done_at = time.monotonic()
    t.join(5)
    assert released_at and done_at >= released_at[0]
    assert out == f'configmap "held" deleted from {ns} namespace\n'
    assert http_get(server, path).status_code == 404
