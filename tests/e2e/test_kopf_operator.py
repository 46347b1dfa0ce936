"""A kopf operator (tests/e2e/kopf_operator.py) on a CRD-defined kind reconciles create, update and
delete against ``gangplane serve``: the CRD is applied with kubectl, the operator runs as ``kopf run``
in its own process (the official Python client for its own calls), and kubectl observes the results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.crd_support import crontab_crd
from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("kopf")
OPERATOR = Path(__file__).with_name("kopf_operator.py")


@pytest.fixture
def kubectl(kubectl137: Path, server: Server) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    g = f"kopf{uuid.uuid4().hex[:8]}.example.com"
    crd = crontab_crd()
    crd["spec"]["group"] = g
    crd["metadata"]["name"] = f"crontabs.{g}"
    # kopf keeps its handler results in status: the schema must preserve them (as on any cluster)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"][
        "x-kubernetes-preserve-unknown-fields"
    ] = True
    ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump(crd))
    ok(kubectl, "wait", "--for=condition=Established", f"crd/crontabs.{g}", "--timeout=10s")
    yield g
    kubectl.run("delete", "crd", f"crontabs.{g}", "--wait=false", check=False)


@pytest.fixture
def operator(server: Server, group: str, ns: str, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    env = {
        **os.environ,
        "KUBECONFIG": str(server.kubeconfig),
        "CRONTAB_GROUP": group,
        "HOME": str(tmp_path),
    }
    log = (tmp_path / "kopf.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "-n", ns, str(OPERATOR)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    yield proc
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
    log.close()
    text = (tmp_path / "kopf.log").read_text()
    assert "Traceback" not in text, text
    assert "inconsistencies" not in text, text  # every patch (status ones through /status) landed


def cr(group: str, name: str, image: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": name},
            "spec": {"cronSpec": "1 * * * *", "image": image},
        }
    )


def test_kopf_operator_reconciles_create_update_delete(
    kubectl: Kubectl, ns: str, group: str, operator: subprocess.Popen[str]
) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr(group, "job", "cron:1"))
    # create: the operator makes the owned ConfigMap and records its result in status
    ok(kubectl, "-n", ns, "wait", "--for=create", "configmap/job-config", "--timeout=60s", timeout=70)
    cm = json.loads(ok(kubectl, "-n", ns, "get", "configmap", "job-config", "-o", "json"))
    assert cm["data"] == {"image": "cron:1"}
    owner = cm["metadata"]["ownerReferences"][0]
    assert (owner["apiVersion"], owner["kind"], owner["name"]) == (f"{group}/v1", "CronTab", "job")
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.create_fn.configmap}=job-config",
        f"crontabs.{group}/job",
        "--timeout=60s",
        timeout=70,
    )
    got = json.loads(ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "job", "-o", "json"))
    assert "kopf.zalando.org/KopfFinalizerMarker" in got["metadata"]["finalizers"]
    # update: a change of spec.image reaches the ConfigMap
    ok(
        kubectl,
        "-n",
        ns,
        "patch",
        f"crontabs.{group}",
        "job",
        "--type=merge",
        "-p",
        '{"spec":{"image":"cron:2"}}',
    )
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.data.image}=cron:2",
        "configmap/job-config",
        "--timeout=60s",
        timeout=70,
    )
    # delete: the operator's delete handler runs before its finalizer goes; the GC takes the ConfigMap
    out = ok(kubectl, "-n", ns, "delete", f"crontabs.{group}", "job", "--timeout=60s", timeout=70)
    assert (
        out == f'crontab.{group} "job" deleted from {ns} namespace\n'
        or out == f'crontab.{group} "job" deleted\n'
    )
    audit = json.loads(ok(kubectl, "-n", ns, "get", "configmap", "crontab-audit", "-o", "json"))
    assert audit["data"] == {"job": "deleted"}
    ok(kubectl, "-n", ns, "wait", "--for=delete", "configmap/job-config", "--timeout=30s", timeout=40)
