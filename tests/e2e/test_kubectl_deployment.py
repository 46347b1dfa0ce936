"""A Deployment's lifecycle with real kubectl against ``gangplane serve``.

``kubectl create deployment`` -> ``rollout status`` -> ``set image`` -> ``rollout history`` ->
``rollout undo`` -> ``pause``/``resume`` -> ``restart`` -> ``scale``, each converging through the
Deployment and ReplicaSet controllers, the scheduler and the simulated nodes.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("deploy")


def deployment(kubectl: Kubectl, ns: str) -> dict:
    return json.loads(ok(kubectl, "-n", ns, "get", "deployment", "web", "-o", "json"))


def images(kubectl: Kubectl, ns: str) -> set[str]:
    out = json.loads(ok(kubectl, "-n", ns, "get", "pods", "-l", "app=web", "-o", "json"))
    return {
        p["spec"]["containers"][0]["image"]
        for p in out["items"]
        if not p["metadata"].get("deletionTimestamp")
    }


def rollout_status(kubectl: Kubectl, ns: str) -> str:
    return ok(kubectl, "-n", ns, "rollout", "status", "deployment/web", "--timeout=60s", timeout=90)


def test_create_rollout_set_image_undo(kubectl: Kubectl, ns: str) -> None:
    out = ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx:1.26", "--replicas=3")
    assert "deployment.apps/web created" in out
    assert 'deployment "web" successfully rolled out' in rollout_status(kubectl, ns)
    d = deployment(kubectl, ns)
    assert (
        d["status"]["readyReplicas"] == 3
        and d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    )
    table = ok(kubectl, "-n", ns, "get", "deployment", "web")
    assert table.split("\n")[1].split()[:4] == ["web", "3/3", "3", "3"]

    ok(kubectl, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27")
    assert 'deployment "web" successfully rolled out' in rollout_status(kubectl, ns)
    assert images(kubectl, ns) == {"nginx:1.27"}
    history = ok(kubectl, "-n", ns, "rollout", "history", "deployment/web")
    assert [ln.split()[0] for ln in history.strip().splitlines()[2:]] == ["1", "2"]
    detail = ok(kubectl, "-n", ns, "rollout", "history", "deployment/web", "--revision=1")
    assert "nginx:1.26" in detail

    assert "deployment.apps/web rolled back" in ok(kubectl, "-n", ns, "rollout", "undo", "deployment/web")
    rollout_status(kubectl, ns)
    assert images(kubectl, ns) == {"nginx:1.26"}
    history = ok(kubectl, "-n", ns, "rollout", "history", "deployment/web")
    assert [ln.split()[0] for ln in history.strip().splitlines()[2:]] == ["2", "3"]
    rs = json.loads(ok(kubectl, "-n", ns, "get", "rs", "-o", "json"))["items"]
    assert sorted(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rs) == ["2", "3"]


def test_pause_resume_restart_scale(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "create", "deployment", "web", "--image=nginx:1.26", "--replicas=2")
    rollout_status(kubectl, ns)
    assert "deployment.apps/web paused" in ok(kubectl, "-n", ns, "rollout", "pause", "deployment/web")
    ok(kubectl, "-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.27")
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.observedGeneration}=3",
        "deployment/web",
        "--timeout=30s",
    )
    d = deployment(kubectl, ns)
    prog = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
    assert (prog["status"], prog["reason"]) == ("Unknown", "DeploymentPaused")
    assert images(kubectl, ns) == {"nginx:1.26"}
    assert "deployment.apps/web resumed" in ok(kubectl, "-n", ns, "rollout", "resume", "deployment/web")
    rollout_status(kubectl, ns)
    assert images(kubectl, ns) == {"nginx:1.27"}

    assert "deployment.apps/web restarted" in ok(kubectl, "-n", ns, "rollout", "restart", "deployment/web")
    rollout_status(kubectl, ns)
    d = deployment(kubectl, ns)
    assert "kubectl.kubernetes.io/restartedAt" in d["spec"]["template"]["metadata"]["annotations"]
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"

    assert "deployment.apps/web scaled" in ok(kubectl, "-n", ns, "scale", "deployment/web", "--replicas=4")
    rollout_status(kubectl, ns)
    assert deployment(kubectl, ns)["status"]["availableReplicas"] == 4
    described = ok(kubectl, "-n", ns, "describe", "deployment", "web")
    assert "ScalingReplicaSet" in described and "NewReplicaSetAvailable" in described
