"""kopf's own admission handlers against ``gangplane serve``: ``kopf run`` serves a validating and a
mutating handler over HTTPS and registers its managed webhook configurations; kubectl then sees a
CronTab with a forbidden image refused with kopf's message and one without replicas defaulted."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from apiserver.server.tlsgen import generate
from tests.crd_support import crontab_crd
from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("kopfadm")
OPERATOR = Path(__file__).with_name("kopf_admission_operator.py")


@pytest.fixture
def kubectl(kubectl137: Path, server: Server) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    g = f"kopfadm{uuid.uuid4().hex[:8]}.example.com"
    crd = crontab_crd()
    crd["spec"]["group"] = g
    crd["metadata"]["name"] = f"crontabs.{g}"
    ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump(crd))
    ok(kubectl, "wait", "--for=condition=Established", f"crd/crontabs.{g}", "--timeout=10s")
    yield g
    kubectl.run("delete", "crd", f"crontabs.{g}", "--wait=false", check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def operator(server: Server, kubectl: Kubectl, group: str, ns: str, tmp_path: Path) -> Iterator[str]:
    files = generate(tmp_path / "pki", "127.0.0.1")
    config = f"kopf-{group}"
    env = {
        **os.environ,
        "KUBECONFIG": str(server.kubeconfig),
        "CRONTAB_GROUP": group,
        "HOME": str(tmp_path),
        "WEBHOOK_PORT": str(free_port()),
        "WEBHOOK_CERT": str(files.cert),
        "WEBHOOK_KEY": str(files.key),
        "WEBHOOK_CA": str(files.ca_cert),
        "WEBHOOK_CONFIG": config,
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
    try:
        yield config
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            kubectl.run("delete", kind, config, "--ignore-not-found", check=False)
        text = (tmp_path / "kopf.log").read_text()
        assert "Traceback" not in text, text


def crontab(group: str, name: str, image: str, replicas: int | None = None) -> str:
    spec: dict = {"cronSpec": "1 * * * *", "image": image}
    if replicas is not None:
        spec["replicas"] = replicas
    return yaml.safe_dump(
        {"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": spec}
    )


def test_kopf_validating_and_mutating_handlers(kubectl: Kubectl, ns: str, group: str, operator: str) -> None:
    for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
        ok(kubectl, "wait", "--for=create", f"{kind}/{operator}", "--timeout=60s", timeout=70)
    vwc = json.loads(ok(kubectl, "get", "validatingwebhookconfiguration", operator, "-o", "json"))
    client_config = vwc["webhooks"][0]["clientConfig"]
    assert client_config["url"].startswith("https://127.0.0.1:") and client_config["caBundle"]
    proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=crontab(group, "bad", "forbidden"))
    assert "denied the request: image 'forbidden' is not allowed" in proc.stderr, proc.stderr
    ok(kubectl, "-n", ns, "create", "-f", "-", input=crontab(group, "good", "cron:1"))
    got = json.loads(ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "good", "-o", "json"))
    assert got["spec"]["replicas"] == 1
    ok(kubectl, "-n", ns, "create", "-f", "-", input=crontab(group, "three", "cron:1", replicas=3))
    got = json.loads(ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "three", "-o", "json"))
    assert got["spec"]["replicas"] == 3
