"""NodeResourcesFit's FilterHint agrees with its Filter whatever the requests hold: zero requests,
an explicit ``pods`` request, extended resources, and resources the plugin is told to ignore
(the hint hands the pod's requests to the capacity index as they are unless some are ignored)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.cache import Cache
from scheduler.framework import CycleState
from scheduler.nodeinfo import PodInfo
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.testing import make_node, make_pod


def _cluster(rng: random.Random, count: int) -> Cache:
    cache = Cache()
    for i in range(count):
        cache.add_node(
            make_node(
                f"n{i:03d}",
                cpu=rng.choice(["1", "2", "4"]),
                pods=rng.choice(["1", "3", "110"]),
                extra={"example.com/gpu": rng.choice(["1", "2"])} if i % 3 == 0 else None,
            )
        )
        for j in range(rng.randrange(3)):
            cache.add_pod(make_pod(f"e{i}-{j}", node_name=f"n{i:03d}", requests={"cpu": "600m"}))
    return cache


def _hinted_rejections(hint: Any, names: list[str]) -> set[str]:
    """The nodes the hint says Filter rejects (``check`` + ``rejects``, or outside ``passes``);
    a hint that only narrows (``check`` without ``rejects``) names no certain rejection."""
    if hint.passes is not None:
        return set(names) - set(hint.passes)
    return set(hint.check or ()) if hint.rejects else set()


@pytest.mark.parametrize(
    "args", [{}, {"ignoredResources": ["example.com/gpu"]}, {"ignoredResourceGroups": ["example.com"]}]
)
@pytest.mark.parametrize(
    "requests",
    [
        {"cpu": 0, "memory": 0},
        {"cpu": 1500, "pods": 0},
        {"cpu": 100, "pods": 1},
        {"cpu": 100, "example.com/gpu": 2},
        {"cpu": 0, "example.com/gpu": 1, "memory": 0},
        {"cpu": 3500},
    ],
)
def test_fit_hint_names_the_nodes_filter_rejects(args: dict[str, Any], requests: dict[str, int]) -> None:
    plugin = NodeResourcesFit(args)
    for seed in range(3):
        snap = _cluster(random.Random(seed), 60).snapshot()
        pod_info = PodInfo(make_pod("p"))
        pod_info.requests = dict(requests)  # the units Filter and the hint read
        state = CycleState()
        plugin.pre_filter(state, pod_info, snap.list())
        rejected = {ni.name for ni in snap.list() if plugin.filter(state, pod_info, ni) is not None}
        hint = plugin.filter_hint(state, pod_info, snap)
        assert _hinted_rejections(hint, snap.node_names) == rejected, (seed, args, requests)
