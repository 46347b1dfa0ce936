"""The rack search's shortcuts (session 10b, racksearch) give what the general path gives.

- PodTopologySpread's ``normalize_scores_bounded``: the same column as ``normalize_scores`` and
  the bounds of that column, worked out from the raw column's instead of read from the result.
- A run does not score a node again after it takes a pod for the Score plugins of
  ``NODE_ONLY_SCORES``: their score of a node is the same before and after.
- ``_assumed``'s slot-by-slot copy: every slot of the PodInfo but the pod and its node.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from bench.workloads.common import node, pod
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.placement_run import NODE_LOCAL_SCORES, NODE_ONLY_SCORES
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.pod_topology_spread import (
    _PRE_SCORE_KEY,
    PodTopologySpread,
    _normalize_array_bounded,
    _ScoreState,
)
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.podgroup_algorithm import _assumed


def _columns(r: random.Random) -> list[list[int]]:
    cols = [[0], [5], [0, 0, 0], [3, 3], [0, 7, 2], [-4, -1, -9], [-3, 0, 4], [-2, 5]]
    for _ in range(400):
        n = r.randint(1, 120)
        lo = r.choice([0, 0, 0, -50, -3, 1])
        hi = lo + r.choice([0, 1, 2, 10, 1000])
        cols.append([r.randint(lo, hi) for _ in range(n)])
    return cols


def test_the_bounded_normalization_is_the_plain_one_and_its_bounds_are_the_columns() -> None:
    r = random.Random(7)
    plugin = PodTopologySpread.__new__(PodTopologySpread)
    for col in _columns(r):
        state = CycleState()
        # a PreScore state with no node ignored (the only case the bounded form answers)
        state.write(_PRE_SCORE_KEY, _score_state())
        nodes: list[NodeInfo] = []
        want = plugin.normalize_scores(state, None, nodes, list(col))  # type: ignore[arg-type]
        got = plugin.normalize_scores_bounded(state, None, nodes, np.array(col, dtype=np.int64))  # type: ignore[arg-type]
        assert got is not None
        out, lo, hi = got
        assert out.tolist() == want, col
        assert (lo, hi) == (min(want), max(want)), col
        direct = _normalize_array_bounded(np.array(col, dtype=np.int64))
        assert direct[0].tolist() == want and direct[1:] == (lo, hi)


def test_the_bounded_normalization_declines_lists_ignored_nodes_and_no_prescore() -> None:
    plugin = PodTopologySpread.__new__(PodTopologySpread)
    arr = np.array([1, 2], dtype=np.int64)
    assert plugin.normalize_scores_bounded(CycleState(), None, [], arr) is None  # type: ignore[arg-type]
    state = CycleState()
    state.write(_PRE_SCORE_KEY, _score_state())
    assert plugin.normalize_scores_bounded(state, None, [], [1, 2]) is None  # type: ignore[arg-type]
    assert plugin.normalize_scores_bounded(state, None, [], arr[:0]) is None  # type: ignore[arg-type]
    ignoring = CycleState()
    ignoring.write(_PRE_SCORE_KEY, _score_state(ignored={"node-00001"}))
    assert plugin.normalize_scores_bounded(ignoring, None, [], arr) is None  # type: ignore[arg-type]


def _score_state(ignored: set[str] | None = None) -> _ScoreState:
    return _ScoreState(constraints=[], ignored_nodes=ignored or set(), counts=[], weights=[])


def _scoring_pod() -> PodInfo:
    p = pod("p-0", labels={"app": "p"})
    p["spec"]["tolerations"] = [
        {"key": "soft", "operator": "Equal", "value": "a", "effect": "PreferNoSchedule"}
    ]
    p["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 7,
                    "preference": {
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]
                    },
                },
                {
                    "weight": 3,
                    "preference": {
                        "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]
                    },
                },
            ]
        }
    }
    return PodInfo(p)


@pytest.mark.parametrize("name", sorted(NODE_ONLY_SCORES))
def test_a_node_only_score_is_the_same_after_the_node_takes_pods(name: str) -> None:
    assert name in NODE_LOCAL_SCORES
    plugin = {"TaintToleration": TaintToleration, "NodeAffinity": NodeAffinity}[name]()
    pi = _scoring_pod()
    for i, (taints, labels) in enumerate(
        [
            ([], {}),
            ([{"key": "soft", "value": "b", "effect": "PreferNoSchedule"}], {"tier": "gold"}),
            (
                [
                    {"key": "soft", "value": "a", "effect": "PreferNoSchedule"},
                    {"key": "other", "value": "x", "effect": "PreferNoSchedule"},
                ],
                {"tier": "silver"},
            ),
        ]
    ):
        n = node(i)
        n["metadata"]["labels"].update(labels)
        n["spec"]["taints"] = taints
        ni = NodeInfo(n)
        before, st = plugin.score(CycleState(), pi, ni)
        assert st is None
        for k in range(3):
            ni.add_pod_info(_assumed(PodInfo(pod(f"q-{k}", labels={"app": "p"})), ni.name))
        after, st = plugin.score(CycleState(), pi, ni)
        assert st is None and after == before
        assert name != "TaintToleration" or i == 0 or before > 0  # the taints did count


def test_the_assumed_copy_keeps_every_slot_but_the_pod_and_its_node() -> None:
    p = pod("p-1", labels={"app": "p", "x": "y"})
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    pi = PodInfo(p)
    out = _assumed(pi, "node-00003")
    assert out is not pi and type(out) is PodInfo
    for slot in PodInfo.__slots__:
        if slot in ("pod", "node_name"):
            continue
        assert getattr(out, slot) is getattr(pi, slot), slot
    assert out.node_name == "node-00003" and out.pod["spec"]["nodeName"] == "node-00003"
    assert "nodeName" not in pi.pod["spec"] and pi.node_name != "node-00003"
    assert {k: v for k, v in out.pod["spec"].items() if k != "nodeName"} == pi.pod["spec"]


def test_equal_signatures_of_consecutive_pods_are_one_object_and_the_others_stay_apart() -> None:
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle
    from scheduler.placement_run import run_signature
    from scheduler.podgroup_algorithm import _shared_signatures

    fw = Framework(default_profile(), Handle(rng=random.Random(1)), registry=default_registry())
    pods = []
    for i, (app, cpu) in enumerate([("a", "1"), ("a", "1"), ("a", "2"), ("a", "2"), ("a", "3"), ("a", "1")]):
        p = pod(f"p-{i}", cpu=cpu, labels={"app": app})
        p["spec"]["hostname"] = f"p-{i}"  # an identity field: not part of the signature
        pods.append(PodInfo(p))
    nominated = pod("p-n", cpu="1", labels={"app": "a"})
    nominated["status"] = {"nominatedNodeName": "node-00001"}
    pods.append(PodInfo(nominated))
    sigs = _shared_signatures(fw, pods)
    assert sigs == [run_signature(fw, pi) for pi in pods]
    assert sigs[0] is sigs[1] and sigs[2] is sigs[3]
    assert sigs[1] != sigs[2] and sigs[3] != sigs[4] and sigs[4] != sigs[5]
    assert sigs[5] == sigs[0] and sigs[5] is not sigs[0]  # only consecutive pods are merged
    assert sigs[6] is None
