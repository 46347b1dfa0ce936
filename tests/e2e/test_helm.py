"""helm 4 (the binary in the kubectl-v35 layer) against ``gangplane serve``: a release's whole life.

The chart (``charts/gang``) ships a ServiceAccount, a Role and RoleBinding, a ConfigMap, a headless
Service and a gang-scheduled StatefulSet (KEP-6277 ``spec.scheduling``). helm records releases as
Secrets it PUTs without a resourceVersion (an unconditional update), waits with watches on every
resource (kstatus), and uninstalls with protobuf DeleteOptions; each step is checked against
what a user sees: helm's output and the API objects.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace, namespace

pytestmark = pytest.mark.e2e

CHART = Path(__file__).parent / "charts" / "gang"
TIMEOUT = 90.0


class Helm:
    def __init__(self, binary: Path, server: Server, home: Path) -> None:
        self.binary, self.server, self.home = binary, server, home

    def run(self, *args: str) -> str:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "KUBECONFIG": str(self.server.kubeconfig),
        }
        proc = subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, env=env, timeout=TIMEOUT
        )
        assert proc.returncode == 0, (
            f"helm {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
        assert "error" not in proc.stderr.lower(), proc.stderr
        return proc.stdout


@pytest.fixture
def helm(helm4: Path, server: Server, tmp_path: Path) -> Helm:
    return Helm(helm4, server, tmp_path)


def _get(server: Server, path: str) -> Any:
    r = httpx.get(server.url + path, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def _field(text: str, name: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(name + ":"))


def _assert_rolled_out(server: Server, ns: str, replicas: int, image: str) -> None:
    """What ``--wait`` promises: every replica of the current revision Ready when helm returns."""
    sts = _get(server, f"/apis/apps/v1/namespaces/{ns}/statefulsets/r")
    st = sts["status"]
    assert sts["spec"]["replicas"] == replicas
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == image
    assert st["observedGeneration"] == sts["metadata"]["generation"]
    assert (st["readyReplicas"], st["updatedReplicas"]) == (replicas, replicas)
    assert st["currentRevision"] == st["updateRevision"]
    groups = _get(server, f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups")["items"]
    assert [g["spec"]["schedulingPolicy"] for g in groups] == [{"gang": {"minCount": replicas}}]


def _release_secrets(server: Server, ns: str) -> list[str]:
    items = _get(server, f"/api/v1/namespaces/{ns}/secrets?labelSelector=owner%3Dhelm")["items"]
    return sorted(s["metadata"]["name"] for s in items)


def test_helm_install_upgrade_rollback_uninstall(helm: Helm, server: Server) -> None:
    ns = namespace(server, "helm")
    try:
        out = helm.run("install", "r", str(CHART), "-n", ns, "--wait", "--timeout", "60s")
        assert (_field(out, "STATUS"), _field(out, "REVISION")) == ("deployed", "1")
        _assert_rolled_out(server, ns, 3, "nginx:1.27")
        rb = _get(server, f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings/r-reader")
        assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "r", "namespace": ns}]
        assert _release_secrets(server, ns) == ["sh.helm.release.v1.r.v1"]

        status = helm.run("status", "r", "-n", ns)
        assert (_field(status, "STATUS"), _field(status, "REVISION")) == ("deployed", "1")

        out = helm.run(
            "upgrade",
            "r",
            str(CHART),
            "-n",
            ns,
            "--wait",
            "--timeout",
            "60s",
            "--set",
            "replicas=4",
            "--set",
            "image=nginx:1.28",
        )
        assert (_field(out, "STATUS"), _field(out, "REVISION")) == ("deployed", "2")
        _assert_rolled_out(server, ns, 4, "nginx:1.28")

        out = helm.run("rollback", "r", "1", "-n", ns, "--wait", "--timeout", "60s")
        assert "Rollback was a success!" in out
        _assert_rolled_out(server, ns, 3, "nginx:1.27")

        rows = [line.split("\t") for line in helm.run("history", "r", "-n", ns).splitlines()[1:]]
        assert [(r[0].strip(), r[2].strip(), r[-1].strip()) for r in rows] == [
            ("1", "superseded", "Install complete"),
            ("2", "superseded", "Upgrade complete"),
            ("3", "deployed", "Rollback to 1"),
        ]
        assert _release_secrets(server, ns) == [f"sh.helm.release.v1.r.v{i}" for i in (1, 2, 3)]
        status = helm.run("status", "r", "-n", ns)
        assert (_field(status, "STATUS"), _field(status, "REVISION")) == ("deployed", "3")

        out = helm.run("uninstall", "r", "-n", ns, "--wait", "--timeout", "60s")
        assert 'release "r" uninstalled' in out
        assert _release_secrets(server, ns) == []
        for path in (
            f"/apis/apps/v1/namespaces/{ns}/statefulsets/r",
            f"/api/v1/namespaces/{ns}/services/r",
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles/r-reader",
        ):
            assert httpx.get(server.url + path, timeout=30).status_code == 404, path
        assert (
            "Error: release: not found"
            in subprocess.run(
                [str(helm.binary), "status", "r", "-n", ns],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                env={
                    "PATH": os.environ.get("PATH", ""),
                    "HOME": str(helm.home),
                    "KUBECONFIG": str(server.kubeconfig),
                },
            ).stderr
        )
    finally:
        delete_namespace(server, ns)
