"""Discovery and OpenAPI of the everyday kinds, from the real registry: what kubectl needs to
``get`` them by short name, validate ``create -f``/``apply -f`` and ``explain`` them."""

from __future__ import annotations

import orjson
import pytest

from apiserver.openapi import documents
from apiserver.registry.builtin import builtin_resources
from apiserver.rest.resources import Registry
from apiserver.server.discovery import aggregated_discovery, api_group_list, api_resource_list
from featuregates import FeatureGate

KINDS = [
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", True, ()),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, ()),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, ()),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, ()),
    ("", "v1", "replicationcontrollers", "ReplicationController", True, ("rc",)),
    ("", "v1", "podtemplates", "PodTemplate", True, ()),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, ()),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",)),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, ()),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",)),
    ("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",)),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, ()),
]
REVIEWS = [
    "selfsubjectaccessreviews",
    "selfsubjectrulesreviews",
    "subjectaccessreviews",
    "localsubjectaccessreviews",
]


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry(builtin_resources())


@pytest.mark.parametrize(("group", "version", "plural", "kind", "namespaced", "short"), KINDS)
def test_legacy_discovery_and_openapi_patch_operation(
    registry: Registry,
    group: str,
    version: str,
    plural: str,
    kind: str,
    namespaced: bool,
    short: tuple[str, ...],
) -> None:
    listing = api_resource_list(registry, group, version, FeatureGate())
    assert listing is not None
    entry = next(r for r in listing["resources"] if r["name"] == plural)
    assert (entry["kind"], entry["namespaced"], tuple(entry.get("shortNames", ()))) == (
        kind,
        namespaced,
        short,
    )
    assert entry["verbs"] == [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
    doc = orjson.loads(documents.openapi_v3_group_version(registry, group, version))
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    item = (
        f"{prefix}/namespaces/{{namespace}}/{plural}/{{name}}"
        if namespaced
        else f"{prefix}/{plural}/{{name}}"
    )
    patch = doc["paths"][item]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": group, "version": version, "kind": kind}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert documents.STRATEGIC_MERGE_PATCH in patch["requestBody"]["content"]
    schema_names = [
        n
        for n, s in doc["components"]["schemas"].items()
        if {"group": group, "version": version, "kind": kind} in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert schema_names, f"no schema carries {kind}'s GVK"
    assert doc["components"]["schemas"][schema_names[0]]["properties"]["metadata"]


def test_reviews_are_create_only_everywhere(registry: Registry) -> None:
    listing = api_resource_list(registry, "authorization.k8s.io", "v1", FeatureGate())
    assert listing is not None
    assert {r["name"]: r["verbs"] for r in listing["resources"]} == {p: ["create"] for p in REVIEWS}
    doc = orjson.loads(documents.openapi_v3_group_version(registry, "authorization.k8s.io", "v1"))
    ops = {
        (path, m)
        for path, item in doc["paths"].items()
        for m in item
        if m in ("get", "put", "patch", "post", "delete")
    }
    assert ops == {
        ("/apis/authorization.k8s.io/v1/", "get"),  # the group-version's discovery document
        ("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "post"),
        ("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", "post"),
        ("/apis/authorization.k8s.io/v1/subjectaccessreviews", "post"),
        ("/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews", "post"),
    }


def test_groups_and_aggregated_discovery(registry: Registry) -> None:
    groups = {g["name"]: g for g in api_group_list(registry, FeatureGate())["groups"]}
    for name in (
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "networking.k8s.io",
        "apiregistration.k8s.io",
        "authorization.k8s.io",
    ):
        assert groups[name]["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in groups["autoscaling"]["versions"]] == ["v2", "v1"]
    agg = aggregated_discovery(registry, False, FeatureGate())
    rc = next(
        r
        for r in aggregated_discovery(registry, True, FeatureGate())["items"][0]["versions"][0]["resources"]
        if r["resource"] == "replicationcontrollers"
    )
    scale = next(sub for sub in rc["subresources"] if sub["subresource"] == "scale")
    assert rc["categories"] == ["all"] and scale["responseKind"] == {
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
    }
    assert any(i["metadata"]["name"] == "rbac.authorization.k8s.io" for i in agg["items"])
