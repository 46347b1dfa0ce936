"""The scheduler's hot-path shortcuts give exactly the results of the general code they bypass."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import schedule_one
from scheduler.cache import Cache, CapacityIndex
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework, Handle, NodePluginScores, NodeScore
from scheduler.nodeinfo import NodeInfo, PodInfo
from scheduler.plugins import resource_allocation as ra
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.node_resources_fit import NodeResourcesFit, fits_request
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.testing import make_node, make_pod, node_info


def _general(
    node: NodeInfo, reqs: list[int], resources: list[tuple[str, int]], scorer: Any, use: bool
) -> int:
    """``score_node`` without the cpu/memory shortcut."""
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, (name, _) in enumerate(resources):
        alloc, req = ra.allocatable_and_requested(node, name, reqs[i], use)
        if alloc:
            allocatable[i], requested[i] = alloc, req
    return scorer(requested, allocatable, [w for _, w in resources])


def _random_nodes(rng: random.Random, count: int) -> list[NodeInfo]:
    out = []
    for i in range(count):
        cpu = rng.choice(["0", "1", "4", "7500m"])
        mem = rng.choice(["0", "1Gi", "8Gi"])
        node = make_node(f"n{i}", cpu=cpu, memory=mem)
        pods = [
            make_pod(
                f"e{i}-{j}",
                node_name=f"n{i}",
                requests=rng.choice(
                    [{}, {"cpu": "300m"}, {"memory": "700Mi"}, {"cpu": "5", "memory": "9Gi"}]
                ),
            )
            for j in range(rng.randrange(4))
        ]
        out.append(node_info(node, *pods))
    return out


@pytest.mark.parametrize("scorer", [ra.least_allocated_scorer, ra.most_allocated_scorer, ra.balanced_scorer])
@pytest.mark.parametrize("use_requested", [False, True])
def test_cpu_memory_shortcut_matches_the_general_scorer(scorer: Any, use_requested: bool) -> None:
    rng = random.Random(7)
    resources = [("cpu", 1), ("memory", 1)]
    for ni in _random_nodes(rng, 60):
        for reqs in ([0, 0], [250, 0], [0, 512 * 1024**2], [9000, 20 * 1024**3], [100, 200 * 1024**2]):
            assert ra.score_node(ni, reqs, resources, scorer, use_requested) == _general(
                ni, reqs, resources, scorer, use_requested
            )


def test_weighted_resources_take_the_general_path() -> None:
    ni = node_info(make_node("n", extra={"example.com/gpu": "4"}))
    resources = [("cpu", 2), ("memory", 1), ("example.com/gpu", 3)]
    reqs = [1000, 1024**3, 2]
    got = ra.score_node(ni, reqs, resources, ra.least_allocated_scorer, False)
    assert got == _general(ni, reqs, resources, ra.least_allocated_scorer, False)


@pytest.mark.parametrize(
    "plugin",
    [
        NodeResourcesFit(),
        NodeResourcesFit({"scoringStrategy": {"type": "MostAllocated"}}),
        BalancedAllocation(),
    ],
)
def test_batch_scores_equal_per_node_scores(plugin: Any) -> None:
    nodes = _random_nodes(random.Random(3), 40)
    for pod in (
        make_pod("p", requests={"cpu": "500m", "memory": "1Gi"}),
        make_pod("q", requests={"cpu": "2"}),
    ):
        state = CycleState()
        pi = PodInfo(pod)
        plugin.pre_score(state, pi, nodes)
        assert plugin.score_nodes(state, pi, nodes) == [plugin.score(state, pi, ni)[0] for ni in nodes]


def test_taint_toleration_batch_scores() -> None:
    prefer = {"key": "k", "value": "v", "effect": "PreferNoSchedule"}
    nodes = [
        node_info(make_node("a")),
        node_info(make_node("b", taints=[prefer])),
        node_info(make_node("c", taints=[prefer, {"key": "x", "effect": "PreferNoSchedule"}])),
    ]
    plugin = TaintToleration()
    for pod in (make_pod("p"), make_pod("q", tolerations=[{"key": "k", "operator": "Exists"}])):
        state = CycleState()
        pi = PodInfo(pod)
        plugin.pre_score(state, pi, nodes)
        assert plugin.score_nodes(state, pi, nodes) == [plugin.score(state, pi, ni)[0] for ni in nodes]


def test_fits_request_reasons_unchanged_by_the_quick_check() -> None:
    busy = node_info(
        make_node("n", cpu="2", memory="1Gi", pods="1"),
        make_pod("e", node_name="n", requests={"cpu": "1500m"}),
    )
    reasons = [
        s.reason
        for s in fits_request(PodInfo(make_pod("p", requests={"cpu": "1", "memory": "2Gi"})).requests, busy)
    ]
    assert reasons == ["Too many pods", "Insufficient cpu", "Insufficient memory"]
    assert [s.reason for s in fits_request({}, busy)] == ["Too many pods"]
    roomy = node_info(make_node("m"))
    assert fits_request(PodInfo(make_pod("p", requests={"cpu": "1"})).requests, roomy) == []
    ignored = fits_request({"example.com/foo": 1}, roomy, ignored_groups=frozenset({"example.com"}))
    assert ignored == []


def test_capacity_index_when_every_node_fits() -> None:
    idx = CapacityIndex()
    for name in ("a", "b", "c"):
        idx.update(name, node_info(make_node(name)))
    assert idx.candidates({"cpu": 100}) == {"a", "b", "c"}
    assert idx.candidates({"cpu": 5000}) == set()


def test_select_host_picks_among_the_best_only() -> None:
    fw = Framework(default_profile(), Handle(rng=random.Random(1)), registry=default_registry())
    scores = [NodePluginScores(n, {}, t) for n, t in [("a", 5), ("b", 9), ("c", 9), ("d", 2)]]
    picks = {schedule_one.select_host(fw, scores) for _ in range(50)}
    assert picks == {"b", "c"}
    assert schedule_one.select_host(fw, [NodePluginScores("only", {}, 0)]) == "only"


def test_schedule_pod_without_nominated_pods_matches_the_nominated_path() -> None:
    """Filter runs once per node when nothing is nominated; the choice is the same either way."""

    class NoNominations:
        def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
            return []

    cache = Cache()
    for i in range(30):
        cache.add_node(make_node(f"n{i:02d}", cpu=str(1 + i % 3)))
    snap = cache.snapshot()
    pod = PodInfo(make_pod("p", requests={"cpu": "1500m"}))
    fast = Framework(default_profile(), Handle(rng=random.Random(5)), registry=default_registry())
    slow = Framework(
        default_profile(),
        Handle(rng=random.Random(5), nominator=NoNominations()),
        registry=default_registry(),
    )
    assert slow.any_nominated_pods() and not fast.any_nominated_pods()
    for _ in range(5):
        a = schedule_one.schedule_pod(fast, CycleState(), pod, snap)
        b = schedule_one.schedule_pod(slow, CycleState(), pod, snap)
        assert (a.suggested_host, a.feasible_nodes) == (b.suggested_host, b.feasible_nodes)


def _mixed_cluster(rng: random.Random, count: int) -> Cache:
    """Nodes of every kind the Filter hints know about: cordoned, tainted, full, small, GPU-less."""
    cache = Cache()
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    for i in range(count):
        kind = rng.randrange(6)
        cache.add_node(
            make_node(
                f"n{i:03d}",
                cpu=rng.choice(["1", "2", "4"]),
                pods=rng.choice(["2", "110"]),
                unschedulable=kind == 1,
                taints=[taint] if kind == 2 else None,
                extra={"example.com/gpu": "2"} if kind == 3 else None,
            )
        )
        for j in range(rng.randrange(3)):
            cache.add_pod(make_pod(f"e{i}-{j}", node_name=f"n{i:03d}", requests={"cpu": "700m"}))
    return cache


def _brute_force(fw: Framework, state: CycleState, pod: PodInfo, snap: Any) -> dict[str, Any]:
    """Every Filter on every node, in plugin order: the status kube would record per node."""
    out = {}
    for ni in snap.list():
        st = fw.run_filter_plugins(state, pod, ni)
        out[ni.name] = None if st is None or st.is_success() else (st.plugin, st.code, st.reasons)
    return out


@pytest.mark.parametrize(
    "requests",
    [{"cpu": "100m"}, {"cpu": "1500m"}, {"cpu": "3"}, {"cpu": "100m", "example.com/gpu": "1"}, {"cpu": "9"}],
)
@pytest.mark.parametrize("node_name", ["", "n007"])
def test_filter_hints_find_what_running_every_filter_finds(requests: dict[str, str], node_name: str) -> None:
    """Hinted Filter (plugins run only where they may reject) = brute force, for feasible nodes and reasons."""
    for seed in range(4):
        cache = _mixed_cluster(random.Random(seed), 150)
        snap = cache.snapshot()
        fw = Framework(default_profile(), Handle(rng=random.Random(seed)), registry=default_registry())
        fw.handle.snapshot = snap
        pod = PodInfo(make_pod("p", requests=requests, node_name=node_name))
        for start in (0, 37, 149):
            state = CycleState()
            fw.run_pre_filter_plugins(state, pod, snap.list())
            want = _brute_force(fw, state, pod, snap)
            fw.next_start_node_index = start
            feasible, diagnosis = schedule_one.find_nodes_that_fit(fw, state, pod, snap)
            names = [ni.name for ni in feasible]
            passing = [n for n in snap.node_names if want[n] is None]
            rotated = [n for n in snap.node_names[start:] + snap.node_names[:start] if want[n] is None]
            assert names == rotated[: schedule_one.num_feasible_nodes_to_find(fw, 150)], (seed, start)
            for name, st in diagnosis.node_to_status.items():
                assert want[name] == (st.plugin, st.code, st.reasons), name
            if not passing:
                # a FitError must name every node's real reason
                assert len(list(diagnosis.node_to_status.items())) == 150


def test_short_of_matches_a_brute_force_scan() -> None:
    cache = _mixed_cluster(random.Random(11), 120)
    snap = cache.snapshot()
    for q in ({"cpu": 100}, {"cpu": 1500}, {"cpu": 3500}, {"cpu": 100, "example.com/gpu": 1}, {"pods": 1}):
        short, fits = snap.short_of(q)
        want_fit = {
            ni.name
            for ni in snap.list()
            if ni.free("pods") >= 1 and all(ni.free(r) >= v for r, v in q.items() if r != "pods")
        }
        if short is not None:
            assert short == set(snap.node_names) - want_fit, q
        else:
            assert fits == want_fit, q


def test_score_memo_is_dropped_when_the_node_changes() -> None:
    ni = node_info(make_node("n", cpu="4", memory="8Gi"))
    plugin = NodeResourcesFit()
    pi = PodInfo(make_pod("p", requests={"cpu": "1", "memory": "1Gi"}))
    state = CycleState()
    plugin.pre_score(state, pi, [ni])
    before = plugin.score_nodes(state, pi, [ni])
    assert plugin.score_nodes(state, pi, [ni]) == before  # remembered
    clone = ni.clone()
    clone.add_pod_info(PodInfo(make_pod("e", node_name="n", requests={"cpu": "2", "memory": "4Gi"})))
    assert clone.generation != ni.generation
    after = plugin.score_nodes(state, pi, [clone])
    assert after == [plugin.score(state, pi, clone)[0]] and after != before
    assert plugin.score_nodes(state, pi, [ni]) == before  # the original is unchanged


def _spread_cluster(rng: random.Random) -> Cache:
    cache = Cache()
    for i in range(60):
        labels = {"kubernetes.io/hostname": f"n{i:02d}", "topology.kubernetes.io/zone": f"z{i % 4}"}
        if i % 7 == 0:
            labels.pop("topology.kubernetes.io/zone")
        cache.add_node(make_node(f"n{i:02d}", cpu="64", pods="200", labels=labels))
    for j in range(150):
        cache.add_pod(
            make_pod(
                f"e{j}",
                rng.choice(["default", "other"]),
                node_name=f"n{rng.randrange(60):02d}",
                labels={"app": rng.choice(["web", "db"]), "tier": rng.choice(["a", "b"])},
            )
        )
    return cache


@pytest.mark.parametrize(
    "constraints",
    [
        None,  # the system default constraints, selector from the handle
        [
            {
                "maxSkew": 2,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web", "tier": "a"}},
            },
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]},
            },
        ],
    ],
)
def test_spread_scores_from_the_pod_label_index_equal_a_full_count(
    constraints: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PodTopologySpread's indexed pre-score and batch score/normalize = counting every pod of every node."""
    from scheduler.nodeinfo import compile_selector
    from scheduler.plugins import pod_topology_spread as pts

    for seed in range(3):
        snap = _spread_cluster(random.Random(seed)).snapshot()
        pod = make_pod("p", labels={"app": "web", "tier": "a"})
        if constraints:
            pod["spec"]["topologySpreadConstraints"] = constraints
        handle = Handle(
            snapshot=snap,
            default_spread_selector=lambda _p: compile_selector({"matchLabels": {"app": "web"}}),
        )
        plugin = pts.PodTopologySpread({}, handle)
        nodes = snap.list()[::2]
        pi = PodInfo(pod)

        rng = random.Random(seed)
        mark = snap.backup()
        for step in range(6):
            nodes = snap.list()[::2]  # the snapshot's current NodeInfos, as the framework passes them
            state = CycleState()
            assert plugin.pre_score(state, pi, nodes) is None
            fast = plugin.normalize_scores(state, pi, nodes, plugin.score_nodes(state, pi, nodes))

            with monkeypatch.context() as m:  # no index, no memo, no running totals: count every pod
                m.setattr(pts, "_required_pairs", lambda _sel: ())
                m.setattr(pts, "_count_key", lambda _sel, _ns: None)
                ref_state = CycleState()
                plugin.pre_score(ref_state, pi, nodes)
                scores = [NodeScore(ni.name, plugin.score(ref_state, pi, ni)[0]) for ni in nodes]
                plugin.normalize_score(ref_state, pi, scores)
            assert fast == [s.score for s in scores], (seed, step)
            assert len(set(fast)) > 1  # the cluster is uneven enough for the scores to differ
            # the snapshot changes between cycles: pods assumed (a PodGroup cycle), then undone
            if step == 3:
                snap.restore(mark)
            else:
                target = snap.node_names[rng.randrange(60)]
                p = make_pod(f"x{step}", node_name=target, labels={"app": "web", "tier": rng.choice("ab")})
                snap.assume_pod(PodInfo(p), target)


