"""PodTopologySpread's per-domain count columns (``SpreadCounts.by_id``), the node table's label
statistics and the remembered domain values of a window, against what they replace.

Through random cache updates (pods added and removed, node labels changed, nodes joining and
leaving), snapshot assumes (indexed now or deferred), forgets and rollbacks:

- the kept column equals one rebuilt from the running counts' dictionary (the old per-pod
  build), and both equal a recount of the snapshot's nodes;
- ``all_labelled`` and the remembered domain values of every window equal a fresh computation;
- PreScore then the array Score over a window give the same int64 column with the kept column
  as with the per-pod build from PreScore's dictionaries, and as the per-node Python code.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.framework import Handle
from scheduler.interfaces import CycleState
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.plugins import pod_topology_spread, spread_arrays
from scheduler.plugins.pod_topology_spread import (
    _PRE_SCORE_KEY,
    PodTopologySpread,
    _fused_scores,
    _ScoreState,
    count_pods_matching,
)
from scheduler.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ["a", "b", "c"]


def _node(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {HOST: name}
    if rng.random() < 0.85:
        labels[ZONE] = f"z{rng.randrange(6)}"
    return make_node(name, cpu="64", memory="256Gi", labels=labels)


def _pod(rng: random.Random, name: str, node: str = "") -> dict[str, Any]:
    owner = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "uid": "s", "controller": True}]
    p = make_pod(name, uid=name, labels={"app": rng.choice(APPS)}, node_name=node)
    p["metadata"]["ownerReferences"] = owner
    return p


def _recount(snap: Snapshot, app: str) -> dict[str, int]:
    sel = compile_selector({"matchLabels": {"app": app}})
    by_value: Counter[str] = Counter()
    for ni in snap.node_info_map.values():
        n = count_pods_matching(ni.pods, sel, "default")
        if n:
            by_value[ni.labels.get(ZONE, "")] += n
    return {v: n for v, n in by_value.items() if n}


def _rebuilt(by_value: dict[str, int], index: dict[str, int], values: list[str]) -> np.ndarray:
    """The per-pod build the kept column replaces (as ``fused_array`` did it)."""
    out = np.zeros(len(values) + 1, dtype=np.float64)
    for v, n in by_value.items():
        vid = index.get(v)
        if vid is not None:
            out[vid] = n
    return out


def _check(snap: Snapshot, plugin: PodTopologySpread, rng: random.Random, step: int) -> None:
    table = snap.node_table()
    ordered = snap.ordered()
    ids, index, values = table.label_ids(ZONE)
    assert table.all_labelled(ZONE) == all(ZONE in ni.labels for ni in ordered)
    n = len(ordered)
    for start, stop in ((0, n), (0, n // 2), (n // 3, n)):
        want = {ni.labels.get(ZONE, "") for ni in ordered[start:stop]}
        assert spread_arrays.domain_values(table, slice(start, stop), ZONE) == want, step
    for app in APPS:
        pod = PodInfo(_pod(rng, f"probe-{app}-{step}"))
        pod.pod["metadata"]["labels"]["app"] = app
        pod = PodInfo(pod.pod)
        state = CycleState()
        nodes = list(ordered)
        assert plugin.pre_score(state, pod, nodes) is None
        s = state.get(_PRE_SCORE_KEY)
        zone_i = [c.topology_key for c in s.constraints].index(ZONE)
        agg = s.domain_counts[zone_i]
        assert agg is not None and agg.by_value == _recount(snap, app), step
        kept = spread_arrays.domain_column(agg, index, values)
        np.testing.assert_array_equal(kept, _rebuilt(agg.by_value, index, values))
        rows = table.rows_of(nodes)
        new = spread_arrays.fused_array(table, rows, s, len(nodes))
        # the same state without the running per-domain counts: counted per domain instead
        counted = _ScoreState(s.constraints, s.ignored_nodes, s.counts, s.weights, s.holders, s.per_node, [])
        old = spread_arrays.fused_array(table, rows, counted, len(nodes))
        assert new is not None and old is not None
        np.testing.assert_array_equal(new, old)
        assert new.tolist() == _fused_scores(s, nodes), step


@pytest.mark.parametrize("seed", range(10))
def test_kept_domain_columns_equal_the_rebuilt_ones_through_random_changes(
    seed: int, monkeypatch: Any
) -> None:
    # the snapshot's running counts even for a set on a few nodes (PreScore counts those itself)
    monkeypatch.setattr(pod_topology_spread, "SMALL_HOLDERS", 0)
    rng = random.Random(seed)
    cache = Cache()
    nodes = {f"n{i:02d}": _node(rng, f"n{i:02d}") for i in range(40)}
    for obj in nodes.values():
        cache.add_node(obj)
    for j in range(60):
        cache.add_pod(_pod(rng, f"e{j}", rng.choice(list(nodes))))
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.snapshot = snap
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    plugin = PodTopologySpread({}, handle)
    assumed: list[tuple[PodInfo, str]] = []
    extra = 0
    for step in range(60):
        _check(snap, plugin, rng, step)
        op = rng.random()
        names = list(nodes)
        if op < 0.35:
            node = rng.choice(names)
            pi = PodInfo(_pod(rng, f"s{step}", node))
            snap.assume_pod(pi, node, defer_index=rng.random() < 0.3)
            assumed.append((pi, node))
        elif op < 0.45 and assumed:
            pi, node = assumed.pop(rng.randrange(len(assumed)))
            snap.forget_pod(pi, node)
        elif op < 0.55:
            mark = snap.backup()
            for k in range(4):
                node = rng.choice(names)
                snap.assume_pod(PodInfo(_pod(rng, f"r{step}-{k}", node)), node, defer_index=k % 2 == 0)
            snap.restore(mark)
        elif op < 0.7:
            # a node's zone changes (or appears, or goes): ids move, new values get ids
            name = rng.choice(names)
            old = nodes[name]
            new = _node(rng, name)
            if rng.random() < 0.3:
                new["metadata"]["labels"][ZONE] = f"z-new-{step}"
            cache.update_node(old, new)
            nodes[name] = new
            cache.update_snapshot(snap)
            assumed.clear()
        elif op < 0.78:
            # a node joins or leaves: the table is rebuilt, the kept columns follow its new ids
            if rng.random() < 0.5 or len(nodes) < 30:
                name = f"x{extra:02d}"
                extra += 1
                nodes[name] = _node(rng, name)
                cache.add_node(nodes[name])
            else:
                name = rng.choice(names)
                for p in [pi.pod for pi in cache.nodes[name].pods]:
                    cache.remove_pod(p)
                cache.remove_node(nodes.pop(name))
            cache.update_snapshot(snap)
            assumed.clear()
        else:
            p = _pod(rng, f"c{step}", rng.choice(names))
            cache.add_pod(p)
            if rng.random() < 0.3:
                cache.remove_pod(p)
            cache.update_snapshot(snap)
            assumed.clear()
    _check(snap, plugin, rng, 60)
