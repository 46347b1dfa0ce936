"""Strategic merge patch against the served schema: every strategy and directive, and the errors.

Expected results follow apimachinery's ``pkg/util/strategicpatch`` (``StrategicMergeMapPatch``),
including its ordering rules; the patches are the shapes kubectl sends.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.errors import StatusError
from apiserver.openapi import schema
from apiserver.patch.strategic import go_format, strategic_merge

STS = schema.for_gvk("apps", "v1", "StatefulSet")
POD = schema.for_gvk("", "v1", "Pod")
DEPLOY = schema.for_gvk("apps", "v1", "Deployment")


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def sts_spec(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": spec}


def container(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, **fields}


CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any], dict[str, Any] | None, dict[str, Any]]] = [
    # (id, schema, original, patch, expected)
    (
        "map merge keeps untouched keys",
        POD,
        {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}},
        {"metadata": {"labels": {"b": "3", "c": "4"}}},
        {"metadata": {"name": "p", "labels": {"a": "1", "b": "3", "c": "4"}}},
    ),
    (
        "null deletes a key",
        POD,
        {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}},
        {"metadata": {"labels": {"a": None, "zzz": None}}},
        {"metadata": {"name": "p", "labels": {"b": "2"}}},
    ),
    (
        "containers merge by name",
        POD,
        pod(containers=[container("a", image="a:1"), container("b", image="b:1")]),
        {"spec": {"containers": [container("b", image="b:2")]}},
        pod(containers=[container("a", image="a:1"), container("b", image="b:2")]),
    ),
    (
        "a new container without setElementOrder goes first (apimachinery ordering)",
        POD,
        pod(containers=[container("a", image="a:1")]),
        {"spec": {"containers": [container("c", image="c:1")]}},
        pod(containers=[container("c", image="c:1"), container("a", image="a:1")]),
    ),
    (
        "env merges by name inside a merged container",
        POD,
        pod(containers=[container("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])]),
        {"spec": {"containers": [container("a", env=[{"name": "Y", "value": "3"}])]}},
        pod(containers=[container("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}])]),
    ),
    (
        "env item field deleted with null",
        POD,
        pod(containers=[container("a", env=[{"name": "X", "value": "1"}])]),
        {
            "spec": {
                "containers": [
                    container(
                        "a",
                        env=[
                            {
                                "name": "X",
                                "value": None,
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                            }
                        ],
                    )
                ]
            }
        },
        pod(
            containers=[
                container("a", env=[{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
            ]
        ),
    ),
    (
        "tolerations have no merge key and are replaced",
        POD,
        pod(tolerations=[{"key": "a", "operator": "Exists"}]),
        {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
        pod(tolerations=[{"key": "b", "operator": "Exists"}]),
    ),
    (
        "container args (atomic) are replaced",
        POD,
        pod(containers=[container("a", args=["x", "y"])]),
        {"spec": {"containers": [container("a", args=["z"])]}},
        pod(containers=[container("a", args=["z"])]),
    ),
    (
        "finalizers union, new items first",
        POD,
        {"metadata": {"name": "p", "finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["c", "a"]}},
        {"metadata": {"name": "p", "finalizers": ["c", "a", "b"]}},
    ),
    (
        "deleteFromPrimitiveList removes finalizers",
        POD,
        {"metadata": {"name": "p", "finalizers": ["a", "b", "c"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zzz"]}},
        {"metadata": {"name": "p", "finalizers": ["a", "c"]}},
    ),
    (
        "deleteFromPrimitiveList on a missing list is a no-op",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
        {"metadata": {"name": "p"}},
    ),
    (
        "setElementOrder reorders a merged list",
        POD,
        pod(containers=[container("a", image="a:1"), container("b", image="b:1")]),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}],
                "containers": [container("c", image="c:1")],
            }
        },
        pod(
            containers=[container("b", image="b:1"), container("c", image="c:1"), container("a", image="a:1")]
        ),
    ),
    (
        "setElementOrder on a primitive list",
        POD,
        {"metadata": {"name": "p", "finalizers": ["a", "b"]}},
        {"metadata": {"$setElementOrder/finalizers": ["b", "c", "a"], "finalizers": ["c"]}},
        {"metadata": {"name": "p", "finalizers": ["b", "c", "a"]}},
    ),
    (
        "setElementOrder keeps server-only items in stored order",
        POD,
        pod(containers=[container("a"), container("s"), container("b")]),
        {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}},
        pod(containers=[container("s"), container("b"), container("a")]),
    ),
    (
        "setElementOrder with a list the original lacks",
        POD,
        pod(),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                "containers": [
                    container("b", image="b:1"),
                    {"$patch": "delete", "name": "x"},
                    container("a"),
                ],
            }
        },
        pod(containers=[container("b", image="b:1"), container("a")]),
    ),
    (
        "$patch delete on a list item",
        POD,
        pod(containers=[container("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])]),
        {"spec": {"containers": [container("a", env=[{"$patch": "delete", "name": "X"}])]}},
        pod(containers=[container("a", env=[{"name": "Y", "value": "2"}])]),
    ),
    (
        "$patch replace as a list element replaces the merge list",
        POD,
        pod(containers=[container("a"), container("b")]),
        {"spec": {"containers": [{"$patch": "replace"}, container("c", image="c:1")]}},
        pod(containers=[container("c", image="c:1")]),
    ),
    (
        "$patch merge as a list element is the default merge",
        POD,
        pod(containers=[container("a", image="a:1")]),
        {"spec": {"containers": [{"$patch": "merge"}, container("a", image="a:2")]}},
        pod(containers=[container("a", image="a:2")]),
    ),
    (
        "$patch replace on a map",
        POD,
        {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}},
        {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
        {"metadata": {"name": "p", "labels": {"c": "3"}}},
    ),
    (
        "$patch delete on a map empties it",
        POD,
        {"metadata": {"name": "p", "labels": {"a": "1"}}},
        {"metadata": {"labels": {"$patch": "delete"}}},
        {"metadata": {"name": "p", "labels": {}}},
    ),
    (
        "$patch merge on a map merges",
        POD,
        {"metadata": {"name": "p", "labels": {"a": "1"}}},
        {"metadata": {"labels": {"$patch": "merge", "b": "2"}}},
        {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}},
    ),
    (
        "$retainKeys clears keys not listed (Deployment strategy)",
        DEPLOY,
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        {"spec": {"strategy": {"type": "Recreate"}}},
    ),
    (
        "$retainKeys on a merged list item (volumes are merge,retainKeys)",
        POD,
        pod(volumes=[{"name": "v", "emptyDir": {}}]),
        {
            "spec": {
                "volumes": [{"$retainKeys": ["name", "configMap"], "name": "v", "configMap": {"name": "cm"}}]
            }
        },
        pod(volumes=[{"name": "v", "configMap": {"name": "cm"}}]),
    ),
    (
        "ownerReferences merge by uid",
        POD,
        {"metadata": {"name": "p", "ownerReferences": [{"uid": "1", "name": "a"}]}},
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}]}},
        {
            "metadata": {
                "name": "p",
                "ownerReferences": [{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}],
            }
        },
    ),
    (
        "spec.scheduling.resourceClaims merge by name",
        STS,
        sts_spec(
            scheduling={
                "resourceClaims": [
                    {"name": "a", "resourceClaimTemplateName": "t1"},
                    {"name": "b", "resourceClaimTemplateName": "t2"},
                ]
            }
        ),
        {
            "spec": {
                "scheduling": {
                    "$setElementOrder/resourceClaims": [{"name": "a"}, {"name": "b"}],
                    "resourceClaims": [{"name": "b", "resourceClaimTemplateName": "t3"}],
                }
            }
        },
        sts_spec(
            scheduling={
                "resourceClaims": [
                    {"name": "a", "resourceClaimTemplateName": "t1"},
                    {"name": "b", "resourceClaimTemplateName": "t3"},
                ]
            }
        ),
    ),
    (
        "spec.scheduling policy switch, as kubectl apply sends it",
        STS,
        sts_spec(scheduling={"schedulingPolicy": {"gang": {}}}),
        {"spec": {"scheduling": {"schedulingPolicy": {"basic": {}, "gang": None}}}},
        sts_spec(scheduling={"schedulingPolicy": {"basic": {}}}),
    ),
    (
        "unknown fields get JSON merge semantics (lists replaced)",
        POD,
        {"metadata": {"name": "p"}, "extra": {"list": [1, 2], "m": {"a": 1}}},
        {"extra": {"list": [3], "m": {"b": 2}}},
        {"metadata": {"name": "p"}, "extra": {"list": [3], "m": {"a": 1, "b": 2}}},
    ),
    (
        "no schema at all is JSON merge patch",
        None,
        {"a": {"b": 1, "c": [1]}, "d": 1},
        {"a": {"b": None, "c": [2]}, "e": 2},
        {"a": {"c": [2]}, "d": 1, "e": 2},
    ),
    (
        "new values are stored without nulls and directives",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"labels": {"a": "1", "b": None}}, "spec": {"containers": [{"name": "a", "x": None}]}},
        {"metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"containers": [{"name": "a"}]}},
    ),
    (
        "finalizers added and deleted in one patch",
        POD,
        {"metadata": {"name": "p", "finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}},
        {"metadata": {"name": "p", "finalizers": ["c", "b"]}},
    ),
    (
        "$retainKeys tolerates nulls for keys it drops",
        DEPLOY,
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": None}}},
        {"spec": {"strategy": {"type": "Recreate"}}},
    ),
    (
        "$patch delete on a map the original lacks stores nothing",
        POD,
        {"metadata": {"name": "p"}},
        {"metadata": {"labels": {"$patch": "delete"}}},
        {"metadata": {"name": "p"}},
    ),
    (
        "$patch replace at the top level replaces the object",
        POD,
        {"metadata": {"name": "p"}, "spec": {"nodeName": "n"}},
        {"$patch": "replace", "metadata": {"name": "q"}},
        {"metadata": {"name": "q"}},
    ),
    (
        "a value of another type replaces the stored one",
        POD,
        {"metadata": {"name": "p"}, "spec": {"containers": "oops"}},
        {"spec": {"containers": [container("a")]}},
        {"metadata": {"name": "p"}, "spec": {"containers": [container("a")]}},
    ),
]


@pytest.mark.parametrize(("name", "node", "original", "patch", "expected"), CASES, ids=[c[0] for c in CASES])
def test_strategic_merge(
    name: str,
    node: dict[str, Any] | None,
    original: dict[str, Any],
    patch: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    assert strategic_merge(original, patch, node) == expected


def test_inputs_are_not_modified() -> None:
    original = pod(containers=[container("a", env=[{"name": "X", "value": "1"}])])
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "a"}],
            "containers": [container("a", env=[{"$patch": "delete", "name": "X"}])],
        }
    }
    original_copy, patch_copy = repr(original), repr(patch)
    result = strategic_merge(original, patch, POD)
    assert repr(original) == original_copy and repr(patch) == patch_copy
    result["spec"]["containers"][0]["name"] = "changed"
    assert original["spec"]["containers"][0]["name"] == "a"


ERRORS: list[tuple[str, dict[str, Any], dict[str, Any], int, str]] = [
    (
        "unknown $patch on a map",
        {"metadata": {"name": "p", "labels": {"a": "1"}}},
        {"metadata": {"labels": {"$patch": "frobnicate"}}},
        422,
        "unknown patch type: frobnicate in map: map[$patch:frobnicate]",
    ),
    (
        "unknown $patch on a list item",
        pod(containers=[container("a")]),
        {"spec": {"containers": [{"$patch": "frobnicate", "name": "a"}]}},
        422,
        "unknown patch type: frobnicate in map: map[$patch:frobnicate name:a]",
    ),
    (
        "list item without the merge key",
        pod(containers=[container("a")]),
        {"spec": {"containers": [{"image": "nginx"}]}},
        422,
        "map: map[image:nginx] does not contain declared merge key: name",
    ),
    (
        "$patch delete without the merge key",
        pod(containers=[container("a")]),
        {"spec": {"containers": [{"$patch": "delete"}]}},
        422,
        "does not contain declared merge key: name",
    ),
    (
        "$retainKeys not a list",
        {"spec": {"strategy": {"type": "Recreate"}}},
        {"spec": {"strategy": {"$retainKeys": "type"}}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "patch key missing from $retainKeys",
        {"spec": {"strategy": {"type": "Recreate"}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}},
        422,
        "patch content doesn't match retainKeys list",
    ),
    (
        "$deleteFromPrimitiveList value not a list",
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
        400,
        "invalid patch format of primitive list",
    ),
    (
        "$deleteFromPrimitiveList without a field",
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"$deleteFromPrimitiveList": ["a"]}},
        400,
        "invalid patch format of primitive list",
    ),
    (
        "$setElementOrder without a field",
        pod(containers=[container("a")]),
        {"spec": {"$setElementOrder": [{"name": "a"}]}},
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "patch list not following $setElementOrder",
        pod(containers=[container("a"), container("b")]),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                "containers": [container("b"), container("a")],
            }
        },
        422,
        "doesn't match $setElementOrder list",
    ),
    (
        "lists of lists",
        {"metadata": {"finalizers": ["a"]}},
        {"metadata": {"finalizers": [["b"]]}},
        422,
        "lists of lists are not supported",
    ),
]


@pytest.mark.parametrize(("name", "original", "patch", "code", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_strategic_merge_errors(
    name: str, original: dict[str, Any], patch: dict[str, Any], code: int, message: str
) -> None:
    node = DEPLOY if "strategy" in str(patch) else POD
    with pytest.raises(StatusError) as info:
        strategic_merge(original, patch, node)
    assert info.value.code == code
    assert message in info.value.message
    assert info.value.reason == ("BadRequest" if code == 400 else "Invalid")


def test_patch_must_be_an_object() -> None:
    with pytest.raises(StatusError) as info:
        strategic_merge({}, [], POD)  # type: ignore[arg-type]
    assert info.value.code == 400


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ({"b": 1, "a": [True, None]}, "map[a:[true <nil>] b:1]"),
        (1.0, "1"),
        ("x", "x"),
    ],
)
def test_go_format(value: Any, rendered: str) -> None:
    assert go_format(value) == rendered
