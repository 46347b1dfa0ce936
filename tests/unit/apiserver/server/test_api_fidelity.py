"""The fidelity defects helm and the Python client trip on, in-process and over (ASGI) HTTP.

* unconditional update: a PUT without ``metadata.resourceVersion`` applies to the latest object
  where kube's strategy says ``AllowUnconditionalUpdate`` (Secrets, ConfigMaps, …) and is a 422
  naming the resource where it does not (CSIDrivers, APIServices);
* DeleteOptions arrive as protobuf (helm's storage driver) and are honoured like JSON ones;
* DELETE answers the object for kinds whose kube storage sets ``ReturnDeletedObject`` (Services,
  ServiceAccounts, PVCs, …), a ``Status`` Success for the others, and the object with its
  ``deletionTimestamp`` while finalizers keep it;
* an unknown request Content-Type is a 415 and stores nothing;
* ``Status`` bodies are encoded in kube's field order and end with a newline.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson
import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.registry.generic import DeleteOptions
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry
from apiserver.server.protobuf import decode_k8s_protobuf


class _Http:
    """Requests straight into the ASGI app (no server, no sockets)."""

    def __init__(self) -> None:
        reg, metrics = new_metrics_registry()
        self.api = build_api()
        self.app = APIApp(self.api, metrics, reg).asgi()

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                return await c.request(method, url, **kw)

        return asyncio.run(go())


@pytest.fixture
def http() -> _Http:
    return _Http()


# --------------------------------------------------------------------------- protobuf helpers


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _len_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def protobuf_delete_options(
    api_version: str = "v1",
    *,
    grace: int | None = None,
    policy: str = "",
    uid: str = "",
    dry_run: bool = False,
) -> bytes:
    """``k8s\\0`` + runtime.Unknown{typeMeta, raw=DeleteOptions} as client-go sends it."""
    raw = b""
    if grace is not None:
        raw += _varint_field(1, grace)
    if uid:
        raw += _len_field(2, _len_field(1, uid.encode()))
    if policy:
        raw += _len_field(4, policy.encode())
    if dry_run:
        raw += _len_field(5, b"All")
    type_meta = _len_field(1, api_version.encode()) + _len_field(2, b"DeleteOptions")
    return (
        b"k8s\x00"
        + _len_field(1, type_meta)
        + _len_field(2, raw)
        + _len_field(4, b"application/vnd.kubernetes.protobuf")
    )


# --------------------------------------------------------------------------- unconditional update


def _secret(name: str, data: str = "djE=") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "data": {"k": data},
        "type": "Opaque",
    }


def test_put_without_resource_version_is_unconditional_for_secrets(http: _Http) -> None:
    base = "/api/v1/namespaces/default/secrets"
    assert http.request("POST", base, json=_secret("release")).status_code == 201
    http.request(
        "PATCH",
        base + "/release",
        json={"metadata": {"labels": {"x": "1"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    r = http.request("PUT", base + "/release", json=_secret("release", "djI="))
    assert r.status_code == 200, r.text
    got = http.request("GET", base + "/release").json()
    assert (
        got["data"] == {"k": "djI="}
        and got["metadata"]["resourceVersion"] == r.json()["metadata"]["resourceVersion"]
    )


def test_stale_resource_version_still_conflicts(http: _Http) -> None:
    base = "/api/v1/namespaces/default/configmaps"
    made = http.request(
        "POST", base, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    ).json()
    http.request(
        "PUT",
        base + "/c",
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}},
    )
    stale = {**made, "data": {"b": "2"}}
    r = http.request("PUT", base + "/c", json=stale)
    assert r.status_code == 409 and r.json()["reason"] == "Conflict"


def test_put_without_resource_version_is_invalid_where_kube_forbids_it(http: _Http) -> None:
    base = "/apis/storage.k8s.io/v1/csidrivers"
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": "csi.example.com"},
        "spec": {},
    }
    assert http.request("POST", base, json=body).status_code == 201
    r = http.request("PUT", base + "/csi.example.com", json=body)
    assert r.status_code == 422
    st = r.json()
    assert st["message"] == (
        'csidrivers.storage.k8s.io "csi.example.com" is invalid: '
        "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    )
    assert st["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: must be specified for an update",
            "field": "metadata.resourceVersion",
        }
    ]


# --------------------------------------------------------------------------- protobuf DeleteOptions


def test_protobuf_delete_options_decode_for_any_group_version() -> None:
    for gv in ("v1", "apps/v1", "meta.k8s.io/v1"):
        body = decode_k8s_protobuf(
            protobuf_delete_options(gv, grace=0, policy="Foreground", uid="u1", dry_run=True)
        )
        assert body == {
            "kind": "DeleteOptions",
            "apiVersion": gv,
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "u1"},
            "propagationPolicy": "Foreground",
            "dryRun": ["All"],
        }
    assert decode_k8s_protobuf(protobuf_delete_options()) == {"kind": "DeleteOptions", "apiVersion": "v1"}


def test_delete_with_protobuf_body_deletes(http: _Http) -> None:
    base = "/api/v1/namespaces/default/secrets"
    http.request("POST", base, json=_secret("sh.helm.release.v1.r.v1"))
    headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    r = http.request(
        "DELETE", base + "/sh.helm.release.v1.r.v1", content=protobuf_delete_options(), headers=headers
    )
    assert r.status_code == 200, r.text
    assert http.request("GET", base + "/sh.helm.release.v1.r.v1").status_code == 404


def test_protobuf_delete_options_are_honoured(http: _Http) -> None:
    base = "/api/v1/namespaces/default/configmaps"
    made = http.request(
        "POST", base, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}}
    ).json()
    headers = {"Content-Type": "application/vnd.kubernetes.protobuf"}
    dry = http.request(
        "DELETE", base + "/keep", content=protobuf_delete_options(dry_run=True), headers=headers
    )
    assert dry.status_code == 200
    assert http.request("GET", base + "/keep").status_code == 200
    wrong = http.request(
        "DELETE", base + "/keep", content=protobuf_delete_options(uid="nope"), headers=headers
    )
    assert wrong.status_code == 409
    assert "Precondition failed: UID in precondition: nope" in wrong.json()["message"]
    right = http.request(
        "DELETE",
        base + "/keep",
        content=protobuf_delete_options(uid=made["metadata"]["uid"]),
        headers=headers,
    )
    assert right.status_code == 200


# --------------------------------------------------------------------------- DELETE return shape


@pytest.mark.parametrize(
    ("group", "version", "plural", "ns", "body", "returns_object"),
    [
        ("", "v1", "services", "default", {"kind": "Service", "spec": {"ports": [{"port": 80}]}}, True),
        ("", "v1", "serviceaccounts", "default", {"kind": "ServiceAccount"}, True),
        (
            "",
            "v1",
            "podtemplates",
            "default",
            {"kind": "PodTemplate", "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
            True,
        ),
        (
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "",
            {"kind": "StorageClass", "provisioner": "example.com/p"},
            True,
        ),
        ("", "v1", "configmaps", "default", {"kind": "ConfigMap"}, False),
        ("", "v1", "secrets", "default", {"kind": "Secret"}, False),
        ("rbac.authorization.k8s.io", "v1", "roles", "default", {"kind": "Role"}, False),
        (
            "networking.k8s.io",
            "v1",
            "networkpolicies",
            "default",
            {"kind": "NetworkPolicy", "spec": {"podSelector": {}}},
            False,
        ),
    ],
)
def test_delete_returns_what_kube_storage_returns(
    http: _Http, group: str, version: str, plural: str, ns: str, body: Obj, returns_object: bool
) -> None:
    gv = f"{group}/{version}" if group else version
    prefix = f"/apis/{gv}" if group else f"/api/{version}"
    base = f"{prefix}/namespaces/{ns}/{plural}" if ns else f"{prefix}/{plural}"
    made = http.request("POST", base, json={"apiVersion": gv, "metadata": {"name": "x"}, **body})
    assert made.status_code == 201, made.text
    r = http.request("DELETE", base + "/x")
    assert r.status_code == 200
    out = r.json()
    if returns_object:
        assert out["kind"] == body["kind"] and out["metadata"]["uid"] == made.json()["metadata"]["uid"]
    else:
        details: Obj = {"name": "x", "kind": plural, "uid": made.json()["metadata"]["uid"]}
        if group:
            details = {"name": "x", "group": group, "kind": plural, "uid": made.json()["metadata"]["uid"]}
        assert (
            r.content
            == orjson.dumps(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                }
            )
            + b"\n"
        )


def test_delete_held_by_a_finalizer_returns_the_object(http: _Http) -> None:
    base = "/api/v1/namespaces/default/configmaps"
    http.request(
        "POST",
        base,
        json={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "f", "finalizers": ["example.com/hold"]},
        },
    )
    r = http.request("DELETE", base + "/f")
    assert r.status_code == 200
    assert r.json()["kind"] == "ConfigMap" and r.json()["metadata"]["deletionTimestamp"]


# --------------------------------------------------------------------------- content types, Status encoding


def test_unknown_content_type_is_415_and_nothing_is_stored(http: _Http) -> None:
    base = "/api/v1/namespaces/default/configmaps"
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}})
    r = http.request("POST", base, content=body, headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert r.json()["reason"] == "UnsupportedMediaType"
    assert http.request("GET", base + "/plain").status_code == 404
    # A missing Content-Type is JSON (the Python client's typed POSTs).
    assert http.request("POST", base, content=body).status_code == 201


def test_status_is_encoded_as_kube_does(http: _Http) -> None:
    r = http.request("GET", "/api/v1/namespaces/default/configmaps/missing")
    assert r.status_code == 404
    assert r.content == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
        b'"details":{"name":"missing","kind":"configmaps"},"code":404}\n'
    )
    # Without details, code still closes the object.
    assert list(errors.bad_request("x").status()) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "code",
    ]


def test_in_process_unconditional_update_and_delete_shapes() -> None:
    api = build_api()
    rd = api.registry.get("", "v1", "configmaps")
    assert rd is not None and rd.strategy.allow_unconditional_update
    api.create(rd, "default", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    out = api.update(rd, "default", "c", {"metadata": {"name": "c"}, "data": {"a": "2"}})
    assert out.obj["data"] == {"a": "2"}
    gone = api.delete(rd, "default", "c", DeleteOptions())
    assert gone.obj["kind"] == "Status" and gone.obj["details"]["kind"] == "configmaps"
    svc = api.registry.get("", "v1", "services")
    assert svc is not None and svc.return_deleted_object


def test_views_are_field_validated_in_their_own_version(http: _Http) -> None:
    """autoscaling/v1 (a view of stored v2 HPAs) is decoded against the v1 schema, before conversion."""
    base = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 2,
            "targetCPUUtilizationPercentage": 60,
            "metrics": [],
        },
    }
    r = http.request("POST", base + "?fieldValidation=Strict", json=body)
    assert r.status_code == 400
    assert r.json()["message"] == (
        'HorizontalPodAutoscaler in version "v1" cannot be handled as a HorizontalPodAutoscaler: '
        'strict decoding error: unknown field "spec.metrics"'
    )
    r = http.request("POST", base + "?fieldValidation=Warn", json=body)
    assert r.status_code == 201 and r.headers["warning"] == '299 - "unknown field \\"spec.metrics\\""'
    stored = http.request("GET", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/h").json()
    assert stored["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
        }
    ]
