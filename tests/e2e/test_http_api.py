"""The API over real HTTP against ``gangplane serve --port 0``: httpx and the official Python client."""

from __future__ import annotations

import json
import threading
import uuid

import httpx
import pytest

from tests.e2e.conftest import Server

pytestmark = pytest.mark.e2e


def _ns(http: httpx.Client) -> str:
    name = "e2e-" + uuid.uuid4().hex[:8]
    r = http.post(
        "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    assert r.status_code == 201, r.text
    return name


@pytest.fixture
def http(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=20) as c:
        yield c


def _cm(name: str, labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": {"k": "v"},
    }


def test_version_health_and_metrics(http: httpx.Client) -> None:
    v = http.get("/version").json()
    assert v["major"] == "1" and v["gitVersion"].startswith("v1.36.0+gangplane")
    for p in ("/healthz", "/livez", "/readyz"):
        assert http.get(p).text == "ok"
    http.get("/api/v1/namespaces")
    m = http.get("/metrics").text
    assert "apiserver_request_total{" in m
    assert 'kubernetes_feature_enabled{name="WorkloadWithStatefulSet",stage="ALPHA"} 1.0' in m


def test_crud_selectors_pages_and_conflict(http: httpx.Client) -> None:
    ns = _ns(http)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(5):
        r = http.post(base, json=_cm(f"c{i}", {"idx": str(i), "even": str(i % 2 == 0).lower()}))
        assert r.status_code == 201
    got = http.get(f"{base}/c1").json()
    assert got["metadata"]["labels"]["idx"] == "1"
    r = http.get(base, params={"labelSelector": "even=true"}).json()
    assert [i["metadata"]["name"] for i in r["items"]] == ["c0", "c2", "c4"]
    p1 = http.get(base, params={"limit": 2}).json()
    assert len(p1["items"]) == 2 and p1["metadata"]["continue"]
    p2 = http.get(base, params={"limit": 10, "continue": p1["metadata"]["continue"]}).json()
    assert [i["metadata"]["name"] for i in p2["items"]] == ["c2", "c3", "c4"]
    stale = dict(got)
    ok = http.put(f"{base}/c1", json={**got, "data": {"k": "new"}})
    assert ok.status_code == 200
    r = http.put(f"{base}/c1", json={**stale, "data": {"k": "stale"}})
    assert r.status_code == 409
    body = r.json()
    assert body["kind"] == "Status" and body["reason"] == "Conflict"
    r = http.patch(
        f"{base}/c1",
        content=json.dumps({"data": {"p": "1"}}),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200 and r.json()["data"] == {"k": "new", "p": "1"}
    r = http.patch(
        f"{base}/c1",
        content=json.dumps([{"op": "add", "path": "/data/j", "value": "2"}]),
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.json()["data"]["j"] == "2"


def test_watch_resume_over_http(http: httpx.Client, server: Server) -> None:
    ns = _ns(http)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    http.post(base, json=_cm("a"))
    rv = http.get(base).json()["metadata"]["resourceVersion"]
    http.post(base, json=_cm("b"))
    http.delete(f"{base}/a")
    events = []
    with httpx.stream(
        "GET", server.url + base, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"}
    ) as r:
        for line in r.iter_lines():
            if line:
                events.append(json.loads(line))
            if len(events) == 2:
                break
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]


def test_watch_list_bookmark_for_kubectl(http: httpx.Client, server: Server) -> None:
    ns = _ns(http)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    http.post(base, json=_cm("a"))
    params = {
        "watch": "true",
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "5",
    }
    seen = []
    with httpx.stream("GET", server.url + base, params=params) as r:
        for line in r.iter_lines():
            if line:
                seen.append(json.loads(line))
            if seen and seen[-1]["type"] == "BOOKMARK":
                break
    assert seen[0]["type"] == "ADDED"
    assert seen[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_delete_with_finalizers_over_http(http: httpx.Client) -> None:
    ns = _ns(http)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    obj = _cm("held")
    obj["metadata"]["finalizers"] = ["example.com/x"]
    http.post(base, json=obj)
    r = http.request(
        "DELETE",
        f"{base}/held",
        json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"},
    )
    assert r.status_code == 200
    assert http.get(f"{base}/held").json()["metadata"]["deletionTimestamp"]
    http.patch(
        f"{base}/held",
        content=b'{"metadata":{"finalizers":null}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert http.get(f"{base}/held").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "code", "reason"),
    [
        ("POST", "/api/v1/namespaces/default/configmaps", {"content": b"{not json"}, 400, "BadRequest"),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"content": b"x: [", "headers": {"Content-Type": "application/yaml"}},
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"json": {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}},
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"json": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}},
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {
                "json": {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "x", "namespace": "other"},
                }
            },
            400,
            "BadRequest",
        ),
        (
            "PUT",
            "/api/v1/namespaces/default/configmaps/a",
            {"json": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}},
            400,
            "BadRequest",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"content": b"{" + b'"a":"' + b"x" * (3 * 1024 * 1024) + b'"}'},
            413,
            "RequestEntityTooLarge",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"json": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}},
            422,
            "Invalid",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"content": b"x", "headers": {"Content-Type": "text/csv"}},
            415,
            "UnsupportedMediaType",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/configmaps",
            {"params": {"labelSelector": "a in ("}},
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/namespaces/default/configmaps",
            {"params": {"fieldSelector": "nope=1"}},
            400,
            "BadRequest",
        ),
        ("GET", "/apis/nope.example.com/v1/things", {}, 404, "NotFound"),
        (
            "PATCH",
            "/api/v1/namespaces/default/configmaps/none",
            {"content": b"{}", "headers": {"Content-Type": "application/merge-patch+json"}},
            404,
            "NotFound",
        ),
        (
            "POST",
            "/api/v1/namespaces/absent-ns/configmaps",
            {"json": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}},
            404,
            "NotFound",
        ),
    ],
)
def test_bad_input_gets_status_and_server_stays_healthy(
    http: httpx.Client, method: str, path: str, kwargs: dict, code: int, reason: str
) -> None:
    r = http.request(method, path, **kwargs)
    assert r.status_code == code, r.text
    body = r.json()
    assert (
        body["kind"] == "Status"
        and body["status"] == "Failure"
        and body["reason"] == reason
        and body["code"] == code
    )
    assert http.get("/healthz").text == "ok"


