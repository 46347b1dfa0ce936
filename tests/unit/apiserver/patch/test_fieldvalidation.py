"""Server-side field validation: unknown and duplicate fields under Strict, Warn and Ignore.

The expected messages are kube-apiserver's: ``strict decoding error: <item>, <item>`` with items
``unknown field "<path>"`` / ``duplicate field "<path>"``; creates and updates are prefixed with
``<Kind> in version "<v>" cannot be handled as a <Kind>: `` by the HTTP layer, patches are not.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from apiserver.api.types import Obj
from apiserver.errors import StatusError
from apiserver.patch.fieldvalidation import (
    check_body,
    duplicate_fields,
    strict_decoding_message,
    unknown_fields,
)
from apiserver.registry.generic import MERGE_PATCH, STRATEGIC_PATCH, WriteOptions
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry


def sts(**spec: Any) -> Obj:
    base: Obj = {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "w"}},
        "template": {
            "metadata": {"labels": {"app": "w"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    }
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "w"}, "spec": base}


# ---------------------------------------------------------------------------- unknown fields
def test_known_object_has_no_unknown_fields() -> None:
    obj = sts(scheduling={"schedulingPolicy": {"gang": {"minCount": 2}}})
    obj["metadata"].update(
        labels={"any": "x"},
        annotations={"k": "v"},
        managedFields=[
            {
                "manager": "m",
                "operation": "Update",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:anything": {}}},
            }
        ],
    )
    obj["status"] = {"replicas": 1, "conditions": [{"type": "X", "status": "True"}]}
    assert unknown_fields("apps", "v1", "StatefulSet", obj) == []


@pytest.mark.parametrize(
    ("obj", "paths"),
    [
        ({"foo": 1}, ["foo"]),
        ({"metadata": {"name": "w", "nmae": "x"}}, ["metadata.nmae"]),
        ({"spec": {"replicas": 1, "foo": {"bar": 1}}}, ["spec.foo"]),
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "imagee": "x"}]}}}},
            ["spec.template.spec.containers[1].imagee"],
        ),
        (
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 1, "x": 2}]}]}
                    }
                }
            },
            ["spec.template.spec.containers[0].ports[0].x"],
        ),
        (
            {"spec": {"scheduling": {"schedulingPolicy": {"gang": {"minCount": 2, "max": 3}}}}},
            ["spec.scheduling.schedulingPolicy.gang.max"],
        ),
        ({"status": {"replicas": 1, "zzz": True}}, ["status.zzz"]),
        (
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}, "bad": 1}}]
                        }
                    }
                }
            },
            ["spec.template.spec.containers[0].resources.bad"],
        ),
        (
            {
                "metadata": {
                    "ownerReferences": [{"kind": "X", "name": "n", "uid": "u", "apiVersion": "v1", "q": 1}]
                }
            },
            ["metadata.ownerReferences[0].q"],
        ),
    ],
)
def test_unknown_field_paths(obj: Obj, paths: list[str]) -> None:
    assert unknown_fields("apps", "v1", "StatefulSet", obj) == paths


def test_map_values_are_walked_and_map_keys_are_free() -> None:
    pod = {"spec": {"overhead": {"anything": "1"}, "nodeSelector": {"k": "v"}}}
    assert unknown_fields("", "v1", "Pod", pod) == []
    secret = {"data": {"a": "eA=="}, "stringData": {"b": "x"}}
    assert unknown_fields("", "v1", "Secret", secret) == []


def test_opaque_nodes_accept_anything() -> None:
    rev = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "r"},
        "revision": 1,
        "data": {"spec": {"whatever": {"deep": 1}}},
    }
    assert unknown_fields("apps", "v1", "ControllerRevision", rev) == []


def test_prune_removes_unknown_but_keeps_fields_the_stored_object_has() -> None:
    old = sts()
    old["spec"]["legacy"] = 1
    new = sts()
    new["spec"]["legacy"] = 2
    new["spec"]["foo"] = 3
    new["spec"]["template"]["spec"]["containers"][0]["bar"] = 4
    assert unknown_fields("apps", "v1", "StatefulSet", new, old, prune=True) == [  # document order
        "spec.template.spec.containers[0].bar",
        "spec.foo",
    ]
    assert new["spec"]["legacy"] == 2 and "foo" not in new["spec"]
    assert "bar" not in new["spec"]["template"]["spec"]["containers"][0]


def test_kind_without_schema_has_no_unknown_fields() -> None:
    assert unknown_fields("example.com", "v1", "Nope", {"x": 1}) == []


# ---------------------------------------------------------------------------- duplicate fields
@pytest.mark.parametrize(
    ("raw", "paths"),
    [
        (b'{"metadata":{"name":"a"},"spec":{"name":"b"}}', []),
        (b'{"metadata":{"name":"a","name":"b"}}', ["metadata.name"]),
        (b'{"a":1,"a":2,"a":3,"b":{"c":[{"x":1},{"y":1,"y":2}]}}', ["a", "b.c[1].y"]),
        (b'{"s":"\\"k\\":1,\\"k\\":2"}', []),
        (b'  {"k" : 1, "k" : 2}', ["k"]),
        (b'[{"op":"add","op":"remove"}]', []),
        (
            b"metadata:\n  name: a\n  name: b\nspec:\n  l:\n  - x: 1\n    x: 2\n",
            ["metadata.name", "spec.l[0].x"],
        ),
        (b"{a: 1, a: 2}", ["a"]),
        (b"", []),
    ],
)
def test_duplicate_fields(raw: bytes, paths: list[str]) -> None:
    assert duplicate_fields(raw) == paths


def test_message_format() -> None:
    assert (
        strict_decoding_message(["metadata.name"], ["spec.foo", "spec.bar"])
        == 'strict decoding error: duplicate field "metadata.name", unknown field "spec.foo", unknown field "spec.bar"'
    )


# ---------------------------------------------------------------------------- the hook
class _RD:
    group, version, kind, storage_of = "apps", "v1", "StatefulSet", None
    schema = converter = None
    is_view = False


def test_check_body_directives() -> None:
    raw = b'{"metadata":{"name":"w","name":"w"},"spec":{"foo":1}}'

    def run(directive: str, raw_body: bytes | None) -> tuple[Obj, list[str]]:
        obj = sts(foo=1)
        warnings: list[str] = []
        check_body(_RD, obj, None, WriteOptions(field_validation=directive, raw_body=raw_body), warnings)
        return obj, warnings

    with pytest.raises(StatusError) as e:
        run("Strict", raw)
    assert e.value.code == 400 and e.value.reason == "BadRequest"
    assert (
        e.value.message == 'strict decoding error: duplicate field "metadata.name", unknown field "spec.foo"'
    )
    obj, warnings = run("Warn", raw)
    assert (
        warnings == ['duplicate field "metadata.name"', 'unknown field "spec.foo"']
        and "foo" not in obj["spec"]
    )
    obj, warnings = run("", raw)  # an HTTP write without the parameter: Warn
    assert warnings == ['duplicate field "metadata.name"', 'unknown field "spec.foo"']
    obj, warnings = run("Ignore", raw)
    assert warnings == [] and "foo" not in obj["spec"]
    obj, warnings = run("", None)  # the in-process client: untouched
    assert warnings == [] and obj["spec"]["foo"] == 1


def test_check_body_accepts_a_strict_many_container_body_on_create_and_update() -> None:
    """A valid body passes Strict validation silently, created or updated (its cost is measured in
    bench/micro/test_request_decoding.py, never asserted here)."""
    obj = sts()
    obj["spec"]["template"]["spec"]["containers"] = [
        {
            "name": f"c{i}",
            "image": "i",
            "env": [{"name": f"E{j}", "value": "v"} for j in range(5)],
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "1"}},
        }
        for i in range(4)
    ]
    raw = json.dumps(obj).encode()
    opts = WriteOptions(field_validation="Strict", raw_body=raw)
    warnings: list[str] = []
    check_body(_RD, obj, None, opts, warnings)
    check_body(_RD, obj, obj, opts, warnings)
    assert warnings == []


# ---------------------------------------------------------------------------- through the API and HTTP
def test_api_patch_and_create() -> None:
    api = build_api()
    rd = api.registry.get("apps", "v1", "statefulsets")
    assert rd is not None
    res = api.create(rd, "default", sts(foo=1), WriteOptions(field_validation="Warn"))
    assert res.warnings == ['unknown field "spec.foo"'] and "foo" not in res.obj["spec"]
    with pytest.raises(StatusError) as e:
        api.patch(
            rd,
            "default",
            "w",
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "x": 1}]}}}},
            STRATEGIC_PATCH,
            WriteOptions(field_validation="Strict"),
        )
    assert e.value.message == 'strict decoding error: unknown field "spec.template.spec.containers[0].x"'
    res = api.patch(
        rd, "default", "w", {"spec": {"replicas": 2}}, MERGE_PATCH, WriteOptions(field_validation="Strict")
    )
    assert res.obj["spec"]["replicas"] == 2 and res.warnings == []


class _Http:
    """Requests straight into the ASGI app (no server, no sockets)."""

    def __init__(self) -> None:
        reg, metrics = new_metrics_registry()
        self.app = APIApp(build_api(), metrics, reg).asgi()

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                return await c.request(method, url, **kw)

        return asyncio.run(go())

    def post(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("POST", url, **kw)

    def put(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("PUT", url, **kw)

    def patch(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("PATCH", url, **kw)


@pytest.fixture
def http() -> _Http:
    return _Http()


CM = "/api/v1/namespaces/default/configmaps"


def test_http_strict_create_and_update_are_prefixed(http: _Http) -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"a"},"data":{},"foo":1}'
    r = http.post(CM + "?fieldValidation=Strict", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: duplicate field "metadata.name", unknown field "foo"'
    )
    r = http.post(CM, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "foo": 1})
    assert r.status_code == 201 and "foo" not in r.json()
    assert r.headers.get_list("warning") == ['299 - "unknown field \\"foo\\""']
    cur = r.json()
    r = http.put(CM + "/a?fieldValidation=Strict", json={**cur, "bar": 1})
    assert r.status_code == 400
    assert r.json()["message"].startswith(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding'
    )


def test_http_patch_is_bare_and_ignore_is_silent(http: _Http) -> None:
    http.post(CM, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}})
    r = http.patch(
        CM + "/p?fieldValidation=Strict",
        content=b'{"data":{"a":"1"},"data":{"b":"2"},"x":1}',
        headers={"Content-Type": MERGE_PATCH},
    )
    assert r.status_code == 400
    assert r.json()["message"] == 'strict decoding error: duplicate field "data", unknown field "x"'
    r = http.patch(
        CM + "/p?fieldValidation=Ignore", content=b'{"x":1}', headers={"Content-Type": MERGE_PATCH}
    )
    assert r.status_code == 200 and "warning" not in r.headers and "x" not in r.json()
    r = http.patch(
        CM + "/p?fieldValidation=Strict",
        content=b'[{"op":"add","path":"/y","value":1}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.status_code == 400 and r.json()["message"] == 'strict decoding error: unknown field "y"'
