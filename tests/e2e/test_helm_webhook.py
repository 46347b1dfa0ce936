"""helm 4 installs an operator-style chart (``charts/webhook``) whose ValidatingWebhookConfiguration
names a Service, as charts write it: gangplane sends the calls to the address the Service's
``webhook.gangplane.io/address`` annotation gives (set through the chart's ordinary
``service.annotations`` value), verifying the certificate as ``<service>.<namespace>.svc``. The
webhook server runs in the test process; ConfigMaps in the release namespace go through it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gangplane.testing.webhook import WebhookServer, allowed, denied
from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace, namespace
from tests.e2e.test_helm import Helm

pytestmark = pytest.mark.e2e

CHART = Path(__file__).parent / "charts" / "webhook"


@pytest.fixture
def helm(helm4: Path, server: Server, tmp_path: Path) -> Helm:
    return Helm(helm4, server, tmp_path)


def check(review: dict) -> dict:
    data = review["request"]["object"].get("data") or {}
    return denied("keys must be lowercase") if any(k != k.lower() for k in data) else allowed()


def test_chart_with_service_based_webhook_installs_and_its_webhook_is_called(
    helm: Helm, server: Server
) -> None:
    ns = namespace(server, "hw")
    hook = WebhookServer(check, service=(ns, "ops-webhook"), path="/validate").start()
    try:
        out = helm.run(
            "install",
            "ops",
            str(CHART),
            "-n",
            ns,
            "--set",
            f"caBundle={hook.ca_bundle}",
            "--set-string",
            f"service.annotations.webhook\\.gangplane\\.io/address={hook.address}",
            "--wait",
            "--timeout",
            "60s",
        )
        assert "STATUS: deployed" in out
        cfg = httpx.get(
            f"{server.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ops-{ns}",
            timeout=30,
        ).json()
        assert cfg["webhooks"][0]["clientConfig"]["service"] == {
            "namespace": ns,
            "name": "ops-webhook",
            "path": "/validate",
            "port": 443,
        }

        def cm(name: str, key: str) -> dict:
            return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {key: "v"}}

        r = httpx.post(f"{server.url}/api/v1/namespaces/{ns}/configmaps", json=cm("bad", "Upper"), timeout=30)
        assert r.status_code == 403, r.text
        assert r.json()["message"] == (
            'admission webhook "configmaps.ops.example.com" denied the request: keys must be lowercase'
        )
        r = httpx.post(
            f"{server.url}/api/v1/namespaces/{ns}/configmaps", json=cm("good", "lower"), timeout=30
        )
        assert r.status_code == 201, r.text
        assert [c["request"]["name"] for c in hook.calls if c["request"].get("name")][-2:] == ["bad", "good"]
        helm.run("uninstall", "ops", "-n", ns, "--wait", "--timeout", "60s")
        gone = httpx.get(
            f"{server.url}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ops-{ns}",
            timeout=30,
        )
        assert gone.status_code == 404
    finally:
        hook.stop()
        delete_namespace(server, ns)
