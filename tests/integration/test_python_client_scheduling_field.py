"""KEP-6277's ``spec.scheduling`` through the official Python client (37.x): the typed ``V1StatefulSet``
has no such field, so its model refuses to send it and drops it on every read, and a read-modify-write
through it is refused by the server (the field is immutable); the dynamic client and a raw
``ApiClient.call_api`` keep it (README, "Typed clients and spec.scheduling").
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from gangplane.testing import GangplaneServer


def gang_statefulset(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "serviceName": name,
            "replicas": 2,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "scheduling": {"schedulingPolicy": {"gang": {}}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


def raw(api: k8s.ApiClient, method: str, path: str, body: dict[str, Any] | None = None, **params: str) -> Any:
    """One request through ``ApiClient`` without a model: the JSON document as sent and answered."""
    serialized = api.param_serialize(
        method,
        path,
        path_params=params,
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
    )
    response = api.call_api(*serialized[:4])
    response.read()
    assert response.status in (200, 201), response.data
    return json.loads(response.data)


def test_the_typed_statefulset_model_rejects_and_drops_spec_scheduling(
    gangplane_server: GangplaneServer,
) -> None:
    assert "scheduling" not in k8s.V1StatefulSetSpec.model_fields
    apps = k8s.AppsV1Api(gangplane_server.api_client)
    with pytest.raises(pydantic.ValidationError, match=r"spec\.scheduling"):  # the model forbids it
        apps.create_namespaced_stateful_set("default", gang_statefulset("typed"))
    DynamicClient(gangplane_server.api_client).resources.get(
        api_version="apps/v1", kind="StatefulSet"
    ).create(body=gang_statefulset("typed"), namespace="default")
    typed = apps.read_namespaced_stateful_set("typed", "default")
    assert "scheduling" not in typed.to_dict()["spec"]  # dropped on read
    typed.spec.replicas = 3
    typed.metadata.resource_version = None  # unconditional: the controllers may write status meanwhile
    with pytest.raises(ApiException) as e:  # written back without it: the field is immutable
        apps.replace_namespaced_stateful_set("typed", "default", typed)
    assert e.value.status == 422 and "spec.scheduling" in str(e.value.body)


def test_the_dynamic_client_keeps_spec_scheduling(gangplane_server: GangplaneServer) -> None:
    dyn = DynamicClient(gangplane_server.api_client)
    sts = dyn.resources.get(api_version="apps/v1", kind="StatefulSet")
    sts.create(body=gang_statefulset("dynamic"), namespace="default")
    got = sts.get(name="dynamic", namespace="default").to_dict()
    assert got["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {}}}
    got["spec"]["replicas"] = 3
    del got["metadata"]["resourceVersion"]  # unconditional: the controllers may write status meanwhile
    replaced = sts.replace(body=got, namespace="default").to_dict()
    assert replaced["spec"]["replicas"] == 3 and replaced["spec"]["scheduling"] == got["spec"]["scheduling"]


def test_a_raw_call_api_keeps_spec_scheduling(gangplane_server: GangplaneServer) -> None:
    api = gangplane_server.api_client
    raw(
        api,
        "POST",
        "/apis/apps/v1/namespaces/{namespace}/statefulsets",
        gang_statefulset("raw"),
        namespace="default",
    )
    got = raw(
        api,
        "GET",
        "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}",
        namespace="default",
        name="raw",
    )
    assert got["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {}}}
