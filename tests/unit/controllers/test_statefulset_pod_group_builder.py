"""The KEP-6277 hook instantiates a PodGroup from the Workload it is given without copying that
Workload first (``workload.pod_group_builder``): the PodGroup must be byte for byte what the
general path (``new_builder_from_existing_workload``, which copies) builds, a missing template
must fail alike, and the Workload must come out unchanged and share nothing with the PodGroup
(it is a create response or the cache's object, shared read-only).
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.workloadbuilder import BuildError, BuildOptions, new_builder_from_existing_workload
from apiserver.workloadbuilder.statefulset import statefulset_controller_ref
from controllers.statefulset.compiled import compile_workload
from controllers.statefulset.workload import pod_group_builder
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, FeatureGate


def _scheduling(rng: random.Random) -> Obj:
    sched: Obj = {}
    policy = rng.choice(["gang", "gang-min", "basic", "none"])
    if policy == "gang":
        sched["schedulingPolicy"] = {"gang": {}}
    elif policy == "gang-min":
        sched["schedulingPolicy"] = {"gang": {"minCount": rng.choice([1, 2, 5])}}
    elif policy == "basic":
        sched["schedulingPolicy"] = {"basic": {}}
    if rng.random() < 0.5:
        keys = rng.sample(
            ["topology.kubernetes.io/zone", "rack", "kubernetes.io/hostname"], rng.randrange(1, 3)
        )
        sched["schedulingConstraints"] = {"topology": [{"key": k} for k in keys]}
    if rng.random() < 0.4:
        sched["disruptionMode"] = rng.choice([{"single": {}}, {"all": {}}])
    if rng.random() < 0.4:
        sched["resourceClaims"] = [
            {"name": f"c{i}", "resourceClaimTemplateName": f"t{i}"} for i in range(rng.randrange(1, 3))
        ]
    return sched


def _sts(rng: random.Random, i: int) -> Obj:
    name = f"web-{i}"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{i}"},
        "spec": {
            "replicas": rng.randrange(1, 6),
            "selector": {"matchLabels": {"app": name}},
            "template": {"spec": {"containers": [{"name": "c", "image": "pause"}]}},
            "scheduling": _scheduling(rng),
        },
    }


def _as_stored(wl: Obj, i: int) -> Obj:
    """What the API answers for a created Workload: server-set metadata beside the spec."""
    wl["metadata"].update(
        uid=f"wl-uid-{i}",
        resourceVersion=str(100 + i),
        creationTimestamp="2026-01-01T00:00:00Z",
        managedFields=[
            {
                "manager": "statefulset-controller",
                "operation": "Update",
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:podGroupTemplates": {}}},
            }
        ],
    )
    return wl


def _touch_everything(obj: Any) -> None:
    """Change every dict and list inside ``obj`` (anything shared would show in the Workload)."""
    if isinstance(obj, dict):
        for v in list(obj.values()):
            _touch_everything(v)
        obj["touched"] = True
    elif isinstance(obj, list):
        for v in list(obj):
            _touch_everything(v)
        obj.append("touched")


def _build(builder: Any, name: str, template: str) -> bytes | str:
    try:
        return orjson.dumps(builder.new_pod_group(name, template))
    except BuildError as e:
        return f"BuildError: {e}"


@pytest.mark.parametrize("seed", range(4))
def test_the_pod_group_is_the_general_paths_and_the_workload_is_untouched(seed: int) -> None:
    rng = random.Random(seed)
    gates = FeatureGate().with_overrides({DRA_WORKLOAD_RESOURCE_CLAIMS: True})
    for i in range(150):
        sts = _sts(rng, i)
        wl = _as_stored(compile_workload(sts, gates), i)
        before = orjson.dumps(wl)
        owner = statefulset_controller_ref(sts)
        template = rng.choice([sts["metadata"]["name"], sts["metadata"]["name"], "missing"])
        name = f"pg-{i}"
        general = _build(new_builder_from_existing_workload(wl, BuildOptions(owner=owner)), name, template)
        assert _build(pod_group_builder(wl, owner), name, template) == general
        assert orjson.dumps(wl) == before
        if template != "missing":
            pg = pod_group_builder(wl, owner).new_pod_group(name, template)
            _touch_everything(pg)
            assert orjson.dumps(wl) == before
            assert orjson.dumps(owner) == orjson.dumps(statefulset_controller_ref(sts))
