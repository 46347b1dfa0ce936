"""Local APIServices follow the served versions of CustomResourceDefinitions (kube's CRD registration,
done inside the API server as kube-apiserver's crdRegistrationController does), next to the
``onstart`` APIServices of the built-in group-versions."""

from __future__ import annotations

import pytest

from apiserver.client.interface import GVR
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
APISERVICES = GVR("apiregistration.k8s.io", "v1", "apiservices")


def crd(versions: list[tuple[str, bool]]) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": n,
                    "served": s,
                    "storage": i == 0,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
                for i, (n, s) in enumerate(versions)
            ],
        },
    }


async def test_crd_versions_get_local_api_services(cp, client) -> None:
    await client.create(CRDS, crd([("v1", True), ("v1beta1", True), ("v1alpha1", False)]))
    svc = await wait_for_object(client, APISERVICES, "v1.example.com")
    assert svc is not None
    assert svc["spec"] == {
        "group": "example.com",
        "version": "v1",
        "groupPriorityMinimum": 1000,
        "versionPriority": 100,
    }
    assert svc["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert svc["status"]["conditions"][0]["reason"] == "Local"
    await wait_for_object(client, APISERVICES, "v1beta1.example.com")
    # A version that stops being served loses its APIService; the others stay.
    current = await client.get(CRDS, "widgets.example.com")
    current["spec"]["versions"][1]["served"] = False
    await client.update(CRDS, current)
    await wait_for_object(client, APISERVICES, "v1beta1.example.com", cond=lambda o: o is None)
    assert (await client.get(APISERVICES, "v1.example.com"))["metadata"]["name"] == "v1.example.com"
    await client.delete(CRDS, "widgets.example.com")
    await wait_for_object(client, APISERVICES, "v1.example.com", cond=lambda o: o is None)
    # Built-in (onstart) APIServices are never touched.
    assert (await client.get(APISERVICES, "v1.apps"))["metadata"]["labels"] == {
        "kube-aggregator.kubernetes.io/automanaged": "onstart"
    }
