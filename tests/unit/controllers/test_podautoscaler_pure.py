"""kube's HPA replica calculation and behavior, on plain objects."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controllers.podautoscaler.behavior import Recommendation, ScaleEvent, normalize
from controllers.podautoscaler.replicas import MetricsError, replicas_for


def pod(name: str, cpu: str = "100m", ready: bool = True, phase: str = "Running") -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def metric(name: str, cpu: str) -> dict:
    return {"metadata": {"name": name}, "containers": [{"name": "c", "usage": {"cpu": cpu}}]}


def test_utilization_ratio_and_tolerance() -> None:
    pods = [pod("a"), pod("b")]
    got = replicas_for(2, pods, [metric("a", "150m"), metric("b", "150m")], "cpu", utilization=50)
    assert (got.replicas, got.utilization) == (6, 150)
    # within the 10 % tolerance: no change
    assert (
        replicas_for(2, pods, [metric("a", "52m"), metric("b", "53m")], "cpu", utilization=50).replicas == 2
    )
    assert (
        replicas_for(
            4, [pod(n) for n in "abcd"], [metric(n, "10m") for n in "abcd"], "cpu", utilization=50
        ).replicas
        == 1
    )


def test_missing_metrics_and_unready_pods_dampen_the_change() -> None:
    # scale down with a pod without metrics: it is taken as using 100 % of its request
    pods = [pod("a"), pod("b")]
    got = replicas_for(2, pods, [metric("a", "10m")], "cpu", utilization=50)
    assert got.replicas == 2  # (10 + 100) / 200 = 55 % -> within tolerance of 50 %
    # scale up with an unready pod: it counts as using nothing
    pods = [pod("a"), pod("b", ready=False)]
    got = replicas_for(2, pods, [metric("a", "100m")], "cpu", utilization=50)
    assert got.replicas == 2  # 100 / 200 = 50 %: unchanged, where a alone would say 2x
    with pytest.raises(MetricsError, match="missing request for cpu"):
        replicas_for(
            1,
            [pod("a", cpu="0")]
            and [
                {
                    "metadata": {"name": "a"},
                    "spec": {"containers": [{"name": "c"}]},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                }
            ],
            [metric("a", "1")],
            "cpu",
            utilization=50,
        )
    got = replicas_for(
        2,
        [pod("a"), pod("b")],
        [metric("a", "300m"), metric("b", "300m")],
        "cpu",
        average_value=Fraction(1, 10),
    )
    assert got.replicas == 6


def test_behavior_stabilization_policies_and_bounds() -> None:
    spec = {"minReplicas": 1, "maxReplicas": 10}
    # scale down is held by the 300 s window of higher recommendations
    history = [Recommendation(100.0, 8)]
    assert normalize(8, 2, spec, history, [], 200.0) == (8, "", "ScaleDownStabilized")
    assert normalize(8, 2, spec, history, [], 401.0)[0] == 2
    # scale up: max(+4 pods, +100 %) per 15 s
    assert normalize(2, 9, spec, [], [], 0.0) == (6, "ScaleUpLimit", "")
    # 2 -> 6 within this period already: the period started at 2, so 6 is the most it allows
    assert normalize(6, 9, spec, [], [ScaleEvent(-5.0, 4)], 0.0) == (6, "ScaleUpLimit", "")
    assert normalize(2, 30, {"minReplicas": 1, "maxReplicas": 5}, [], [], 0.0) == (5, "TooManyReplicas", "")
    fast_down = {
        "minReplicas": 3,
        "maxReplicas": 10,
        "behavior": {
            "scaleDown": {
                "stabilizationWindowSeconds": 0,
                "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
            }
        },
    }
    assert normalize(8, 1, fast_down, [], [], 0.0) == (3, "TooFewReplicas", "")
