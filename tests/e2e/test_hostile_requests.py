"""Careless and hostile requests against ``gangplane serve`` over real HTTP: what the user sees.

* the Python client server-side-applies an emoji (its ``json.dumps`` sends ``"\\ud83d\\udca5"``);
* an unknown field named outside Latin-1 is stored once, with its ``Warning`` header in UTF-8; a NUL
  in the name drops the warning, not the connection;
* a YAML alias bomb, a JSON patch of copy doublings and a 64 MiB body are refused, and the
  server keeps answering everyone else.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.e2e.conftest import Server
from tests.e2e.kubectl_util import delete_namespace, namespace

pytestmark = pytest.mark.e2e

k8s = pytest.importorskip("kubernetes.client")
config = pytest.importorskip("kubernetes.config")
dynamic = pytest.importorskip("kubernetes.dynamic")


@pytest.fixture
def ns(server: Server) -> Iterator[str]:
    name = namespace(server, "hostile")
    yield name
    delete_namespace(server, name)


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


@pytest.fixture
def api_client(server: Server) -> Iterator[Any]:
    c = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield c
    c.close()


def test_the_python_client_server_side_applies_an_emoji(api_client: Any, ns: str) -> None:
    cms = dynamic.DynamicClient(api_client).resources.get(api_version="v1", kind="ConfigMap")
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "boom"},
        "data": {"e": "\U0001f4a5"},
    }
    applied = cms.server_side_apply(body=body, namespace=ns, field_manager="py")
    assert applied.data.e == "\U0001f4a5"
    assert k8s.CoreV1Api(api_client).read_namespaced_config_map("boom", ns).data == {"e": "\U0001f4a5"}


def test_unknown_field_names_outside_latin1_are_warned_in_utf8(http: httpx.Client, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    body = '{"metadata":{"name":"w1"},"d\u00e4t\u4e2d":1}'.encode()
    r = http.post(base, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert [v for k, v in r.headers.raw if k.lower() == b"warning"] == [
        '299 - "unknown field \\"d\u00e4t\u4e2d\\""'.encode()
    ]
    r = http.post(
        base,
        content=b'{"metadata":{"name":"w2"},"a\\u0000b":1}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.text
    assert "warning" not in r.headers
    assert http.get(f"{base}/w1").status_code == 200 and http.get(f"{base}/w2").status_code == 200


def test_bombs_and_oversized_bodies_are_refused_and_the_server_keeps_serving(
    http: httpx.Client, ns: str
) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    assert http.post(base, json={"metadata": {"name": "cm"}, "data": {"k": "v"}}).status_code == 201
    before = http.get(f"{base}/cm").content
    lines = [
        "metadata: {name: bomb}",
        "x:",
        '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    lines += [f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    r = http.post(base, content="\n".join(lines).encode(), headers={"Content-Type": "application/yaml"})
    assert r.status_code == 400 and "excessive aliasing" in r.json()["message"]
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {"v": "y" * 100}}]
    ops += [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/c{i}"}
        for i in range(19)
    ]
    r = http.patch(
        f"{base}/cm", content=orjson.dumps(ops), headers={"Content-Type": "application/json-patch+json"}
    )
    assert r.status_code == 422 and "exceeding the limit 3145728" in r.json()["message"]

    def big() -> Iterator[bytes]:
        yield b'{"metadata":{"name":"big"},"data":{"k":"'
        for _ in range(64):
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    r = http.post(base, content=big(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json()["message"] == "Request entity too large: limit is 3145728"
    assert http.get(f"{base}/cm").content == before
    assert http.get(f"{base}/big").status_code == 404
    assert http.get("/readyz").status_code == 200
    name = "after-" + uuid.uuid4().hex[:6]
    assert http.post(base, json={"metadata": {"name": name}}).status_code == 201
