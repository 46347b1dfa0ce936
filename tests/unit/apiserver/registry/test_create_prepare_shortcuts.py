"""A create's preparation shortcuts (session 18, ``createvalid``) against the general steps.

* the apps workloads' initial status is a shallow copy of their flat ``initial_status``: equal
  to the deep copy it replaces, and never shared between two created objects or with the class;
* a pod without a (truthy) ``spec.affinity`` skips ``mutate_pod_affinity``, which could only
  have found nothing to resolve: random pods, with and without affinity terms, come out of
  ``prepare_for_create`` exactly as out of the steps it always ran before.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from apiserver.registry.strategies import apps, podspec
from apiserver.registry.strategies.core import pod as pod_strategy
from apiserver.registry.strategies.core.pod import (
    PodStrategy,
    mutate_pod_affinity,
    scheduling_gated_condition,
)
from apiserver.rest.strategy import StrategyContext
from featuregates import FeatureGate

WORKLOADS = [
    apps.StatefulSetStrategy,
    apps.DeploymentStrategy,
    apps.ReplicaSetStrategy,
    apps.DaemonSetStrategy,
]


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def test_every_workload_initial_status_is_flat() -> None:
    """The shallow copy is a private copy only for a map of immutable scalars: every subclass
    (the known four and any added later) keeps to that."""
    found = _subclasses(apps._WorkloadStrategy)
    assert set(WORKLOADS) <= set(found)
    for cls in found:
        status = cls.initial_status
        assert type(status) is dict
        assert all(type(k) is str and type(v) in (int, str, bool) for k, v in status.items()), cls


@pytest.mark.parametrize("cls", WORKLOADS)
def test_initial_status_is_a_private_copy(cls: type) -> None:
    strategy = cls()
    ctx = StrategyContext(gates=FeatureGate())
    made = []
    for _ in range(2):
        obj: dict[str, Any] = {"metadata": {"name": "x"}, "spec": {"template": {"spec": {}}}}
        strategy.prepare_for_create(ctx, obj)
        assert obj["status"] == copy.deepcopy(cls.initial_status)
        assert obj["status"] is not cls.initial_status
        made.append(obj["status"])
    snapshot = copy.deepcopy(cls.initial_status)
    made[0]["replicas"] = 99
    assert made[1] == snapshot and cls.initial_status == snapshot


_TERM = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone", "matchLabelKeys": ["app"]}
_AFFINITIES: list[Any] = [
    None,
    {},
    [],
    "",
    0,
    False,
    "odd",
    [_TERM],
    {"nodeAffinity": {}},
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
    {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": _TERM}]
        }
    },
    {"podAffinity": {}, "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM, {}]}},
]


def _general_prepare(ctx: StrategyContext, obj: dict[str, Any]) -> None:
    """``PodStrategy.prepare_for_create`` as it was before the shortcut (every step, always)."""
    spec = pod_strategy._spec(obj)
    podspec.drop_disabled_pod_spec_fields(spec, None, ctx.gates)
    obj["status"] = {"phase": "Pending", "qosClass": podspec.pod_qos_class(obj)}
    if podspec.as_list(spec.get("schedulingGates")):
        obj["status"]["conditions"] = [scheduling_gated_condition()]
    mutate_pod_affinity(obj)


@pytest.mark.parametrize("seed", range(3))
def test_pod_prepare_equals_the_general_steps(seed: int) -> None:
    rnd = random.Random(seed)
    ctx = StrategyContext(gates=FeatureGate())
    skipped = 0
    for _ in range(400):
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
        if rnd.random() < 0.8:
            spec["affinity"] = copy.deepcopy(rnd.choice(_AFFINITIES))
        if rnd.random() < 0.2:
            spec["schedulingGates"] = [{"name": "g"}]
        labels = {"app": rnd.choice(["a", "b"])} if rnd.random() < 0.7 else None
        pod: dict[str, Any] = {"metadata": {"name": "p", "labels": labels}, "spec": spec}
        if rnd.random() < 0.1:
            pod["metadata"] = rnd.choice([None, {}, "odd"])
        want = copy.deepcopy(pod)
        _general_prepare(ctx, want)
        PodStrategy().prepare_for_create(ctx, pod)
        assert pod == want
        skipped += not spec.get("affinity")
    assert skipped > 50
