"""The numpy node table mirrors the snapshot, and its array scores are the per-node scores.

Random clusters (nodes lacking cpu or memory, extended resources, pods past capacity, huge
quantities) go through random assumes, forgets, rollbacks and cache updates; after each step
the table must hold every node's numbers, and every array path must give, node for node, what
the per-node Python code gives.
"""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from scheduler import arraypolicy, schedule_one
from scheduler.cache import Cache, Snapshot
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins import resource_allocation as ra
from scheduler.plugins import resource_arrays
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.testing import make_node, make_pod

GPU = "example.com/gpu"


@pytest.fixture(autouse=True)
def _map_every_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches that are not runs of consecutive nodes take the array path too (in production
    only from ``MAPPED_MIN_NODES`` nodes on), so that the tests compare it on small clusters."""
    monkeypatch.setattr(arraypolicy, "MAPPED_MIN_NODES", 1)


def _random_node(rng: random.Random, i: int) -> dict[str, Any]:
    extra = {GPU: str(rng.choice([0, 1, 8]))} if rng.random() < 0.3 else {}
    if rng.random() < 0.05:
        extra["ephemeral-storage"] = rng.choice(["10Gi", "8Ei"])  # 8Ei is beyond 2**53 bytes
    return make_node(
        f"n{i:03d}",
        cpu=rng.choice(["0", "1", "4", "7500m", "32"]),
        memory=rng.choice(["0", "1Gi", "8Gi", "128Gi"]),
        pods=rng.choice(["0", "3", "110"]),
        extra=extra,
    )


def _random_requests(rng: random.Random) -> dict[str, str]:
    return rng.choice(
        [
            {},
            {"cpu": "300m"},
            {"memory": "700Mi"},
            {"cpu": "5", "memory": "9Gi"},
            {"cpu": "100m", GPU: "1"},
            {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"},
        ]
    )


def _random_cluster(rng: random.Random, nodes: int) -> Cache:
    cache = Cache()
    for i in range(nodes):
        cache.add_node(_random_node(rng, i))
    for j in range(nodes * 2):
        n = rng.randrange(nodes)
        cache.add_pod(make_pod(f"e{j}", uid=f"e{j}", node_name=f"n{n:03d}", requests=_random_requests(rng)))
    return cache


def _assert_mirrors(snap: Snapshot) -> None:
    table = snap.node_table()
    assert table.names == list(snap.node_names)
    for row, ni in enumerate(snap.ordered()):
        assert table.infos[row] is ni
        if row in table.inexact:
            continue
        for r, col in table.columns.items():
            assert table.allocatable[row, col] == ni.allocatable.get(r, 0), (ni.name, r)
            assert table.requested[row, col] == ni.requested.get(r, 0), (ni.name, r)
        assert table.non_zero_cpu[row] == ni.non_zero_cpu
        assert table.non_zero_memory[row] == ni.non_zero_memory
        assert table.pod_count[row] == len(ni.pods)


@pytest.mark.parametrize("seed", range(6))
def test_the_table_follows_every_snapshot_change(seed: int) -> None:
    rng = random.Random(seed)
    cache = _random_cluster(rng, 80)
    snap = cache.snapshot()
    _assert_mirrors(snap)
    for step in range(60):
        op = rng.random()
        names = list(snap.node_names)
        if op < 0.4:
            pi = PodInfo(make_pod(f"a{seed}-{step}", uid=f"a{seed}-{step}", requests=_random_requests(rng)))
            snap.assume_pod(pi, rng.choice(names))
        elif op < 0.55:
            ni = snap.get(rng.choice(names))
            assert ni is not None
            if ni.pods:
                snap.forget_pod(rng.choice(ni.pods), ni.name)
        elif op < 0.7:
            mark = snap.backup()
            for k in range(rng.randrange(1, 6)):
                pi = PodInfo(make_pod(f"b{seed}-{step}-{k}", uid=f"b{seed}-{step}-{k}"))
                snap.assume_pod(pi, rng.choice(names))
            snap.restore(mark)
        elif op < 0.8:
            node = _random_node(rng, rng.randrange(90))  # an update, or a new node
            if node["metadata"]["name"] in cache.nodes:
                cache.update_node(None, node)
            else:
                cache.add_node(node)
            cache.update_snapshot(snap)
        elif op < 0.85 and len(names) > 10:
            cache.remove_node(make_node(rng.choice(names)))
            cache.update_snapshot(snap)
        else:
            p = make_pod(f"c{seed}-{step}", uid=f"c{seed}-{step}", node_name=rng.choice(names))
            cache.add_pod(p)
            cache.update_snapshot(snap)
        _assert_mirrors(snap)


def _zoned_node(rng: random.Random, i: int) -> dict[str, Any]:
    node = _random_node(rng, i)
    if rng.random() < 0.8:
        node["metadata"]["labels"]["zone"] = rng.choice(["a", "b", "c"])
    return node


@pytest.mark.parametrize("batched", [0, 64])
@pytest.mark.parametrize("seed", range(6))
def test_a_kept_table_equals_one_built_afresh(
    seed: int, batched: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows refilled for pod-only changes skip the node's columns (allocatable, label ids): the
    kept table must still equal, array for array, a table built from the same NodeInfos, through
    pods taken and lost, Node updates (new allocatable, a zone label moved, huge quantities)
    and nodes joining; refilled row by row or (``batched`` 0) all in one ``NodeTable.refill``."""
    from scheduler.nodetable import NodeTable

    monkeypatch.setattr("scheduler.cache.BATCHED_REFILL", batched)
    rng = random.Random(seed)
    cache = Cache()
    for i in range(60):
        cache.add_node(_zoned_node(rng, i))
    snap = cache.snapshot()
    snap.node_table().label_ids("zone")
    for step in range(120):
        op = rng.random()
        names = list(snap.node_names)
        if op < 0.45:
            p = make_pod(
                f"p{step}", uid=f"p{step}", node_name=rng.choice(names), requests=_random_requests(rng)
            )
            cache.add_pod(p)
        elif op < 0.6:
            ni = cache.nodes[rng.choice(names)]
            if ni.pods:
                cache.remove_pod(rng.choice(ni.pods).pod)
        elif op < 0.7:
            pi = PodInfo(make_pod(f"s{step}", uid=f"s{step}", requests=_random_requests(rng)))
            snap.assume_pod(pi, rng.choice(names))
        else:
            node = _zoned_node(rng, rng.randrange(64))  # an update, or (rarely) a new node
            if node["metadata"]["name"] in cache.nodes:
                cache.update_node(None, node)
            else:
                cache.add_node(node)
        cache.update_snapshot(snap)
        kept = snap.node_table()
        fresh = NodeTable(snap.ordered())
        assert kept.names == fresh.names
        assert kept.inexact == fresh.inexact
        exact = [r for r in range(len(kept)) if r not in kept.inexact]
        for r, col in fresh.columns.items():
            k = kept.columns[r]
            assert (kept.allocatable[exact, k] == fresh.allocatable[exact, col]).all(), r
            assert (kept.requested[exact, k] == fresh.requested[exact, col]).all(), r
        for got, want in [(kept.non_zero_cpu, fresh.non_zero_cpu), (kept.pod_count, fresh.pod_count)]:
            assert (got[exact] == want[exact]).all()
        ids, _, values = kept.label_ids("zone")
        fids, _, fvalues = fresh.label_ids("zone")
        assert [values[i] if i >= 0 else None for i in ids] == [fvalues[i] if i >= 0 else None for i in fids]
        assert kept.all_labelled("zone") == fresh.all_labelled("zone")


