"""A node-local Score plugin's ``node_scorer`` against its ``score`` (scheduler/placement_run.py).

A run of identical pods scores again the node that took each of its pods; it does so by the
plugin's ``node_scorer`` (``score`` with the run's first pod and state bound, the per-call
dispatch done once). On random nodes (allocatable with and without cpu or memory, extended
resources, pods of random requests) and random pods (cpu and memory requested or not, extended
resources), for NodeResourcesFit's three strategies over default and custom resources and for
BalancedAllocation, with and without the PreScore entry in the state, the function of the node
must give ``score``'s number for every node. And test_placement_run's searches (narrow and wide)
must be the same with the node scorers on and off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import scheduler.placement_run as placement_run
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.testing import make_node, make_pod

from .test_placement_run import _search

_GPU = "example.com/gpu"


def _plugins(r: random.Random) -> list[Any]:
    """NodeResourcesFit with a random strategy and resources, and BalancedAllocation."""
    resources = r.choice(
        [
            None,
            [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
            [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 1}],
            [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": _GPU, "weight": 3}],
            [{"name": "cpu", "weight": 1}],
        ]
    )
    strategy: dict[str, Any] = {
        "type": r.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
    }
    if resources is not None:
        strategy["resources"] = resources
    if strategy["type"] == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
        }
    balanced_args = {"resources": resources} if resources is not None and r.random() < 0.5 else None
    return [NodeResourcesFit({"scoringStrategy": strategy}), BalancedAllocation(balanced_args)]


def _node(r: random.Random, i: int) -> NodeInfo:
    extra = {_GPU: str(r.choice([1, 4]))} if r.random() < 0.3 else None
    node = make_node(
        f"n{i}",
        cpu=r.choice(["0", "1", "4", "7", "32"]),
        memory=r.choice(["0", "1Gi", "8Gi", "100Mi"]),
        extra=extra,
    )
    pods = []
    for k in range(r.randrange(0, 6)):
        requests: dict[str, str] = {}
        if r.random() < 0.7:
            requests["cpu"] = r.choice(["100m", "1", "3"])
        if r.random() < 0.6:
            requests["memory"] = r.choice(["64Mi", "1Gi", "5Gi"])
        pods.append(PodInfo(make_pod(f"p{i}-{k}", requests=requests or None, node_name=f"n{i}")))
    return NodeInfo(node, pods)


def _pod(r: random.Random) -> PodInfo:
    requests: dict[str, str] = {}
    if r.random() < 0.8:
        requests["cpu"] = r.choice(["100m", "250m", "2"])
    if r.random() < 0.7:
        requests["memory"] = r.choice(["100Mi", "2Gi"])
    if r.random() < 0.2:
        requests[_GPU] = "1"
    return PodInfo(make_pod("m", requests=requests or None))


@pytest.mark.parametrize("seed", range(40))
def test_a_node_scorer_scores_every_node_as_the_plugins_score(seed: int) -> None:
    r = random.Random(seed)
    nodes = [_node(r, i) for i in range(30)]
    for _ in range(8):
        pod = _pod(r)
        for plugin in _plugins(r):
            state = CycleState()
            if r.random() < 0.7:  # the run's first pod's state holds PreScore's requests
                st = plugin.pre_score(state, pod, nodes)
                if st is not None:  # (BalancedAllocation skips a pod requesting nothing)
                    continue
            scorer = plugin.node_scorer(state, pod)
            for ni in nodes:
                want, status = plugin.score(state, pod, ni)
                assert status is None
                assert scorer(ni) == want, (seed, plugin.name, ni.name)


@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_searches_with_and_without_the_node_scorers_are_the_same(
    wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runs' own nodes scored again by ``score`` instead: the same searches, draws, rotation."""
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1)
    used = [0]
    real = placement_run._Column.__init__

    def counting(self: Any, *args: Any) -> None:
        real(self, *args)
        used[0] += 1

    monkeypatch.setattr(placement_run._Column, "__init__", counting)
    for seed in range(30 if not wide else 20):
        monkeypatch.setattr(placement_run, "NODE_SCORERS", True)
        on = _search(seed, carry_runs=True, wide=wide)
        monkeypatch.setattr(placement_run, "NODE_SCORERS", False)
        off = _search(seed, carry_runs=True, wide=wide)
        assert on[3] == off[3], f"seed {seed}"
        assert on[1:3] == off[1:3], f"seed {seed}: random draws or rotation differ"
    assert used[0] > 0
