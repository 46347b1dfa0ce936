"""Random clusters and gang sets for the tests that place gangs through the PodGroup search and
compare two ways of keeping the cache (kept winners, the submit's shared assume)."""

from __future__ import annotations

import random
from typing import Any

from featuregates import FeatureGate
from scheduler.cache import Cache, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.nodeinfo import compile_selector
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.testing import make_node, make_pod


def zoned_nodes(r: random.Random, counts: list[int]) -> list[dict[str, Any]]:
    """One of ``counts`` nodes, each with 2, 4 or 8 cpu, a hostname label and one of three zones."""
    return [
        make_node(
            f"n{i:03}",
            cpu=str(r.choice([2, 4, 8])),
            labels={"kubernetes.io/hostname": f"n{i:03}", "topology.kubernetes.io/zone": f"z{i % 3}"},
        )
        for i in range(r.choice(counts))
    ]


def gang_set(app: str, size: int, cpu: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A StatefulSet ``app``'s ``size`` identical pods requesting ``cpu`` each, and their gang
    PodGroup of ``minCount: size``."""
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": app, "uid": app, "controller": True}]
    pods = []
    for i in range(size):
        p = make_pod(f"{app}-{i}", uid=f"{app}-u{i}", labels={"app": app}, requests={"cpu": cpu})
        p["metadata"]["ownerReferences"] = owner
        p["spec"]["schedulingGroup"] = {"podGroupName": app}
        pods.append(p)
    group_obj = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
    }
    return pods, group_obj


def app_selector(pod: Any) -> Any:
    """Default spreading's selector for a gang set's pod: its ``app`` label."""
    return compile_selector({"matchLabels": {"app": pod["metadata"]["labels"]["app"]}})


def seeded_scheduler(seed: int, nodes: list[Any]) -> tuple[Cache, Snapshot, Framework, PodGroupAlgorithm]:
    """A scheduler's cache holding ``nodes``, an empty snapshot, the default framework with its
    random draws seeded by ``seed``, and the PodGroup search on it: two of these built alike
    take the same decisions, so a test can change one thing on one side and compare."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    handle = Handle(
        gates=FeatureGate(),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        rng=random.Random(seed),
        default_spread_selector=app_selector,
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    return cache, Snapshot(), fw, PodGroupAlgorithm(fw)