def test_extension_points_found_as_isinstance_finds_them() -> None:
    """The framework sorts plugins into extension points without typing's slow protocol check:
    every in-tree plugin, and plugins that have a hook only on the instance or set one to None,
    land where ``isinstance`` puts them, for every runtime-checkable protocol."""
    import typing

    from scheduler import interfaces
    from scheduler.framework import implements

    protocols = [
        v
        for v in vars(interfaces).values()
        if isinstance(v, type) and getattr(v, "_is_runtime_protocol", False) and v is not typing.Protocol
    ]
    assert len(protocols) > 15

    class NoneHook:
        name = "none-hook"
        filter = None

        def score(self, *_a: Any) -> Any:
            return 0, None

    class InstanceHook:
        name = "instance-hook"

        def __init__(self) -> None:
            self.reserve = lambda *_a: None

    class HalfReserve:
        name = "half-reserve"

        def reserve(self, *_a: Any) -> None:
            return None

    fw = Framework(default_profile(), Handle(rng=random.Random(1)), registry=default_registry())
    plugins = [*fw.plugins.values(), NoneHook(), InstanceHook(), HalfReserve()]
    found = 0
    for proto in protocols:
        for plugin in plugins:
            assert implements(plugin, proto) == isinstance(plugin, proto), (proto.__name__, plugin.name)
            found += isinstance(plugin, proto)
    assert found > len(fw.plugins)  # most plugins implement several points
    assert fw.filter_plugins and fw.score_plugins and fw.bind_plugins
