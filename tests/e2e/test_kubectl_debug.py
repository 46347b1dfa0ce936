"""Real kubectl (1.35 and 1.37) ``debug``: an ephemeral container added through
``pods/ephemeralcontainers`` and simulated as running by the node agent."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import TIMEOUT, fails, http_get, http_patch, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("dbg")


def _pod(kubectl: Kubectl, ns: str, name: str) -> dict:
    return json.loads(ok(kubectl, "-n", ns, "get", "pod", name, "-o", "json"))


def test_debug_adds_a_running_ephemeral_container(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "run", "web", "--image=nginx:1.27")
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/web", "--timeout=30s", timeout=40)
    proc = kubectl.run(
        "-n", ns, "debug", "web", "--image=busybox:1.36", "--container=dbg", check=False, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    assert "panic" not in proc.stderr
    pod = _pod(kubectl, ns, "web")
    (ec,) = pod["spec"]["ephemeralContainers"]
    assert (ec["name"], ec["image"]) == ("dbg", "busybox:1.36")
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.ephemeralContainerStatuses[0].state.running.startedAt}",
        "pod/web",
        "--timeout=30s",
        timeout=40,
    )
    pod = _pod(kubectl, ns, "web")
    (cs,) = pod["status"]["ephemeralContainerStatuses"]
    assert cs["name"] == "dbg" and cs["ready"] is False and cs["started"] is True
    # the pod stays Ready: a debug container does not count towards readiness
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert ready["Ready"] == "True"
    events = ok(kubectl, "-n", ns, "get", "events", "--field-selector=involvedObject.name=web", "-o", "json")
    paths = {(e["reason"], e["involvedObject"].get("fieldPath")) for e in json.loads(events)["items"]}
    assert ("Started", "spec.ephemeralContainers{dbg}") in paths


def test_debug_may_not_reuse_a_name(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "run", "app", "--image=nginx:1.27")
    proc = fails(kubectl, "-n", ns, "debug", "app", "--image=busybox:1.36", "--container=app")
    assert "panic" not in proc.stderr
    assert 'spec.ephemeralContainers[0].name: Duplicate value: "app"' in proc.stderr


def test_debug_of_a_missing_pod(kubectl: Kubectl, ns: str) -> None:
    proc = fails(kubectl, "-n", ns, "debug", "nope", "--image=busybox:1.36")
    assert 'pods "nope" not found' in proc.stderr
    assert "panic" not in proc.stderr


def test_unknown_subresource_404_carries_empty_details(server: Server, ns: str) -> None:
    """kube's generic 404 prints ``"details":{}``: kubectl reads ``Details.Name`` of it."""
    r = http_get(server, f"/api/v1/namespaces/{ns}/pods/x/nosuchthing")
    assert r.status_code == 404
    assert r.json()["details"] == {}
    assert r.json()["message"] == "the server could not find the requested resource"


def test_ephemeral_containers_only_grow(server: Server, ns: str) -> None:
    """The subresource changes nothing but ``spec.ephemeralContainers``, which may only be added to."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
    }
    r = httpx.post(f"{server.url}/api/v1/namespaces/{ns}/pods", json=pod, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    path = f"/api/v1/namespaces/{ns}/pods/p/ephemeralcontainers"
    add = {
        "metadata": {"labels": {"a": "2"}},
        "spec": {
            "ephemeralContainers": [{"name": "d1", "image": "busybox", "ports": [{"containerPort": 80}]}]
        },
    }
    r = http_patch(server, path, add, "application/strategic-merge-patch+json")
    assert r.status_code == 422, r.text
    assert r.json()["details"]["causes"][0] == {
        "reason": "FieldValueForbidden",
        "message": "Forbidden: cannot be set for an Ephemeral Container",
        "field": "spec.ephemeralContainers[0].ports",
    }
    del add["spec"]["ephemeralContainers"][0]["ports"]
    r = http_patch(server, path, add, "application/strategic-merge-patch+json")
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"a": "1"}  # only ephemeral containers change here
    assert r.json()["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"] == "File"
    r = http_patch(server, path, {"spec": {"ephemeralContainers": None}})
    assert r.status_code == 422, r.text
    assert 'existing ephemeral containers \\"d1\\" may not be removed' in r.text
    r = http_patch(server, path, {"spec": {"ephemeralContainers": [{"name": "d1", "image": "alpine"}]}})
    assert r.status_code == 422, r.text
    assert 'existing ephemeral containers \\"d1\\" may not be changed' in r.text
    assert http_get(server, path).json()["spec"]["ephemeralContainers"][0]["image"] == "busybox"