def test_missing_content_type_is_json(http: httpx.Client) -> None:
    ns = _ns(http)
    r = http.post(
        f"/api/v1/namespaces/{ns}/configmaps",
        content=json.dumps(_cm("nc")).encode(),
        headers={"Content-Type": ""},
    )
    assert r.status_code == 201


def test_official_python_client_dynamic_and_watch(server: Server) -> None:
    from kubernetes import client as k8s
    from kubernetes import config, dynamic, watch

    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    dyn = dynamic.DynamicClient(api_client)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    ns = "py-" + uuid.uuid4().hex[:8]
    k8s.CoreV1Api(api_client).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns)))
    created = cms.create(
        body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}},
        namespace=ns,
    )
    assert created.metadata.name == "a"
    got = cms.get(name="a", namespace=ns)
    assert got.data.x == "1"
    patched = cms.patch(
        name="a", namespace=ns, body={"data": {"x": "2"}}, content_type="application/merge-patch+json"
    )
    assert patched.data.x == "2"
    core = k8s.CoreV1Api(api_client)
    seen: list[str] = []

    def produce() -> None:
        core.create_namespaced_config_map(ns, k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="b")))

    w = watch.Watch()
    t = threading.Thread(target=produce)
    for ev in w.stream(core.list_namespaced_config_map, ns, timeout_seconds=10):
        seen.append(f"{ev['type']}:{ev['object'].metadata.name}")
        if seen == ["ADDED:a"]:
            t.start()
        if "ADDED:b" in seen:
            w.stop()
    t.join()
    assert seen == ["ADDED:a", "ADDED:b"]
    cms.delete(name="a", namespace=ns)
    lst = core.list_namespaced_config_map(ns)
    assert [i.metadata.name for i in lst.items] == ["b"]
