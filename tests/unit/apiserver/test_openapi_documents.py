"""The served OpenAPI documents: what kubectl's validation, explain and client-side apply rely on
(``shared/reference/kubectl.md`` section 5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from apiserver.errors import StatusError
from apiserver.openapi import additions, documents
from apiserver.rest.resources import Registry, ResourceDef, Subresource, status_of

STS_PATH = "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}"
SCHEDULING = "io.k8s.api.apps.v1.StatefulSetSchedulingConfiguration"


def make_registry() -> Registry:
    return Registry(
        [
            ResourceDef("", "v1", "Namespace", "namespaces", False, subresources=(status_of("Namespace"),)),
            ResourceDef(
                "",
                "v1",
                "Pod",
                "pods",
                True,
                subresources=(
                    status_of("Pod"),
                    Subresource("binding", "Binding", verbs=("create",)),
                    Subresource("eviction", "Eviction", "policy", "v1", verbs=("create",)),
                    Subresource("log", "Pod", verbs=("get",)),
                    Subresource("exec", "PodExecOptions", verbs=("create", "get")),
                ),
            ),
            ResourceDef(
                "apps",
                "v1",
                "StatefulSet",
                "statefulsets",
                True,
                subresources=(status_of("StatefulSet"), Subresource("scale", "Scale", "autoscaling", "v1")),
            ),
            ResourceDef("scheduling.k8s.io", "v1beta1", "Workload", "workloads", True),
            ResourceDef(
                "scheduling.k8s.io",
                "v1beta1",
                "PodGroup",
                "podgroups",
                True,
                subresources=(status_of("PodGroup"),),
            ),
            ResourceDef(
                "example.gangplane.io",
                "v1",
                "Widget",
                "widgets",
                True,
                strategic_merge=False,
                verbs=("get", "list", "patch"),
            ),
        ]
    )


@pytest.fixture(scope="module")
def registry() -> Registry:
    return make_registry()


def load(registry: Registry, group: str, version: str) -> dict[str, Any]:
    return orjson.loads(documents.openapi_v3_group_version(registry, group, version))


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def resolve(doc: dict[str, Any], node: dict[str, Any], prefix: str = documents.V3_REF) -> dict[str, Any]:
    """Follow ``$ref`` / single ``allOf`` the way kubectl does."""
    schemas = doc["components"]["schemas"] if prefix == documents.V3_REF else doc["definitions"]
    while True:
        if "allOf" in node:
            node = node["allOf"][0]
        elif "$ref" in node:
            node = schemas[node["$ref"].removeprefix(prefix)]
        else:
            return node


# --- index ------------------------------------------------------------------------------------


def test_index_lists_every_group_version_with_its_content_hash(registry: Registry) -> None:
    index = documents.openapi_v3_index(registry)
    assert sorted(index["paths"]) == [
        "api/v1",
        "apis/apps/v1",
        "apis/example.gangplane.io/v1",
        "apis/scheduling.k8s.io/v1beta1",
    ]
    for key, entry in index["paths"].items():
        kind, *gv = key.split("/")
        group, version = ("", gv[0]) if kind == "api" else (gv[0], gv[1])
        doc = documents.openapi_v3_group_version(registry, group, version)
        url, _, digest = entry["serverRelativeURL"].partition("?hash=")
        assert url == f"/openapi/v3/{key}"
        assert digest == documents.content_hash(doc)
        assert len(digest) == 128 and digest == digest.upper()
        assert documents.etag(doc) == f'"{digest}"'
        assert documents.openapi_v3_for_path(registry, url) is doc


def test_documents_are_cached_and_deterministic(registry: Registry) -> None:
    first = documents.openapi_v3_group_version(registry, "apps", "v1")
    assert documents.openapi_v3_group_version(make_registry(), "apps", "v1") is first
    documents._build.cache_clear()
    rebuilt = documents.openapi_v3_group_version(registry, "apps", "v1")
    assert rebuilt == first and rebuilt is not first


def test_registry_change_gives_new_documents(registry: Registry) -> None:
    smaller = Registry([d for d in registry.all() if d.plural != "workloads"])
    before = documents.openapi_v3_index(registry)["paths"]["apis/scheduling.k8s.io/v1beta1"]
    after = documents.openapi_v3_index(smaller)["paths"]["apis/scheduling.k8s.io/v1beta1"]
    assert before != after


@pytest.mark.parametrize(
    ("path", "served"),
    [
        ("/openapi/v3/api/v1", True),
        ("/openapi/v3/apis/apps/v1", True),
        ("/openapi/v3/apis/batch/v1", False),
        ("/openapi/v3/apis/apps", False),
        ("/openapi/v3/api/v1/extra", False),
    ],
)
def test_path_lookup(registry: Registry, path: str, served: bool) -> None:
    assert (documents.openapi_v3_for_path(registry, path) is not None) is served


def test_unknown_group_version_is_not_found(registry: Registry) -> None:
    with pytest.raises(StatusError) as info:
        documents.openapi_v3_group_version(registry, "batch", "v1")
    assert info.value.code == 404


# --- paths --------------------------------------------------------------------------------------


def test_statefulset_patch_operation_satisfies_kubectl_validation(registry: Registry) -> None:
    doc = load(registry, "apps", "v1")
    assert doc["openapi"] == "3.0.0"
    patch = doc["paths"][STS_PATH]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "kind": "StatefulSet",
        "version": "v1",
    }
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["operationId"] == "patchAppsV1NamespacedStatefulSet"
    names = {p["name"] for p in patch["parameters"]}
    assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= names
    assert sorted(patch["requestBody"]["content"]) == sorted(
        [documents.JSON_PATCH, documents.MERGE_PATCH, documents.STRATEGIC_MERGE_PATCH, documents.APPLY_PATCH]
    )


@pytest.mark.parametrize(
    ("path", "method", "action", "gvk"),
    [
        ("/apis/apps/v1/namespaces/{namespace}/statefulsets", "get", "list", ("apps", "v1", "StatefulSet")),
        ("/apis/apps/v1/namespaces/{namespace}/statefulsets", "post", "post", ("apps", "v1", "StatefulSet")),
        (
            "/apis/apps/v1/namespaces/{namespace}/statefulsets",
            "delete",
            "deletecollection",
            ("apps", "v1", "StatefulSet"),
        ),
        (STS_PATH, "get", "get", ("apps", "v1", "StatefulSet")),
        (STS_PATH, "put", "put", ("apps", "v1", "StatefulSet")),
        (STS_PATH, "delete", "delete", ("apps", "v1", "StatefulSet")),
        (STS_PATH + "/status", "patch", "patch", ("apps", "v1", "StatefulSet")),
        (STS_PATH + "/scale", "patch", "patch", ("autoscaling", "v1", "Scale")),
        (STS_PATH + "/scale", "put", "put", ("autoscaling", "v1", "Scale")),
        ("/apis/apps/v1/statefulsets", "get", "list", ("apps", "v1", "StatefulSet")),
        (
            "/apis/apps/v1/watch/namespaces/{namespace}/statefulsets",
            "get",
            "watchlist",
            ("apps", "v1", "StatefulSet"),
        ),
    ],
)
def test_apps_operations(
    registry: Registry, path: str, method: str, action: str, gvk: tuple[str, str, str]
) -> None:
    op = load(registry, "apps", "v1")["paths"][path][method]
    assert op["x-kubernetes-action"] == action
    assert op["x-kubernetes-group-version-kind"] == {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}


@pytest.mark.parametrize(
    ("path", "method", "action", "kind"),
    [
        ("/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "post", "Binding"),
        ("/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post", "post", "Eviction"),
        ("/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "get", "Pod"),
        ("/api/v1/namespaces/{namespace}/pods/{name}/exec", "post", "connect", "PodExecOptions"),
        ("/api/v1/namespaces/{name}", "patch", "patch", "Namespace"),
        ("/api/v1/namespaces/{name}/status", "put", "put", "Namespace"),
    ],
)
def test_core_operations(registry: Registry, path: str, method: str, action: str, kind: str) -> None:
    op = load(registry, "", "v1")["paths"][path][method]
    assert op["x-kubernetes-action"] == action
    assert op["x-kubernetes-group-version-kind"]["kind"] == kind


def test_verbs_limit_operations_and_smp_follows_the_resource(registry: Registry) -> None:
    doc = load(registry, "example.gangplane.io", "v1")
    item = doc["paths"]["/apis/example.gangplane.io/v1/namespaces/{namespace}/widgets/{name}"]
    assert set(item) == {"get", "patch", "parameters"}
    assert documents.STRATEGIC_MERGE_PATCH not in item["patch"]["requestBody"]["content"]
    assert "/apis/example.gangplane.io/v1/watch/namespaces/{namespace}/widgets" not in doc["paths"]
    widget = doc["components"]["schemas"]["io.gangplane.example.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "example.gangplane.io", "kind": "Widget", "version": "v1"}
    ]


# --- schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "version"),
    [("", "v1"), ("apps", "v1"), ("scheduling.k8s.io", "v1beta1"), ("example.gangplane.io", "v1")],
)
def test_every_ref_resolves_and_types_are_openapi3(registry: Registry, group: str, version: str) -> None:
    doc = load(registry, group, version)
    schemas = doc["components"]["schemas"]
    found = list(refs(doc))
    assert found
    for ref in found:
        assert ref.startswith(documents.V3_REF), ref
        assert ref.removeprefix(documents.V3_REF) in schemas, ref

    def check(node: Any) -> None:
        if isinstance(node, dict):
            assert not isinstance(node.get("type"), list), node
            if "$ref" in node:
                assert set(node) == {"$ref"}, node  # siblings go next to allOf, as in kube
            for value in node.values():
                check(value)
        elif isinstance(node, list):
            for value in node:
                check(value)

    check(schemas)


def test_top_level_kinds_carry_gvk_and_no_pinned_enums(registry: Registry) -> None:
    schemas = load(registry, "apps", "v1")["components"]["schemas"]
    sts = schemas["io.k8s.api.apps.v1.StatefulSet"]
    assert {"group": "apps", "kind": "StatefulSet", "version": "v1"} in sts["x-kubernetes-group-version-kind"]
    assert "enum" not in sts["properties"]["kind"] and "enum" not in sts["properties"]["apiVersion"]
    assert sts["properties"]["spec"]["allOf"] == [
        {"$ref": documents.V3_REF + "io.k8s.api.apps.v1.StatefulSetSpec"}
    ]
    assert sts["properties"]["spec"]["description"]
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas
    assert "io.k8s.api.apps.v1.StatefulSetList" in schemas


def test_special_scalar_definitions(registry: Registry) -> None:
    schemas = load(registry, "apps", "v1")["components"]["schemas"]
    assert schemas[documents.INT_OR_STRING]["format"] == "int-or-string"
    assert schemas[documents.INT_OR_STRING]["oneOf"] == [{"type": "integer"}, {"type": "string"}]
    assert schemas[documents.QUANTITY]["oneOf"] == [{"type": "string"}, {"type": "number"}]
    v2 = orjson.loads(documents.openapi_v2(registry))["definitions"]
    assert v2[documents.INT_OR_STRING] == {
        **v2[documents.INT_OR_STRING],
        "type": "string",
        "format": "int-or-string",
    }
    assert v2[documents.QUANTITY]["type"] == "string" and "oneOf" not in v2[documents.QUANTITY]


def walk_leaves(
    doc: dict[str, Any], node: dict[str, Any], path: str, seen: set[str]
) -> Iterator[tuple[str, dict]]:
    """Every property below ``node``: ``(path, property)``; recursion stops at repeated types."""
    target = resolve(doc, node)
    props = target.get("properties") or {}
    for name, prop in props.items():
        here = f"{path}.{name}"
        yield here, prop
        inner = prop.get("items", prop)
        ref = next(refs(inner), None)
        if ref and ref not in seen:
            yield from walk_leaves(doc, inner, here, seen | {ref})


def test_statefulset_scheduling_is_described_down_to_every_leaf(registry: Registry) -> None:
    doc = load(registry, "apps", "v1")
    spec = doc["components"]["schemas"]["io.k8s.api.apps.v1.StatefulSetSpec"]
    scheduling = spec["properties"]["scheduling"]
    assert scheduling["allOf"] == [{"$ref": documents.V3_REF + SCHEDULING}]
    leaves = dict(walk_leaves(doc, scheduling, "spec.scheduling", set()))
    assert set(leaves) == {
        "spec.scheduling.schedulingPolicy",
        "spec.scheduling.schedulingPolicy.basic",
        "spec.scheduling.schedulingPolicy.gang",
        "spec.scheduling.schedulingPolicy.gang.minCount",
        "spec.scheduling.schedulingConstraints",
        "spec.scheduling.schedulingConstraints.topology",
        "spec.scheduling.schedulingConstraints.topology.key",
        "spec.scheduling.disruptionMode",
        "spec.scheduling.disruptionMode.single",
        "spec.scheduling.disruptionMode.all",
        "spec.scheduling.resourceClaims",
        "spec.scheduling.resourceClaims.name",
        "spec.scheduling.resourceClaims.resourceClaimName",
        "spec.scheduling.resourceClaims.resourceClaimTemplateName",
    }
    for path, prop in leaves.items():
        assert prop.get("description"), path
        assert resolve(doc, prop).get("type") in {"object", "array", "string", "integer"}, path
    claims = leaves["spec.scheduling.resourceClaims"]
    assert claims["x-kubernetes-list-type"] == "map"
    assert claims["x-kubernetes-list-map-keys"] == ["name"]
    assert claims["x-kubernetes-patch-merge-key"] == "name"
    assert claims["x-kubernetes-patch-strategy"] == "merge"


def test_podgroup_accepts_the_kep_spelling(registry: Registry) -> None:
    doc = load(registry, "scheduling.k8s.io", "v1beta1")
    spec = doc["components"]["schemas"]["io.k8s.api.scheduling.v1beta1.PodGroupSpec"]
    ref = spec["properties"]["podGroupTemplateRef"]
    assert "converted to workloadRef" in ref["description"]
    target = resolve(doc, ref)
    assert set(target["properties"]) == {"workloadName", "podGroupTemplateName"}
    assert "workloadRef" in spec["properties"]


def test_additions_leave_shared_entries_untouched() -> None:
    original = {"properties": {"replicas": {"type": "integer"}}}
    defs: dict[str, Any] = {additions.STATEFULSET_SPEC: original}
    for name in additions.BUILDING_BLOCKS:
        defs[name] = {"properties": {p: {"type": "string"} for p in additions.BUILDING_BLOCKS[name]}}
    additions.apply_additions(defs)
    assert "scheduling" in defs[additions.STATEFULSET_SPEC]["properties"]
    assert original == {"properties": {"replicas": {"type": "integer"}}}


@pytest.mark.parametrize("missing", sorted(additions.BUILDING_BLOCKS))
def test_additions_refuse_incomplete_building_blocks(missing: str) -> None:
    defs: dict[str, Any] = {additions.STATEFULSET_SPEC: {"properties": {}}}
    for name, props in additions.BUILDING_BLOCKS.items():
        if name != missing:
            defs[name] = {"properties": {p: {} for p in props}}
    with pytest.raises(RuntimeError, match=missing):
        additions.apply_additions(defs)


# --- Swagger 2.0 --------------------------------------------------------------------------------


def test_v2_document(registry: Registry) -> None:
    raw = documents.openapi_v2(registry)
    assert documents.openapi_v2(registry) is raw
    doc = orjson.loads(raw)
    assert doc["swagger"] == "2.0"
    definitions = doc["definitions"]
    for ref in refs(doc):
        assert ref.startswith(documents.V2_REF), ref
        assert ref.removeprefix(documents.V2_REF) in definitions, ref
    patch = doc["paths"][STS_PATH]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "kind": "StatefulSet",
        "version": "v1",
    }
    assert documents.STRATEGIC_MERGE_PATCH in patch["consumes"]
    params = {p["name"]: p for p in patch["parameters"]}
    assert params["fieldValidation"]["type"] == "string"
    assert params["body"]["schema"] == {"$ref": documents.V2_REF + documents.PATCH}
    widget_patch = doc["paths"]["/apis/example.gangplane.io/v1/namespaces/{namespace}/widgets/{name}"][
        "patch"
    ]
    assert documents.STRATEGIC_MERGE_PATCH not in widget_patch["consumes"]
    spec = definitions["io.k8s.api.apps.v1.StatefulSetSpec"]["properties"]["scheduling"]
    assert spec["$ref"] == documents.V2_REF + SCHEDULING and spec["description"]
    assert (
        resolve(doc, spec, documents.V2_REF)["properties"]["resourceClaims"]["x-kubernetes-patch-merge-key"]
        == "name"
    )
