"""A catch-up that reindexes most of the cluster drops the kept spreading counts, and nothing read
through the snapshot changes (``Snapshot.drop_spread_counts``, ``cache.BIG_CATCH_UP``).

After a big gang every node took a pod; instead of moving the gang's counts on each of them, the
snapshot forgets its counts and builds any asked for again from the pod label index. Compared
with the counts kept and moved node by node (the threshold out of reach): random histories of
cache assumes, confirmations, relabels, deletions, node relabels and the snapshot's own assumes
(deferred or not) and forgets, checked against counts built afresh after every update; and
series of PodGroup cycles in the plane's order (the winner kept in the snapshot, the previous
gang's bound pods confirming, ``adopt_assumed``) choose the same nodes either way.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import cache as cache_mod
from scheduler.cache import Cache, Snapshot, SpreadCounts
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework, Handle
from scheduler.interfaces import CycleState, PodGroupInfo
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
from scheduler.plugins import pod_topology_spread as pts
from scheduler.podgroup_algorithm import PodGroupAlgorithm
from scheduler.podgroups import PodGroupState
from scheduler.testing import make_node, make_pod, zoned_cache
from tests.unit.scheduler.cache_history import APPS, ZONE, CacheHistory, Mix, app_counter, bound_copy

#: whole gangs besides the single pods' events
MIX = Mix(
    gang=0.05,
    assume=0.3,
    confirm=0.5,
    relabel=0.58,
    remove=0.64,
    node_zone=0.68,
    snapshot_assume=0.85,
    forget=0.92,
)
#: out of reach: the counts are always kept and moved node by node
NEVER = 10**9


def _spread(snap: Snapshot, app: str, key: str) -> SpreadCounts:
    count = app_counter(app)
    return snap.spread_counts(
        f"app={app}",
        key,
        count,
        required=frozenset({("default", "app", app)}),
        count_pods=lambda pods: count(NodeInfo(make_node("x"), pods)),
    )


def _counts(snap: Snapshot) -> dict[tuple[str, str], Any]:
    """Every app's counts by zone and by hostname as the snapshot answers them."""
    return {
        (app, key): (dict(agg.by_value), dict(agg.nodes_counted()))
        for app in APPS
        for key in (ZONE, "kubernetes.io/hostname")
        for agg in [_spread(snap, app, key)]
    }


def _fresh(snap: Snapshot) -> dict[tuple[str, str], Any]:
    """The same counts built from every pod of the snapshot's NodeInfos now."""
    out = {}
    for app in APPS:
        for key in (ZONE, "kubernetes.io/hostname"):
            agg = SpreadCounts(key, app_counter(app), app, frozenset({("default", "app", app)}))
            for name, ni in snap.node_info_map.items():
                agg.update(name, ni)
            out[(app, key)] = (dict(agg.by_value), dict(agg.nodes_counted()))
    return out


def _count_drops(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the catch-ups that dropped the counts: ``[dropped, kept]``."""
    seen = [0, 0]
    real = Snapshot.drop_spread_counts

    def counting(self: Snapshot, reindexing: int) -> bool:
        got = real(self, reindexing)
        seen[0 if got else 1] += 1
        return got

    monkeypatch.setattr(Snapshot, "drop_spread_counts", counting)
    return seen


@pytest.mark.parametrize(("big", "share"), [(0, 0.0), (3, 0.3), (0, 0.5), (NEVER, 0.5)])
@pytest.mark.parametrize("seed", range(10))
def test_counts_after_big_catch_ups_equal_a_rebuild(
    seed: int, big: int, share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_mod, "BIG_CATCH_UP", big)
    monkeypatch.setattr(cache_mod, "BIG_CATCH_UP_SHARE", share)
    drops = _count_drops(monkeypatch)
    rng = random.Random(seed)
    cache, names = zoned_cache(10)
    snap = cache.snapshot()
    _counts(snap)
    history = CacheHistory(cache, snap, names, MIX, pod_name_label=False)
    for step in range(400):
        history.step(rng, step)
        if rng.random() < 0.1:
            assert _counts(snap) == _fresh(snap), step
        if rng.random() < 0.3:
            history.update_snapshot()
            if rng.random() < 0.7:  # read (and so built again) before the next update, or not
                assert _counts(snap) == _fresh(snap), step
    if big == NEVER:
        assert not drops[0]
    else:
        assert drops[0] >= 3 and drops[1] >= 3, drops  # both ways taken


def _pod(name: str, app: str) -> dict[str, Any]:
    return make_pod(name, uid=name, labels={"app": app}, requests={"cpu": "100m", "memory": "64Mi"})


def _place_gangs(seed: int, big: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Gangs placed in the plane's order; every chosen node (the counts checked at the end)."""
    monkeypatch.setattr(cache_mod, "BIG_CATCH_UP", big)
    monkeypatch.setattr(cache_mod, "BIG_CATCH_UP_SHARE", 0.15)  # the catch-ups after big gangs
    rng = random.Random(seed)
    # 0: PreScore reads the snapshot's kept counts even for a set on a few nodes
    monkeypatch.setattr(pts, "SMALL_HOLDERS", rng.choice([0, 0, 16]))
    n = rng.choice([40, 64, 90])
    cache = Cache()
    names = [f"n{i:03d}" for i in range(n)]
    for i, name in enumerate(names):
        labels = {"kubernetes.io/hostname": name, ZONE: f"z{i % rng.choice([2, 3, 5])}"}
        cache.add_node(make_node(name, cpu="64", memory="256Gi", labels=labels))
    handle = Handle(rng=random.Random(seed))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    hosts: list[str] = []
    unconfirmed: list[tuple[dict[str, Any], str]] = []
    rv = 0
    for k in range(16):
        # a set's own gang, or one more of "a"/"b" (a count dropped before, asked for again)
        app = rng.choice([f"g{k}", "a", "b"])
        size = rng.choice([2, 5, n // 2, n - 3, n])
        members = [PodInfo(_pod(f"{app}-{k}-{i}", app)) for i in range(size)]
        pg: dict[str, Any] = {
            "metadata": {"name": f"pg{k}", "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": size}}},
        }
        group = PodGroupInfo("default", f"pg{k}", pg, members, PodGroupState(f"default/pg{k}"))
        cache.update_snapshot(snap)
        result = algorithm.run(CycleState(), group, snap, keep_winner=True)
        assert result.success and result.placement is not None
        for p, host in unconfirmed:  # the previous gang's bindings come back
            rv += 1
            cache.add_pod(bound_copy(p, host, rv))
        unconfirmed = []
        fitting = result.placement.fitting()
        for a in fitting:
            cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
            unconfirmed.append((a.pod_info.pod, a.node_name))
            hosts.append(a.node_name)
        if result.kept:
            cache.adopt_assumed(snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting})
    cache.update_snapshot(snap)
    assert _counts(snap) == _fresh(snap)
    return hosts


@pytest.mark.parametrize("seed", range(6))
def test_gangs_choose_the_same_nodes_whether_counts_are_dropped_or_moved(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    drops = _count_drops(monkeypatch)
    dropped = _place_gangs(seed, 0, monkeypatch)
    assert drops[0] >= 1, drops  # the big catch-ups dropped counts
    assert dropped == _place_gangs(seed, NEVER, monkeypatch)