_SCORERS = [ra.least_allocated_scorer, ra.most_allocated_scorer, ra.balanced_scorer]
_RESOURCE_SETS = [
    [("cpu", 1), ("memory", 1)],
    [("cpu", 3), ("memory", 1), (GPU, 2)],
    [("memory", 2), ("ephemeral-storage", 1), ("cpu", 1)],
    [(GPU, 1)],
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("use_requested", [False, True])
def test_array_scores_equal_the_per_node_scores(seed: int, use_requested: bool) -> None:
    rng = random.Random(100 + seed)
    snap = _random_cluster(rng, 120).snapshot()
    table = snap.node_table()
    nodes = snap.ordered()
    for _ in range(12):
        resources = rng.choice(_RESOURCE_SETS)
        reqs = [rng.choice([0, 0, 100, 1500, 2**31, 7 * 2**30]) for _ in resources]
        for scorer in _SCORERS:
            want = [ra.score_node(ni, reqs, resources, scorer, use_requested) for ni in nodes]
            got = resource_arrays.score_rows(
                table, slice(0, len(nodes)), reqs, resources, scorer, use_requested
            )
            assert got.tolist() == want, (scorer, resources, reqs)
            picked = sorted(rng.sample(range(len(nodes)), 40))
            rows = table.rows_of([nodes[i] for i in picked])
            assert rows is not None
            sub = resource_arrays.score_rows(table, rows, reqs, resources, scorer, use_requested)
            assert sub.tolist() == [want[i] for i in picked]


def _plugins(handle: Handle) -> list[Any]:
    return [
        NodeResourcesFit({}, handle),
        NodeResourcesFit({"scoringStrategy": {"type": "MostAllocated"}}, handle),
        NodeResourcesFit(
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 2}, {"name": GPU, "weight": 3}]}},
            handle,
        ),
        NodeResourcesFit(_REQUESTED_TO_CAPACITY_RATIO, handle),
        BalancedAllocation({}, handle),
        BalancedAllocation({"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]}, handle),
    ]


#: a bin-packing shape (kube's example): the table has no array form for it, so its batches take
#: the per-node path and must still equal score() node for node
_REQUESTED_TO_CAPACITY_RATIO = {
    "scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
            {"name": GPU, "weight": 2},
        ],
        "requestedToCapacityRatio": {
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
        },
    }
}


