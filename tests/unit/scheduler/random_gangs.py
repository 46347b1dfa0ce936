"""Random clusters and gang sets for the tests that place gangs through the PodGroup search and
compare two ways of keeping the cache (kept winners, the submit's shared assume)."""

from __future__ import annotations

import random
from typing import Any

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
