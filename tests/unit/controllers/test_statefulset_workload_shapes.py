"""The KEP-6277 hook's compile of a Workload once per scheduling shape (controllers/statefulset/compiled.py).

Every Workload :class:`WorkloadShapes` builds — first compile of a shape or a later set of the
same shape — must be byte for byte (key order included) what the general path builds from
scratch for that set; a shape that fails to compile must fail the same way every time.
"""

from __future__ import annotations

import random

import orjson
import pytest

from apiserver.api.types import Obj
from apiserver.workloadbuilder import BuildError
from controllers.statefulset.compiled import WorkloadShapes, compile_workload
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, STATEFULSET_WORKLOAD_USER_MIN_COUNT, FeatureGate


def _gates(claims: bool, user_min: bool) -> FeatureGate:
    return FeatureGate().with_overrides(
        {DRA_WORKLOAD_RESOURCE_CLAIMS: claims, STATEFULSET_WORKLOAD_USER_MIN_COUNT: user_min}
    )


def _scheduling(rng: random.Random) -> object:
    choice = rng.randrange(9)
    if choice == 0:
        return {}
    if choice == 1:
        return None  # not opted in: compiles to Basic all the same
    sched: Obj = {}
    policy = rng.choice(["gang", "gang-min", "basic", "none", "both"])
    if policy == "gang":
        sched["schedulingPolicy"] = {"gang": {}}
    elif policy == "gang-min":
        sched["schedulingPolicy"] = {"gang": {"minCount": rng.choice([1, 2, 5, 0])}}
    elif policy == "basic":
        sched["schedulingPolicy"] = {"basic": {}}
    elif policy == "both":
        sched["schedulingPolicy"] = {"basic": {}, "gang": {}}
    if rng.random() < 0.4:
        keys = rng.sample(
            ["topology.kubernetes.io/zone", "rack", "kubernetes.io/hostname"], rng.randrange(0, 3)
        )
        sched["schedulingConstraints"] = {"topology": [{"key": k} for k in keys]}
    if rng.random() < 0.3:
        sched["disruptionMode"] = rng.choice([{"single": {}}, {"all": {}}, {}])
    if rng.random() < 0.3:
        sched["resourceClaims"] = [
            {"name": f"c{i}", "resourceClaimTemplateName": f"t{i}"} for i in range(rng.randrange(1, 3))
        ]
    return sched


def _sts(rng: random.Random, name: str, uid: str, shape: tuple[object, object, object]) -> Obj:
    scheduling, priority_class, replicas = shape
    pod_spec: Obj = {"containers": [{"name": "c", "image": "pause"}]}
    if priority_class is not None:
        pod_spec["priorityClassName"] = priority_class
    spec: Obj = {"selector": {"matchLabels": {"app": name}}, "template": {"spec": pod_spec}}
    if replicas is not None:
        spec["replicas"] = replicas
    if scheduling is not None:
        spec["scheduling"] = scheduling
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": rng.choice(["ns-a", "ns-b"]), "uid": uid},
        "spec": spec,
    }


def _general(sts: Obj, gates: FeatureGate) -> bytes | str:
    try:
        return orjson.dumps(compile_workload(sts, gates))
    except BuildError as e:
        return f"BuildError: {e}"


def _memo(shapes: WorkloadShapes, sts: Obj, gates: FeatureGate) -> bytes | str:
    try:
        return orjson.dumps(shapes.workload(sts, gates))
    except BuildError as e:
        return f"BuildError: {e}"


@pytest.mark.parametrize("seed", range(6))
def test_every_workload_from_a_kept_shape_equals_a_fresh_compile(seed: int) -> None:
    rng = random.Random(seed)
    shapes = WorkloadShapes()
    pool = [
        (_scheduling(rng), rng.choice([None, "high", "", 7]), rng.choice([None, 0, 1, 3, 1000]))
        for _ in range(8)
    ]
    gate_views = [_gates(c, u) for c in (False, True) for u in (False, True)]
    for i in range(300):
        gates = rng.choice(gate_views)
        sts = _sts(
            rng, rng.choice([f"set-{i}", "s", "x" * 250]), f"uid-{rng.randrange(10**6)}", rng.choice(pool)
        )
        assert _memo(shapes, sts, gates) == _general(sts, gates)
    assert shapes.hits > 0


def test_sets_of_one_shape_share_the_compile_and_differ_in_identity_only() -> None:
    gates = FeatureGate()
    shapes = WorkloadShapes()
    rng = random.Random(1)
    shape = ({"schedulingPolicy": {"gang": {}}}, None, 3)
    first = shapes.workload(_sts(rng, "g0", "u0", shape), gates)
    second = shapes.workload(_sts(rng, "g1", "u1", shape), gates)
    assert (len(shapes), shapes.hits) == (1, 1)
    assert second["spec"]["podGroupTemplates"] == [
        {"name": "g1", "schedulingPolicy": {"gang": {"minCount": 3}}}
    ]
    assert first["spec"]["podGroupTemplates"][0]["name"] == "g0"  # the first set's Workload is its own
    assert second["spec"]["controllerRef"] == {"apiGroup": "apps", "kind": "StatefulSet", "name": "g1"}
    assert second["metadata"]["ownerReferences"][0]["uid"] == "u1"
    # another replica count is another shape (the gang minCount)
    shapes.workload(_sts(rng, "g2", "u2", (shape[0], None, 5)), gates)
    assert (len(shapes), shapes.hits) == (2, 1)


def test_a_shape_that_fails_to_compile_is_not_kept() -> None:
    shapes = WorkloadShapes()
    sts = _sts(random.Random(2), "", "u", ({"schedulingPolicy": {"gang": {}}}, None, 3))
    for _ in range(2):
        with pytest.raises(BuildError):
            shapes.workload(sts, FeatureGate())
    assert len(shapes) == 0


def test_the_memo_stays_bounded() -> None:
    shapes = WorkloadShapes(max_shapes=4)
    rng = random.Random(3)
    for replicas in range(1, 20):
        shapes.workload(_sts(rng, f"s{replicas}", "u", ({}, None, replicas)), FeatureGate())
        assert len(shapes) <= 4
