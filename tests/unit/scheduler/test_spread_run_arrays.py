"""PodTopologySpread's carried column in arrays (scheduler/plugins/spread_run.py) against the lists.

A window's run over a big cluster keeps its column in numpy arrays: the pods assumed on its own
nodes and the pods the other windows placed are added to pending counts, and the column is
worked out once when it is next read (``_catch_up_in_arrays``: each changed domain's term
gathered into its constraint's column), the other windows' pods told in one call per run
(``assumed_elsewhere_many``). The lists path (``assumed`` retallying each pod's domains at once,
``assumed_elsewhere`` pod by pod) is the general one, itself compared with the pod-by-pod cycle
by test_placement_run.py. On random clusters (zones and racks, labels missing, pods of other
sets, namespaces, terminating) and random orders of pods on and off the run's nodes, both must
give the same column whenever it is read.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from apiserver.api.types import Obj
from featuregates import FeatureGate
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.interfaces import CycleState, Handle
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins.spread_run import SpreadScoreRun
from scheduler.schedule_one import CycleTrace, schedule_pod
from scheduler.testing import make_node, make_pod

RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


def _nodes(r: random.Random, n: int) -> list[Obj]:
    zones = r.choice([1, 3, 10])
    out = []
    for i in range(n):
        labels = {}
        if r.random() > 0.05:
            labels[ZONE] = f"zone-{i % zones if r.random() < 0.8 else r.randrange(zones)}"
        if r.random() > 0.1:
            labels[RACK] = f"rack-{i % 7}"
        out.append(make_node(f"n{i:03d}", cpu="32", memory="64Gi", labels=labels))
    return out


def _pod(r: random.Random, k: int) -> Obj:
    app = "web" if r.random() < 0.85 else "db"
    ns = "default" if r.random() < 0.95 else "other"
    kw: dict[str, Any] = {"requests": {"cpu": "100m"}, "labels": {"app": app, "idx": str(k)}}
    if r.random() < 0.05:
        kw["deletion_timestamp"] = "2026-01-01T00:00:00Z"
    return make_pod(f"p{k}", ns, **kw)


def _setup(seed: int) -> tuple[random.Random, Any, Framework, PodInfo, CycleState, CycleTrace]:
    r = random.Random(seed)
    cache = Cache()
    for nd in _nodes(r, r.choice([150, 240, 300])):
        cache.add_node(nd)
    for k in range(r.randrange(0, 60)):  # pods already there (the previous gangs')
        p = _pod(r, 1000 + k)
        p["spec"]["nodeName"] = f"n{r.randrange(150):03d}"
        cache.add_pod(p)
    snap = cache.snapshot()
    handle = Handle(
        gates=FeatureGate(),
        rng=random.Random(seed),
        default_spread_selector=lambda p: compile_selector(
            {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
        ),
    )
    fw = Framework(default_profile(percentage_of_nodes_to_score=34), handle, registry=default_registry())
    fw.next_start_node_index = r.randrange(300)
    first = PodInfo(make_pod("first", requests={"cpu": "100m"}, labels={"app": "web", "idx": "x"}))
    state, trace = CycleState(), CycleTrace()
    schedule_pod(fw, state, first, snap, None, trace)
    return r, snap, fw, first, state, trace


def _runs(fw: Framework, state: CycleState, first: PodInfo, trace: CycleTrace) -> tuple[Any, Any] | None:
    (plugin,) = [pl for pl in fw.score_plugins if pl.name == "PodTopologySpread"]
    lists = SpreadScoreRun(plugin, state, first, list(trace.feasible))
    arrays = SpreadScoreRun(plugin, state, first, list(trace.feasible))
    if not (lists.ok and arrays.can_use_arrays()):
        return None
    arrays.to_arrays()
    return lists, arrays


class _Told:
    """A pod assumed elsewhere, as the windows' log keeps it."""

    def __init__(self, pod_info: PodInfo, node_info: Any) -> None:
        self.pod_info = pod_info
        self.node_info = node_info
        self.shared: list[Any] = []


@pytest.mark.parametrize("seed", range(60))
def test_the_column_in_arrays_is_the_lists_column_whenever_it_is_read(seed: int) -> None:
    r, snap, fw, first, state, trace = _setup(seed)
    got = _runs(fw, state, first, trace)
    if got is None:
        pytest.skip("no run in arrays for this cluster")
    lists, arrays = got
    mine = {ni.name: q for q, ni in enumerate(trace.feasible)}
    others = [n for n in snap.node_info_map if n not in mine]
    assert others  # the window is narrower than the cluster
    batch: list[_Told] = []
    for k in range(r.choice([20, 80, 200])):
        pi = _pod(r, k)
        pinfo = PodInfo(pi)
        on_mine = r.random() < 0.3
        host = r.choice(list(mine) if on_mine else others)
        snap.assume_pod(PodInfo({**pi, "spec": {**pi["spec"], "nodeName": host}}), host)
        ni = snap.node_info_map[host]
        if on_mine:
            arrays.assumed_elsewhere_many(batch)  # the log's order: the batch before this pod
            batch = []
            lists.assumed(mine[host], pinfo, ni)
            arrays.assumed(mine[host], pinfo, ni)
        else:
            told = _Told(pinfo, ni)
            lists.assumed_elsewhere(pinfo, ni, told.shared)
            batch.append(told)
        if r.random() < 0.25:  # the run reads its column
            arrays.assumed_elsewhere_many(batch)
            batch = []
            lists.catch_up()
            arrays.catch_up()
            assert arrays.raw.tolist() == lists.raw, f"seed {seed} pod {k}"
    arrays.assumed_elsewhere_many(batch)
    lists.catch_up()
    arrays.catch_up()
    assert arrays.raw.tolist() == lists.raw, f"seed {seed}"
