"""``helm install --wait`` of the stock ``helm create`` chart (a Deployment, a Service, a ServiceAccount).

helm 4's kstatus waiter watches the Deployment until it is rolled out (observedGeneration, updated
and available replicas, the Progressing condition) and the Service until it has a ClusterIP; both
come from the Deployment/ReplicaSet controllers and the Service IP allocator.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace, namespace

pytestmark = pytest.mark.e2e

TIMEOUT = 120.0


def _helm(binary: Path, server: Server, home: Path, *args: str, cwd: Path | None = None) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(server.kubeconfig)}
    proc = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, env=env, timeout=TIMEOUT, cwd=cwd
    )
    assert proc.returncode == 0, (
        f"helm {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    assert "error" not in proc.stderr.lower(), proc.stderr
    return proc.stdout


def test_helm_install_wait_of_the_stock_chart(helm4: Path, server: Server, tmp_path: Path) -> None:
    _helm(helm4, server, tmp_path, "create", "demo", cwd=tmp_path)
    ns = namespace(server, "helmc")
    try:
        out = _helm(
            helm4,
            server,
            tmp_path,
            "install",
            "demo",
            str(tmp_path / "demo"),
            "-n",
            ns,
            "--wait",
            "--timeout",
            "90s",
        )
        assert "STATUS: deployed" in out
        d = httpx.get(f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments/demo", timeout=30).json()
        assert d["status"]["availableReplicas"] == d["spec"]["replicas"] == 1
        assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
        svc = httpx.get(f"{server.url}/api/v1/namespaces/{ns}/services/demo", timeout=30).json()
        assert svc["spec"]["clusterIP"].startswith("10.")
        status = _helm(helm4, server, tmp_path, "status", "demo", "-n", ns)
        assert "STATUS: deployed" in status
        out = _helm(
            helm4,
            server,
            tmp_path,
            "upgrade",
            "demo",
            str(tmp_path / "demo"),
            "-n",
            ns,
            "--wait",
            "--timeout",
            "90s",
            "--set",
            "replicaCount=2",
            "--set",
            "image.tag=1.27",
        )
        assert "STATUS: deployed" in out
        d = httpx.get(f"{server.url}/apis/apps/v1/namespaces/{ns}/deployments/demo", timeout=30).json()
        assert (
            d["status"]["availableReplicas"] == 2
            and d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
        )
        assert 'release "demo" uninstalled' in _helm(
            helm4, server, tmp_path, "uninstall", "demo", "-n", ns, "--wait"
        )
    finally:
        delete_namespace(server, ns)