def test_requested_to_capacity_ratio_batches_fall_back_to_the_per_node_path() -> None:
    """The array scorers know LeastAllocated, MostAllocated and BalancedAllocation only: the table
    answers ``None`` for a RequestedToCapacityRatio scorer (so the plugin scores node by node)."""
    rng = random.Random(11)
    snap = _random_cluster(rng, 120).snapshot()
    handle = Handle(rng=random.Random(0))
    handle.snapshot = snap
    fit = NodeResourcesFit(_REQUESTED_TO_CAPACITY_RATIO, handle)
    nodes = snap.ordered()
    pi = PodInfo(make_pod("p", uid="p", requests={"cpu": "1", "memory": "1Gi"}))
    state = CycleState()
    assert fit.pre_score(state, pi, nodes) is None
    reqs = [ra.pod_request(pi, r, False) for r, _ in fit.resources]
    assert (
        resource_arrays.scores(state, snap.node_table(), nodes, reqs, fit.resources, fit.scorer, False)
        is None
    )
    assert fit.score_nodes(state, pi, nodes) == [fit.score(state, pi, ni)[0] for ni in nodes]


@pytest.mark.parametrize("seed", range(4))
def test_plugins_score_batches_as_they_score_each_node(seed: int) -> None:
    """The batch path (array columns kept per pod shape, rescored as nodes change) against score()."""
    rng = random.Random(200 + seed)
    cache = _random_cluster(rng, 150)
    snap = cache.snapshot()
    handle = Handle(rng=random.Random(seed))
    handle.snapshot = snap
    plugins = _plugins(handle)
    for step in range(40):
        pi = PodInfo(make_pod(f"p{step}", uid=f"p{step}", requests=_random_requests(rng)))
        ordered = snap.ordered()
        start = rng.randrange(len(ordered))
        window = (ordered[start:] + ordered[:start])[: rng.choice([64, 100, len(ordered)])]
        batches = [window, sorted(rng.sample(ordered, 70), key=lambda ni: ni.name)]
        for nodes in batches:
            state = CycleState()
            for pl in plugins:
                if pl.pre_score(state, pi, nodes) is not None:
                    continue  # skipped for this pod
                want = [pl.score(state, pi, ni)[0] for ni in nodes]
                assert pl.score_nodes(state, pi, nodes) == want, (pl.name, step)
        snap.assume_pod(pi, rng.choice(ordered).name)
        if step % 7 == 0:
            cache.add_pod(make_pod(f"q{step}", uid=f"q{step}", node_name=rng.choice(ordered).name))
            cache.update_snapshot(snap)


def test_a_node_that_is_not_the_snapshots_is_scored_node_by_node() -> None:
    rng = random.Random(3)
    snap = _random_cluster(rng, 100).snapshot()
    handle = Handle(rng=random.Random(1))
    handle.snapshot = snap
    nodes = list(snap.ordered())
    clone = nodes[5].clone()
    clone.add_pod_info(PodInfo(make_pod("extra", uid="extra", requests={"cpu": "3"})))
    nodes[5] = clone
    assert snap.node_table().rows_of(nodes) is None
    pi = PodInfo(make_pod("p", uid="p", requests={"cpu": "1"}))
    for pl in _plugins(handle):
        state = CycleState()
        if pl.pre_score(state, pi, nodes) is None:
            assert pl.score_nodes(state, pi, nodes) == [pl.score(state, pi, ni)[0] for ni in nodes]


