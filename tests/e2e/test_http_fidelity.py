"""The fidelity rules helm and byte-comparing clients rely on, over real HTTP against ``gangplane serve``
(the in-process twins are in tests/unit/apiserver/server/test_api_fidelity.py)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace, namespace
from tests.unit.apiserver.server.test_api_fidelity import protobuf_delete_options

pytestmark = pytest.mark.e2e


@pytest.fixture
def ns(server: Server) -> Iterator[str]:
    name = namespace(server, "fid")
    yield name
    delete_namespace(server, name)


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=20) as c:
        yield c


def test_helm_style_secret_lifecycle(http: httpx.Client, ns: str) -> None:
    """helm's storage driver: create, PUT without resourceVersion, DELETE with protobuf options."""
    base = f"/api/v1/namespaces/{ns}/secrets"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "sh.helm.release.v1.r.v1", "labels": {"owner": "helm"}},
        "type": "helm.sh/release.v1",
        "data": {"release": "djE="},
    }
    assert http.post(base, json=secret).status_code == 201
    secret["metadata"]["labels"]["status"] = "deployed"
    r = http.put(base + "/sh.helm.release.v1.r.v1", json=secret)
    assert r.status_code == 200, r.text
    assert r.json()["metadata"]["labels"] == {"owner": "helm", "status": "deployed"}
    r = http.request(
        "DELETE",
        base + "/sh.helm.release.v1.r.v1",
        content=protobuf_delete_options(),
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert r.status_code == 200 and r.json()["status"] == "Success"
    assert http.get(base + "?labelSelector=owner%3Dhelm").json()["items"] == []


def test_text_plain_is_415_and_status_bytes_match_kube(http: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}})
    r = http.post(base, content=body, headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert r.content.endswith(b',"reason":"UnsupportedMediaType","code":415}\n')
    missing = http.get(base + "/t")
    assert missing.status_code == 404
    assert missing.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"t\\" not found",'
        b'"reason":"NotFound","details":{"name":"t","kind":"configmaps"},"code":404}\n'
    )


def test_delete_of_a_service_returns_the_service(http: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/services"
    made = http.post(
        base,
        json={
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 80}]},
        },
    )
    assert made.status_code == 201
    r = http.delete(base + "/s")
    assert r.status_code == 200
    assert (r.json()["kind"], r.json()["metadata"]["uid"]) == ("Service", made.json()["metadata"]["uid"])
