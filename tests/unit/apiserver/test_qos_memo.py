"""``pod_qos_class`` remembered by the pod's resources: the same class as computing it afresh."""

from __future__ import annotations

import random
from typing import Any

import pytest

import apiserver.api.podresources as pr

QUANTITIES: list[Any] = ["0", "1", "1000m", "500m", "1Gi", "1024Mi", 1, 0, 1.0, None, "x", True]


def _rl(rnd: random.Random) -> dict[str, Any] | None:
    if rnd.random() < 0.2:
        return None
    return {
        k: rnd.choice(QUANTITIES) for k in rnd.sample(["cpu", "memory", "example.com/gpu"], rnd.randint(0, 3))
    }


def _pod(rnd: random.Random) -> dict[str, Any]:
    def res() -> dict[str, Any]:
        return {k: v for k in ("requests", "limits") if (v := _rl(rnd)) is not None}

    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "resources": res()} for i in range(rnd.randint(1, 2))],
        "initContainers": [{"name": "i", "resources": res()}] if rnd.random() < 0.3 else [],
    }
    if rnd.random() < 0.2:
        spec["resources"] = res()
    return {"metadata": {"name": f"p{rnd.random()}"}, "spec": spec}


@pytest.mark.parametrize("seed", range(3))
def test_remembered_classes_equal_computed_ones(seed: int) -> None:
    rnd = random.Random(seed)
    pr._QOS_BY_RESOURCES.clear()
    pods = [_pod(rnd) for _ in range(200)]
    for p in pods + pods:  # the second round is answered from memory
        assert pr.pod_qos_class(p) == pr._compute_qos(p["spec"])
    assert pr._QOS_BY_RESOURCES


def test_a_null_keeps_the_pod_out_of_memory() -> None:
    pr._QOS_BY_RESOURCES.clear()
    pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": None}}}]}}
    assert pr.pod_qos_class(pod) == "BestEffort"
    assert not pr._QOS_BY_RESOURCES


def test_a_pod_without_pod_level_resources_is_remembered() -> None:
    pr._QOS_BY_RESOURCES.clear()
    pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}
    assert pr.pod_qos_class(pod) == "Burstable"
    assert len(pr._QOS_BY_RESOURCES) == 1
