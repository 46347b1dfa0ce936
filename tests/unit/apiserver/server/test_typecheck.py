"""Typed decoding: a body value of the wrong JSON type is a 400 like kube's decoder, never a 500."""

from __future__ import annotations

import copy

import pytest

from apiserver import errors
from apiserver.client.interface import PODS, STATEFULSETS

pytestmark = pytest.mark.anyio

STS = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "x", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"a": "b"}},
        "serviceName": "x",
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
    },
}


def sts_with(path: list[str], value: object) -> dict:
    obj = copy.deepcopy(STS)
    cur = obj
    for p in path[:-1]:
        cur = cur.setdefault(p, {})
    cur[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (
            ["spec", "replicas"],
            "3",
            "cannot unmarshal string into Go struct field StatefulSetSpec.spec.replicas of type int32",
        ),
        (["spec", "ordinals"], {"start": "a"}, "StatefulSetOrdinals.spec.ordinals.start of type int32"),
        (
            ["spec", "scheduling"],
            {"schedulingConstraints": {"topology": [{"key": 5}]}},
            "topology[0].key of type string",
        ),
        (
            ["spec", "scheduling"],
            {"resourceClaims": [{"name": "a", "resourceClaimName": True}]},
            "unmarshal bool",
        ),
        (
            ["spec", "template"],
            "nope",
            "cannot unmarshal string into Go struct field StatefulSetSpec.spec.template",
        ),
        (["metadata", "labels"], {"a": 1}, "metadata.labels[a] of type string"),
    ],
)
async def test_wrong_types_are_400(client, path: list[str], value: object, fragment: str) -> None:
    with pytest.raises(errors.StatusError) as e:
        await client.create(STATEFULSETS, sts_with(path, value))
    assert e.value.code == 400 and e.value.reason == "BadRequest"
    assert e.value.message.startswith(
        'StatefulSet in version "v1" cannot be handled as a StatefulSet: json: '
    )
    assert fragment in e.value.message


async def test_quantities_int_or_string_and_null_are_accepted(client) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "annotations": None},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": 1, "memory": "1Gi"}},
                    "ports": [{"containerPort": 80}],
                    "readinessProbe": {"httpGet": {"port": "http"}},
                }
            ]
        },
    }
    out = await client.create(PODS, pod)
    assert out["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"


async def test_patch_results_are_checked_too(client) -> None:
    await client.create(STATEFULSETS, STS)
    with pytest.raises(errors.StatusError) as e:
        await client.patch(STATEFULSETS, "x", {"spec": {"replicas": [1]}}, "default")
    assert e.value.code == 400
    assert (await client.get(STATEFULSETS, "x", "default"))["spec"]["replicas"] == 2