def _cycles(array_min: int, monkeypatch: pytest.MonkeyPatch, seed: int) -> list[tuple[str, int, int]]:
    monkeypatch.setattr(arraypolicy, "ARRAY_MIN_NODES", array_min)
    rng = random.Random(seed)
    cache = _random_cluster(rng, 300)
    handle = Handle(rng=random.Random(seed))
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = Snapshot()
    out = []
    for i in range(150):
        p = make_pod(f"s{i}", uid=f"s{i}", requests=_random_requests(rng))
        cache.update_snapshot(snap)
        handle.snapshot = snap
        try:
            r = schedule_one.schedule_pod(fw, CycleState(), PodInfo(p), snap)
        except Exception as e:  # FitError text included: it must match too
            out.append((str(e), 0, 0))
            continue
        out.append((r.suggested_host, r.evaluated_nodes, r.feasible_nodes))
        cache.assume_pod(p, r.suggested_host)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_scheduling_with_the_array_path_places_pods_as_without_it(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_arrays = _cycles(1, monkeypatch, seed)
    without = _cycles(10**9, monkeypatch, seed)
    assert with_arrays == without


def test_numpy_stays_off_the_start_up_path() -> None:
    code = (
        "import sys, gangplane.cli, gangplane.controlplane, scheduler.scheduler\n"
        "assert 'numpy' not in sys.modules, 'numpy imported at start-up'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_node_info_clone_shares_no_row() -> None:
    """A NodeInfo a plugin cloned for a what-if never reads the snapshot's row."""
    snap = Snapshot([NodeInfo(make_node(f"n{i}")) for i in range(3)])
    table = snap.node_table()
    assert table.rows_of([snap.ordered()[1].clone()]) is None
    assert table.rows_of(snap.ordered()[1:3]) == slice(1, 3)
    assert table.rows_of([snap.ordered()[2], snap.ordered()[0]]).tolist() == [2, 0]  # wraps around
    assert table.rows_of([snap.ordered()[2], snap.ordered()[1]]).tolist() == [2, 1]  # mapped
    assert table.rows_of([snap.ordered()[2], snap.ordered()[1]], map_min=3) is None
    assert table.rows_of([snap.ordered()[2], snap.ordered()[0], snap.ordered()[1]]).tolist() == [2, 0, 1]


def _spread_snapshot(rng: random.Random, nodes: int, empty_zone: bool) -> Snapshot:
    cache = Cache()
    for i in range(nodes):
        labels = {}
        zone = rng.random()
        if zone < 0.85:
            labels["topology.kubernetes.io/zone"] = f"z{rng.randrange(4)}"
        elif zone < 0.9 and empty_zone:
            labels["topology.kubernetes.io/zone"] = ""  # an empty value is a domain of its own
        cache.add_node(make_node(f"n{i:03d}", cpu="32", memory="64Gi", labels=labels))
    for j in range(nodes * 2):
        app = rng.choice(["web", "web", "db"])
        cache.add_pod(
            make_pod(f"e{j}", uid=f"e{j}", node_name=f"n{rng.randrange(nodes):03d}", labels={"app": app})
        )
    return cache.snapshot()


_EXPLICIT = [
    {
        "maxSkew": 2,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("own_constraints", [False, True])
def test_spread_scores_from_the_table_equal_the_per_node_scores(
    seed: int, own_constraints: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scheduler.nodeinfo import compile_selector
    from scheduler.plugins.pod_topology_spread import PodTopologySpread

    rng = random.Random(300 + seed)
    snap = _spread_snapshot(rng, 150, empty_zone=seed % 2 == 0)
    handle = Handle(
        snapshot=snap, default_spread_selector=lambda _p: compile_selector({"matchLabels": {"app": "web"}})
    )
    plugin = PodTopologySpread({}, handle)
    pod = make_pod("p", uid="p", labels={"app": "web"})
    if own_constraints:
        pod["spec"]["topologySpreadConstraints"] = _EXPLICIT
    pi = PodInfo(pod)

    def run(array_min: int, nodes: list[NodeInfo]) -> tuple[Any, list[int]]:
        monkeypatch.setattr(arraypolicy, "ARRAY_MIN_NODES", array_min)
        state = CycleState()
        assert plugin.pre_score(state, pi, nodes) is None
        counts = state.get("PreScorePodTopologySpread").counts
        return counts, plugin.normalize_scores(state, pi, nodes, plugin.score_nodes(state, pi, nodes))

    mark = 0
    for step in range(16):
        ordered = snap.ordered()
        start = rng.randrange(len(ordered))
        for nodes in (ordered, (ordered[start:] + ordered[:start])[:90], rng.sample(ordered, 80)):
            with_table = run(1, nodes)
            assert with_table == run(10**9, nodes), (seed, step)
        if step == 4:
            mark = snap.backup()
        if step == 10:
            snap.restore(mark)  # the per-node count column follows rollbacks too
        for k in range(1 + step % 3):  # some assumes reindexed later (a placement run's)
            target = rng.choice(ordered).name
            p = make_pod(
                f"x{step}-{k}",
                uid=f"x{step}-{k}",
                node_name=target,
                labels={"app": rng.choice(["web", "db"])},
            )
            snap.assume_pod(PodInfo(p), target, defer_index=k % 2 == 1)


def _selector_cycles(array_min: int, monkeypatch: pytest.MonkeyPatch, seed: int) -> list[Any]:
    monkeypatch.setattr(arraypolicy, "ARRAY_MIN_NODES", array_min)
    rng = random.Random(seed)
    cache = Cache()
    for i in range(200):
        labels = {}
        if rng.random() < 0.8:
            labels["disk"] = rng.choice(["ssd", "hdd", ""])
        if rng.random() < 0.5:
            labels["gpu"] = rng.choice(["a100", "h100"])
        cache.add_node(make_node(f"n{i:03d}", cpu=rng.choice(["1", "4"]), labels=labels))
    handle = Handle(rng=random.Random(seed))
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = Snapshot()
    out: list[Any] = []
    selectors = [
        {"disk": "ssd"},
        {"disk": "hdd", "gpu": "h100"},
        {"disk": ""},
        {"disk": "nvme"},
        {"gpu": "a100"},
    ]
    for i in range(120):
        p = make_pod(f"s{i}", uid=f"s{i}", requests={"cpu": "700m"}, node_selector=rng.choice(selectors))
        cache.update_snapshot(snap)
        handle.snapshot = snap
        try:
            r = schedule_one.schedule_pod(fw, CycleState(), PodInfo(p), snap)
        except Exception as e:  # the FitError text, with every node's reason, must match too
            out.append(str(e))
            continue
        # (not evaluated_nodes: nodes a FilterHint rejects are visited only when nothing fits,
        # as for the other hinting plugins, so fewer nodes get a status on the way)
        out.append((r.suggested_host, r.feasible_nodes))
        cache.assume_pod(p, r.suggested_host)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_node_selector_masks_place_pods_as_the_per_node_filter(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_arrays = _selector_cycles(1, monkeypatch, seed)
    without = _selector_cycles(10**9, monkeypatch, seed)
    assert with_arrays == without
    assert any(isinstance(r, str) and "didn't match Pod's node affinity/selector" in r for r in with_arrays)


def test_node_selector_hint_names_exactly_the_matching_nodes() -> None:
    from scheduler.plugins.helpers import RequiredNodeAffinity
    from scheduler.plugins.node_affinity import NodeAffinity

    rng = random.Random(9)
    nodes = []
    for i in range(120):
        labels = {k: rng.choice(["x", "y", ""]) for k in ("a", "b") if rng.random() < 0.7}
        nodes.append(NodeInfo(make_node(f"n{i:03d}", labels=labels)))
    snap = Snapshot(nodes)
    plugin = NodeAffinity({}, None)
    for sel in ({"a": "x"}, {"a": "x", "b": "y"}, {"b": ""}, {"a": "zzz"}, {"a": "x", "b": "x"}):
        pod = make_pod("p", node_selector=sel)
        hint = plugin.filter_hint(CycleState(), PodInfo(pod), snap)
        assert hint is not None and hint.status is not None
        req = RequiredNodeAffinity(pod)
        for ni in snap.ordered():
            accepted = ni.name in hint.passes if hint.passes is not None else ni.name not in hint.check
            assert accepted == req.matches(ni.labels, ni.name), (sel, ni.name)
            st = plugin.filter(CycleState(), PodInfo(pod), ni)
            if st is not None:
                assert (st.code, st.reasons) == (hint.status.code, hint.status.reasons)
