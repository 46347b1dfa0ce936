"""A run's node that took a pod, filtered again only by the filters reading its pods (placement_run.py).

``NODE_ONLY_FILTERS`` (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity) read the node
object and the pod's spec, never the node's pods, so ``PlacementRun.assumed`` does not ask them
again. Checked two ways: on random nodes (taints, cordons, labels) and random pods (tolerations,
node selectors, required and preferred node affinity, a node name), each such plugin's verdict
is the same before and after the node takes random pods; and test_placement_run's searches
(narrow and wide) are the same with the skip on and off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import scheduler.placement_run as placement_run
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.interfaces import CycleState, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.testing import make_node, make_pod

from .test_placement_run import _search

ZONE = "topology.kubernetes.io/zone"


def _node(r: random.Random, i: int) -> Any:
    taints = [
        {"key": k, "value": "x", "effect": e}
        for k, e in (("soft", "PreferNoSchedule"), ("hard", "NoSchedule"), ("gone", "NoExecute"))
        if r.random() < 0.3
    ]
    return make_node(
        f"n{i}",
        labels={ZONE: f"zone-{r.randrange(3)}"} if r.random() < 0.8 else None,
        taints=taints or None,
        unschedulable=r.random() < 0.2,
    )


def _pod(r: random.Random, name: str) -> Any:
    kw: dict[str, Any] = {"requests": {"cpu": r.choice(["100m", "1"])}}
    if r.random() < 0.4:
        kw["tolerations"] = r.sample(
            [
                {"key": "hard", "operator": "Exists"},
                {"key": "soft", "operator": "Exists"},
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
                {"operator": "Exists"},
            ],
            r.randint(1, 2),
        )
    if r.random() < 0.3:
        kw["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE, "operator": "In", "values": ["zone-0", "zone-1"]}
                            ]
                        }
                    ]
                }
            }
        }
    pod = make_pod(name, **kw)
    if r.random() < 0.2:
        pod["spec"]["nodeSelector"] = {ZONE: "zone-2"}
    if r.random() < 0.1:
        pod["spec"]["nodeName"] = f"n{r.randrange(6)}"
    return pod


@pytest.mark.parametrize("seed", range(30))
def test_a_node_only_filter_gives_a_node_the_same_verdict_whatever_pods_it_holds(seed: int) -> None:
    r = random.Random(seed)
    fw = Framework(default_profile(), Handle(rng=r), registry=default_registry())
    plugins = [pl for pl in fw.filter_plugins if pl.name in placement_run.NODE_ONLY_FILTERS]
    assert {pl.name for pl in plugins} == placement_run.NODE_ONLY_FILTERS
    rejected = 0
    for i in range(12):
        node = _node(r, i)
        for k in range(6):
            pi = PodInfo(_pod(r, f"p{i}-{k}"))
            empty = NodeInfo(node)
            full = NodeInfo(node, [PodInfo(_pod(r, f"o{i}-{k}-{j}")) for j in range(r.randint(1, 5))])
            for pl in plugins:
                state = CycleState()
                fw.run_pre_filter_plugins(state, pi, [empty])
                before = pl.filter(state, pi, empty)
                after = pl.filter(state, pi, full)
                assert (before is None or before.is_success()) == (after is None or after.is_success())
                if before is not None and after is not None:
                    assert (before.code, before.reasons) == (after.code, after.reasons)
                rejected += not (before is None or before.is_success())
    assert rejected  # (the random nodes and pods do reject some: the verdicts compared vary)


@pytest.mark.parametrize("wide", [False, True], ids=["narrow", "wide"])
def test_searches_with_and_without_the_node_only_filters_asked_again_are_the_same(
    wide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1)
    for seed in range(30 if not wide else 20):
        monkeypatch.setattr(placement_run, "SKIP_NODE_ONLY_FILTERS", True)
        on = _search(seed, carry_runs=True, wide=wide)
        monkeypatch.setattr(placement_run, "SKIP_NODE_ONLY_FILTERS", False)
        off = _search(seed, carry_runs=True, wide=wide)
        assert on[3] == off[3], f"seed {seed}"
        assert on[1:3] == off[1:3], f"seed {seed}: random draws or rotation differ"
