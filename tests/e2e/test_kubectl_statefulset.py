"""A StatefulSet's whole lifecycle with real kubectl against ``gangplane serve``.

The server runs the StatefulSet controller, the garbage collector, the scheduler and simulated
nodes, so pods really get scheduled, start and become Ready; ``rollout status`` returns,
``get pods -o wide`` shows them on simulated nodes, ``describe sts`` shows the controller's
events, scaling 3 -> 5 -> 0 converges, and each ``--cascade`` mode does what it does on a cluster.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("sts")


def manifest(name: str, replicas: int) -> str:
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "serviceName": name,
                "replicas": replicas,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "terminationGracePeriodSeconds": 1,
                        "containers": [
                            {"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "10m"}}}
                        ],
                    },
                },
            },
        }
    )


def pods(kubectl: Kubectl, ns: str, selector: str) -> list[dict]:
    out = ok(kubectl, "-n", ns, "get", "pods", "-l", selector, "-o", "json")
    return json.loads(out)["items"]


def wait_pod_count(kubectl: Kubectl, ns: str, selector: str, n: int) -> None:
    if n == 0:
        ok(kubectl, "-n", ns, "wait", "--for=delete", "pod", "-l", selector, "--timeout=60s", timeout=90)
        return
    ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod", "-l", selector, "--timeout=60s", timeout=90)
    assert len(pods(kubectl, ns, selector)) == n


def test_apply_rollout_scale_describe(kubectl: Kubectl, ns: str) -> None:
    assert "statefulset.apps/web created" in ok(
        kubectl, "-n", ns, "apply", "-f", "-", input=manifest("web", 3)
    )
    out = ok(kubectl, "-n", ns, "rollout", "status", "sts/web", "--timeout=60s", timeout=90)
    assert "partitioned roll out complete" in out or "statefulset rolling update complete" in out
    wide = ok(kubectl, "-n", ns, "get", "pods", "-o", "wide")
    rows = [line.split() for line in wide.splitlines()[1:]]
    assert sorted(r[0] for r in rows) == ["web-0", "web-1", "web-2"]
    for r in rows:
        assert r[1] == "1/1" and r[2] == "Running" and r[6] != "<none>"  # READY STATUS ... NODE
    described = ok(kubectl, "-n", ns, "describe", "sts", "web")
    assert "SuccessfulCreate" in described and "create Pod web-0 in StatefulSet web successful" in described
    ok(kubectl, "-n", ns, "scale", "sts/web", "--replicas=5")
    wait_pod_count(kubectl, ns, "app=web", 5)
    ok(kubectl, "-n", ns, "scale", "sts/web", "--replicas=0")
    wait_pod_count(kubectl, ns, "app=web", 0)
    status = json.loads(ok(kubectl, "-n", ns, "get", "sts", "web", "-o", "json"))["status"]
    assert status.get("replicas", 0) == 0


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
def test_delete_with_each_cascade(kubectl: Kubectl, ns: str, cascade: str) -> None:
    name = f"c-{cascade}"
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=manifest(name, 2))
    wait_pod_count(kubectl, ns, f"app={name}", 2)
    ok(kubectl, "-n", ns, "delete", "sts", name, f"--cascade={cascade}", "--timeout=60s", timeout=90)
    if cascade == "orphan":
        left = pods(kubectl, ns, f"app={name}")
        assert len(left) == 2
        assert all(not p["metadata"].get("ownerReferences") for p in left)
    else:
        wait_pod_count(kubectl, ns, f"app={name}", 0)
    assert "NotFound" in kubectl.run("-n", ns, "get", "sts", name, check=False).stderr
