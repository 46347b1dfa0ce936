"""Discovery documents built from a small Registry (kubectl.md §2)."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.rest.resources import STATUS, Registry, ResourceDef, Subresource
from apiserver.server.discovery import (
    aggregated_discovery,
    api_group,
    api_group_list,
    api_resource_list,
    api_versions,
    served_groups,
    storage_version_hash,
)
from apiserver.server.negotiation import (
    AGGREGATED_DISCOVERY_CONTENT_TYPE,
    AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE,
    wants_aggregated,
)
from featuregates import FeatureGate
from featuregates.gates import COMPOSITE_POD_GROUP, GENERIC_WORKLOAD

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def registry() -> Registry:
    return Registry(
        [
            ResourceDef(
                "",
                "v1",
                "Pod",
                "pods",
                True,
                short_names=("po",),
                categories=("all",),
                subresources=(
                    STATUS,
                    Subresource("binding", "Binding", verbs=("create",)),
                    Subresource("eviction", "Eviction", group="policy", version="v1", verbs=("create",)),
                ),
            ),
            ResourceDef(
                "",
                "v1",
                "Namespace",
                "namespaces",
                False,
                short_names=("ns",),
                verbs=("create", "get", "list", "watch"),
            ),
            ResourceDef("", "v1", "Event", "events", True, short_names=("ev",)),
            ResourceDef(
                "apps",
                "v1",
                "StatefulSet",
                "statefulsets",
                True,
                short_names=("sts",),
                categories=("all",),
                subresources=(STATUS, Subresource("scale", "Scale", group="autoscaling", version="v1")),
            ),
            ResourceDef(
                "events.k8s.io", "v1", "Event", "events", True, short_names=("ev",), storage_of=("", "events")
            ),
            ResourceDef(
                "scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",)
            ),
            ResourceDef("scheduling.k8s.io", "v1beta1", "Workload", "workloads", True, gate=GENERIC_WORKLOAD),
            ResourceDef(
                "scheduling.k8s.io",
                "v1beta1",
                "PodGroup",
                "podgroups",
                True,
                subresources=(STATUS,),
                gate=GENERIC_WORKLOAD,
            ),
            ResourceDef(
                "scheduling.k8s.io",
                "v1alpha3",
                "CompositePodGroup",
                "compositepodgroups",
                True,
                gate=COMPOSITE_POD_GROUP,
            ),
        ]
    )


ON = FeatureGate()
COMPOSITE_OFF = FeatureGate(overrides={COMPOSITE_POD_GROUP: False})
WORKLOAD_OFF = FeatureGate(overrides={GENERIC_WORKLOAD: False, COMPOSITE_POD_GROUP: False})


def by_name(resources: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in resources}


# ---------------------------------------------------------------------------------------------
# legacy


def test_api_versions() -> None:
    assert api_versions("127.0.0.1:6443") == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    }


def test_api_group_list_lists_named_groups_with_preferred_version_first() -> None:
    body = api_group_list(registry(), ON)
    assert body["kind"] == "APIGroupList" and body["apiVersion"] == "v1"
    assert [g["name"] for g in body["groups"]] == ["apps", "events.k8s.io", "scheduling.k8s.io"]
    sched = body["groups"][2]
    assert sched["versions"] == [
        {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"},
        {"groupVersion": "scheduling.k8s.io/v1beta1", "version": "v1beta1"},
        {"groupVersion": "scheduling.k8s.io/v1alpha3", "version": "v1alpha3"},
    ]
    assert sched["preferredVersion"] == {"groupVersion": "scheduling.k8s.io/v1", "version": "v1"}


@pytest.mark.parametrize(
    ("gates", "versions"),
    [
        pytest.param(ON, ["v1", "v1beta1", "v1alpha3"], id="all-on"),
        pytest.param(COMPOSITE_OFF, ["v1", "v1beta1"], id="composite-off"),
        pytest.param(WORKLOAD_OFF, ["v1"], id="workload-off"),
    ],
)
def test_gated_versions_disappear(gates: FeatureGate, versions: list[str]) -> None:
    assert served_groups(registry(), gates)["scheduling.k8s.io"] == versions
    group = api_group(registry(), "scheduling.k8s.io", gates)
    assert group is not None
    assert [v["version"] for v in group["versions"]] == versions


def test_api_group() -> None:
    assert api_group(registry(), "apps", ON) == {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
    }


@pytest.mark.parametrize("group", ["", "batch", "example.com"])
def test_api_group_unknown_is_none(group: str) -> None:
    assert api_group(registry(), group, ON) is None


def test_core_resource_list() -> None:
    body = api_resource_list(registry(), "", "v1", ON)
    assert body is not None
    assert (body["kind"], body["apiVersion"], body["groupVersion"]) == ("APIResourceList", "v1", "v1")
    assert [r["name"] for r in body["resources"]] == [
        "events",
        "namespaces",
        "pods",
        "pods/binding",
        "pods/eviction",
        "pods/status",
    ]
    res = by_name(body["resources"])
    pods = res["pods"]
    assert {k: v for k, v in pods.items() if k != "storageVersionHash"} == {
        "name": "pods",
        "singularName": "pod",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ALL_VERBS,
        "shortNames": ["po"],
        "categories": ["all"],
    }
    assert pods["storageVersionHash"]
    assert res["pods/status"] == {
        "name": "pods/status",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get", "patch", "update"],
    }
    assert res["pods/binding"] == {
        "name": "pods/binding",
        "singularName": "",
        "namespaced": True,
        "kind": "Binding",
        "verbs": ["create"],
    }
    assert res["pods/eviction"] == {
        "name": "pods/eviction",
        "singularName": "",
        "namespaced": True,
        "group": "policy",
        "version": "v1",
        "kind": "Eviction",
        "verbs": ["create"],
    }
    assert res["namespaces"]["namespaced"] is False
    assert res["namespaces"]["verbs"] == ["create", "get", "list", "watch"]
    assert "categories" not in res["namespaces"]


def test_apps_resource_list_has_scale_in_autoscaling() -> None:
    body = api_resource_list(registry(), "apps", "v1", ON)
    assert body is not None and body["groupVersion"] == "apps/v1"
    res = by_name(body["resources"])
    assert res["statefulsets"]["shortNames"] == ["sts"]
    assert res["statefulsets/scale"] == {
        "name": "statefulsets/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert res["statefulsets/status"]["kind"] == "StatefulSet"


@pytest.mark.parametrize(
    ("group", "version", "gates", "names"),
    [
        pytest.param(
            "scheduling.k8s.io", "v1beta1", ON, ["podgroups", "podgroups/status", "workloads"], id="on"
        ),
        pytest.param("scheduling.k8s.io", "v1beta1", WORKLOAD_OFF, None, id="gate-off"),
        pytest.param("scheduling.k8s.io", "v1alpha3", COMPOSITE_OFF, None, id="composite-off"),
        pytest.param(
            "scheduling.k8s.io", "v1", WORKLOAD_OFF, ["priorityclasses"], id="ungated-version-stays"
        ),
        pytest.param("apps", "v2", ON, None, id="unknown-version"),
        pytest.param("events.k8s.io", "v1", ON, ["events"], id="shared-storage-in-own-group"),
    ],
)
def test_resource_list_respects_gates(
    group: str, version: str, gates: FeatureGate, names: list[str] | None
) -> None:
    body = api_resource_list(registry(), group, version, gates)
    if names is None:
        assert body is None
    else:
        assert body is not None
        assert [r["name"] for r in body["resources"]] == names


def test_storage_version_hash_is_stable_and_shared_with_storage_primary() -> None:
    reg = registry()
    core_events = reg.get("", "v1", "events")
    v1_events = reg.get("events.k8s.io", "v1", "events")
    pods = reg.get("", "v1", "pods")
    assert core_events is not None and v1_events is not None and pods is not None
    assert storage_version_hash(reg, v1_events) == storage_version_hash(reg, core_events)
    assert storage_version_hash(reg, pods) != storage_version_hash(reg, core_events)
    assert storage_version_hash(reg, pods) == storage_version_hash(registry(), pods)


# ---------------------------------------------------------------------------------------------
# aggregated


def test_aggregated_core_has_one_unnamed_group() -> None:
    body = aggregated_discovery(registry(), True, ON)
    assert body["kind"] == "APIGroupDiscoveryList"
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert body["metadata"] == {}
    assert len(body["items"]) == 1
    item = body["items"][0]
    assert item["metadata"] == {"name": ""}
    assert [v["version"] for v in item["versions"]] == ["v1"]
    assert item["versions"][0]["freshness"] == "Current"
    resources = {r["resource"]: r for r in item["versions"][0]["resources"]}
    assert list(resources) == ["events", "namespaces", "pods"]
    assert resources["pods"] == {
        "resource": "pods",
        "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
        "scope": "Namespaced",
        "singularResource": "pod",
        "verbs": ALL_VERBS,
        "shortNames": ["po"],
        "categories": ["all"],
        "subresources": [
            {
                "subresource": "binding",
                "responseKind": {"group": "", "version": "v1", "kind": "Binding"},
                "verbs": ["create"],
            },
            {
                "subresource": "eviction",
                "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"},
                "verbs": ["create"],
            },
            {
                "subresource": "status",
                "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
                "verbs": ["get", "patch", "update"],
            },
        ],
    }
    assert resources["namespaces"]["scope"] == "Cluster"
    assert "subresources" not in resources["namespaces"]


def test_aggregated_apis_matches_kubectl_reference_shape() -> None:
    body = aggregated_discovery(registry(), False, ON)
    assert [i["metadata"]["name"] for i in body["items"]] == ["apps", "events.k8s.io", "scheduling.k8s.io"]
    apps = body["items"][0]
    assert apps["versions"] == [
        {
            "version": "v1",
            "resources": [
                {
                    "resource": "statefulsets",
                    "responseKind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
                    "scope": "Namespaced",
                    "singularResource": "statefulset",
                    "verbs": ALL_VERBS,
                    "shortNames": ["sts"],
                    "categories": ["all"],
                    "subresources": [
                        {
                            "subresource": "scale",
                            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                            "verbs": ["get", "patch", "update"],
                        },
                        {
                            "subresource": "status",
                            "responseKind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
                            "verbs": ["get", "patch", "update"],
                        },
                    ],
                }
            ],
            "freshness": "Current",
        }
    ]


@pytest.mark.parametrize(
    ("gates", "versions", "v1beta1_resources"),
    [
        pytest.param(ON, ["v1", "v1beta1", "v1alpha3"], ["podgroups", "workloads"], id="on"),
        pytest.param(COMPOSITE_OFF, ["v1", "v1beta1"], ["podgroups", "workloads"], id="composite-off"),
        pytest.param(WORKLOAD_OFF, ["v1"], None, id="workload-off"),
    ],
)
def test_aggregated_scheduling_group_follows_gates(
    gates: FeatureGate, versions: list[str], v1beta1_resources: list[str] | None
) -> None:
    body = aggregated_discovery(registry(), False, gates)
    sched = next(i for i in body["items"] if i["metadata"]["name"] == "scheduling.k8s.io")
    assert [v["version"] for v in sched["versions"]] == versions
    if v1beta1_resources is not None:
        v1beta1 = sched["versions"][1]
        assert [r["resource"] for r in v1beta1["resources"]] == v1beta1_resources


def test_group_with_only_gated_resources_disappears() -> None:
    reg = Registry([ResourceDef("x.example.com", "v1", "Thing", "things", True, gate=COMPOSITE_POD_GROUP)])
    assert aggregated_discovery(reg, False, COMPOSITE_OFF)["items"] == []
    assert api_group_list(reg, COMPOSITE_OFF)["groups"] == []
    assert api_group(reg, "x.example.com", COMPOSITE_OFF) is None
    assert [i["metadata"]["name"] for i in aggregated_discovery(reg, False, ON)["items"]] == ["x.example.com"]


def test_aggregated_v2beta1_body() -> None:
    body = aggregated_discovery(registry(), True, ON, version="v2beta1")
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    with pytest.raises(ValueError):
        aggregated_discovery(registry(), True, ON, version="v3")


KUBECTL_DISCOVERY_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


@pytest.mark.parametrize(
    ("accept", "want"),
    [
        pytest.param(KUBECTL_DISCOVERY_ACCEPT, AGGREGATED_DISCOVERY_CONTENT_TYPE, id="kubectl"),
        pytest.param(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
            AGGREGATED_DISCOVERY_V2BETA1_CONTENT_TYPE,
            id="v2beta1-only",
        ),
        pytest.param(
            "application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io",
            AGGREGATED_DISCOVERY_CONTENT_TYPE,
            id="param-order",
        ),
        pytest.param("application/json", None, id="plain-json"),
        pytest.param("", None, id="no-accept"),
        pytest.param("*/*", None, id="wildcard"),
        pytest.param(
            "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            None,
            id="json-preferred",
        ),
        pytest.param(
            "application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            AGGREGATED_DISCOVERY_CONTENT_TYPE,
            id="q-ranks",
        ),
        pytest.param(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json",
            None,
            id="q-zero",
        ),
        pytest.param(
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json",
            None,
            id="unknown-version",
        ),
        pytest.param(
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
            None,
            id="protobuf-skipped",
        ),
    ],
)
def test_wants_aggregated(accept: str, want: str | None) -> None:
    assert wants_aggregated(accept) == want


def test_content_type_constant_is_what_kubectl_requires() -> None:
    assert (
        AGGREGATED_DISCOVERY_CONTENT_TYPE
        == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
