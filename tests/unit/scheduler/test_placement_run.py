"""A placement's run of identical pods (scheduler/placement_run.py) against the pod-by-pod cycle.

On random clusters (racks and zones, labels missing, nodes filling up mid-run, taints, cordons,
host ports, existing pods that spread counts and pod affinity terms see, terminating ones) and
random groups (one template, with odd pods among them: other requests, other labels, other
spreading selectors), the PodGroup algorithm with runs carried and with a full cycle per pod
must give the same placements, the same node for every pod, the same statuses and messages, the
same random draws and the same rotation index, and leave the snapshot as it was.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import pytest

import scheduler.placement_run as placement_run
import scheduler.podgroup_algorithm as pga
from apiserver.api.types import Obj
from apiserver.meta import FakeClock
from featuregates import FeatureGate
from scheduler.cache import Cache
from scheduler.cycle_memo import NODE_LIST_MEMOS
from scheduler.defaults import default_profile, default_registry
from scheduler.framework import Framework
from scheduler.interfaces import CycleState, Handle, PodGroupInfo
from scheduler.nodeinfo import PodInfo, compile_selector
from scheduler.placement_run import PlacementRun, WindowedRuns
from scheduler.podgroup_algorithm import PodGroupAlgorithm, PodGroupAlgorithmResult
from scheduler.podgroups import PodGroupState
from scheduler.records import Recorder
from scheduler.testing import make_node, make_pod

RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


def _cluster(
    r: random.Random, sizes: tuple[int, ...] = (8, 20, 60, 120, 210), roomy: bool = False
) -> tuple[list[Obj], list[Obj]]:
    """``roomy``: every node fits the group's first pods, so that a cycle's windows tile the
    rotation, as on a fresh cluster; a few small nodes fill up mid-run (and the windows shift)."""
    nodes: list[Obj] = []
    racks = r.randint(1, 5)
    n = r.choice(sizes)
    for i in range(n):
        labels: dict[str, str] = {}
        if r.random() > 0.05:
            labels[RACK] = f"rack-{r.randrange(racks) if r.random() < 0.3 else i % racks}"
        if r.random() > 0.1:
            labels[ZONE] = f"zone-{i % r.choice([1, 2, 3])}"
        taints = []
        if r.random() < 0.1:
            taints.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
        if not roomy and r.random() < 0.04:
            taints.append({"key": "hard", "value": "x", "effect": "NoSchedule"})
        small = not roomy or r.random() < 0.02
        nodes.append(
            make_node(
                f"n{i:03d}",
                cpu=str(r.choice([1, 2, 4, 8, 32] if not roomy else [2, 3] if small else [8, 32])),
                memory=r.choice(["2Gi", "8Gi", "64Gi"] if small else ["64Gi"]),
                pods=str(r.choice([2, 5, 20, 110] if small else [110])),
                labels=labels,
                taints=taints or None,
                unschedulable=not roomy and r.random() < 0.03,
            )
        )
    bound: list[Obj] = []
    for k in range(r.randrange(0, n)):
        kw: dict[str, Any] = {
            "requests": {"cpu": r.choice(["100m", "500m", "1"])},
            "labels": {"app": r.choice(["web", "db", "web"])},
            "node_name": f"n{r.randrange(n):03d}",
        }
        if r.random() < 0.1:
            kw["deletion_timestamp"] = "2026-01-01T00:00:00Z"
        if not roomy and r.random() < 0.08:
            term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": r.choice([ZONE, RACK])}
            kw["affinity"] = r.choice(
                [
                    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                    {
                        "podAntiAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {"weight": 5, "podAffinityTerm": term}
                            ]
                        }
                    },
                    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                ]
            )
        bound.append(make_pod(f"b{k}", **kw))
    return nodes, bound


def _group(
    r: random.Random, sizes: tuple[int, ...] = (2, 5, 12, 40), topology: float = 0.7
) -> tuple[Obj, list[Obj]]:
    size = r.choice(sizes)
    spec: Obj = {
        "schedulingPolicy": {"gang": {"minCount": r.randint(1, size)}} if r.random() < 0.8 else {"basic": {}}
    }
    if r.random() < topology:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    group = {"metadata": {"name": "g", "namespace": "default", "generation": 1}, "spec": spec}
    template: dict[str, Any] = {"requests": {"cpu": r.choice(["100m", "250m", "1"]), "memory": "100Mi"}}
    if r.random() < 0.3:
        template["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 3,
                        "preference": {
                            "matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-0"]}]
                        },
                    }
                ]
            }
        }
    if r.random() < 0.2:
        template["tolerations"] = [{"key": "soft", "operator": "Exists"}]
    if r.random() < 0.1:
        template["host_ports"] = [8080]
    if r.random() < 0.2:
        template["spread"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    pods = []
    second_half = r.random() < 0.2  # two templates, one after the other
    claims = r.random() < 0.5
    for k in range(size):
        kw = {**template, "labels": {"app": "web", "idx": str(k)}}
        if k >= size // 2 and second_half:
            kw["requests"] = {"cpu": "200m", "memory": "50Mi"}
        odd = r.random()
        if odd < 0.05:
            kw["requests"] = {"cpu": "300m"}
        elif odd < 0.1:
            kw["labels"] = {"app": "db", "idx": str(k)}
        elif odd < 0.13:
            kw["labels"] = {"app": "web", "idx": str(k), "spread": "own"}
        p = make_pod(f"m{k:02d}", **kw)
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        p["spec"]["hostname"] = f"m{k:02d}"
        if claims:  # a StatefulSet's volumeClaimTemplates: each pod its own claim
            p["spec"]["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": f"data-m{k:02d}"}}
            ]
        p["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u1", "controller": True}
        ]
        pods.append(p)
    return group, pods


def _default_selector(pod: Obj) -> Any:
    """The owner's selector, plus a Service's when the pod carries its label (so pods differ)."""
    labels = pod["metadata"].get("labels") or {}
    match = {"app": labels.get("app", "")}
    if labels.get("spread") == "own":
        match["spread"] = "own"
    return compile_selector({"matchLabels": match})


def _search(
    seed: int, carry_runs: bool, wide: bool = False
) -> tuple[PodGroupAlgorithmResult, Any, int, list[Any]]:
    """``wide``: clusters over which a cycle's window moves (more nodes than it scores), groups
    without a topology constraint and of more pods than a window has nodes."""
    r = random.Random(seed)
    percentage = None
    if wide:
        # windows of 100 nodes that tile the rotation (2, 3 or 4 of them) when every node fits
        nodes, bound = _cluster(r, (200, 300, 400), roomy=True)
        percentage = 10_000 // len(nodes)
        group_obj, pods = _group(r, (30, 90, 160), topology=0.0)
    else:
        nodes, bound = _cluster(r)
        group_obj, pods = _group(r)
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in bound:
        cache.add_pod(p)
    cache.add_pod_group(group_obj)
    snap = cache.snapshot()
    rng = random.Random(seed)
    handle = Handle(
        gates=FeatureGate(),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        rng=rng,
        default_spread_selector=_default_selector,
    )
    profile = default_profile(percentage_of_nodes_to_score=percentage)
    fw = Framework(profile, handle, registry=default_registry())
    fw.next_start_node_index = r.randrange(1000)
    pod_group = cache.get_pod_group("default", "g")
    before = _usage(snap)
    group = PodGroupInfo("default", "g", pod_group, [PodInfo(p) for p in pods], PodGroupState("default/g"))
    result = PodGroupAlgorithm(fw, carry_runs=carry_runs).run(CycleState(), group, snap)
    assert _usage(snap) == before  # every placement rolled back
    return result, rng.getstate(), fw.next_start_node_index, _view(result)


def _usage(snap: Any) -> dict[str, Any]:
    return {
        name: (len(ni.pods), {k: v for k, v in ni.requested.items() if v})
        for name, ni in snap.node_info_map.items()
    }


#: the node table's per-cycle memos of Score (which nodes' rows, whether a list is worth the
#: table), read by Score of the same cycle only, like PreScore's state
_SCRATCH = frozenset(NODE_LIST_MEMOS)


def _state(a: Any) -> Any:
    """What Reserve, Permit and binding get of a pod's cycle: its PreFilter results and skips."""
    st = a.state
    if st is None or not a.node_name:
        return None
    return (
        sorted(st.skip_filter_plugins),
        sorted(st.skip_score_plugins),
        {
            k: type(v).__name__
            for k, v in st._data.items()
            if not k.startswith("PreScore") and k not in _SCRATCH
        },
    )


def _view(result: PodGroupAlgorithmResult) -> list[Any]:
    """Everything a caller sees of the search: per evaluated placement, per pod (and the cycle
    states of the chosen placement's pods)."""
    out: list[Any] = [
        result.success,
        result.status.message() if result.status is not None else None,
        result.placement.placement.name if result.placement else None,
        result.best.placement.name if result.best else None,
        [p.name for p in result.skipped],
    ]
    for ev in result.evaluated:
        chosen = result.success and ev is result.placement
        out.append(
            (
                ev.placement.name,
                ev.status.message() if ev.status is not None else None,
                ev.score,
                [
                    (
                        a.pod_info.key,
                        a.node_name,
                        a.status.message() if a.status is not None else None,
                        a.message,
                        a.reasons,
                        sorted(a.unschedulable_plugins),
                        _state(a) if chosen else None,
                    )
                    for a in ev.assignments
                ],
            )
        )
    return out


@pytest.fixture(params=["lists", "arrays"])
def run_columns(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run's columns as Python lists, or as numpy arrays from the first node on
    (``ARRAY_RUN_MIN_NODES``: rack-sized runs and windows use arrays by default)."""
    monkeypatch.setattr(placement_run, "ARRAY_RUN_MIN_NODES", 1 if request.param == "arrays" else 10**9)
    return str(request.param)


@pytest.mark.parametrize("block", range(8))
def test_runs_choose_what_the_pod_by_pod_cycle_chooses_on_random_clusters(
    block: int, monkeypatch: pytest.MonkeyPatch, run_columns: str
) -> None:
    carried = 0
    real_next = PlacementRun.next

    def counting_next(self: PlacementRun, state: CycleState, pod_info: PodInfo) -> str | None:
        nonlocal carried
        host = real_next(self, state, pod_info)
        carried += host is not None
        return host

    monkeypatch.setattr(PlacementRun, "next", counting_next)
    if block % 2:  # as with a PreFilter plugin the run does not know: PreFilter for every pod
        monkeypatch.setattr(placement_run, "PURE_PRE_FILTERS", frozenset())
    for seed in range(block * 50, block * 50 + 50):
        full = _search(seed, carry_runs=False)
        runs = _search(seed, carry_runs=True)
        assert runs[3] == full[3], f"seed {seed}"
        assert runs[1] == full[1], f"seed {seed}: random draws differ"
        assert runs[2] == full[2], f"seed {seed}: rotation index differs"
    assert carried > 50  # the runs were taken, not bypassed


def _count_window_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts (in the returned one-item list) the hosts the windows' runs pick, so a test can
    tell the runs were taken rather than bypassed."""
    carried = [0]
    real_next = WindowedRuns.next

    def counting_next(self: WindowedRuns, *args: Any) -> str | None:
        host = real_next(self, *args)
        carried[0] += host is not None
        return host

    monkeypatch.setattr(WindowedRuns, "next", counting_next)
    return carried


def _assert_wide_runs_choose_as_pod_by_pod(seeds: Iterable[int]) -> None:
    """On the wide cluster, the windows' runs choose the hosts, draws and rotation of the
    pod-by-pod cycle, for every seed."""
    for seed in seeds:
        full = _search(seed, carry_runs=False, wide=True)
        runs = _search(seed, carry_runs=True, wide=True)
        assert runs[3] == full[3], f"seed {seed}"
        assert runs[1] == full[1], f"seed {seed}: random draws differ"
        assert runs[2] == full[2], f"seed {seed}: rotation index differs"


@pytest.mark.parametrize("block", range(4))
def test_runs_per_window_over_the_whole_cluster_choose_what_the_pod_by_pod_cycle_chooses(
    block: int, monkeypatch: pytest.MonkeyPatch, run_columns: str
) -> None:
    """Gangs without topology on clusters wider than a cycle's window: the window moves from pod
    to pod, and each window's run (scheduler.placement_run.WindowedRuns) must pick as kube does."""
    carried = _count_window_runs(monkeypatch)
    if block % 2:
        monkeypatch.setattr(placement_run, "PURE_PRE_FILTERS", frozenset())
    _assert_wide_runs_choose_as_pod_by_pod(range(block * 12, block * 12 + 12))
    assert carried[0] > 100  # the windows' runs were taken, not bypassed


def test_window_runs_told_lazily_choose_alike_when_fewer_runs_than_windows_are_kept(
    monkeypatch: pytest.MonkeyPatch, run_columns: str
) -> None:
    """With room for one run only, a window's run that ended since it was last told (its node
    filled up) must not hold the place: runs are told of assumed pods when next read
    (WindowedRuns._catch_up), and the choices and the rotation stay the pod-by-pod cycle's."""
    carried = _count_window_runs(monkeypatch)
    monkeypatch.setattr(placement_run, "MAX_WINDOW_RUNS", 1)
    _assert_wide_runs_choose_as_pod_by_pod(range(12))
    assert carried[0] > 20


@pytest.mark.parametrize("records", [False, True], ids=["records-off", "records-on"])
def test_a_rack_gang_of_statefulset_pods_is_carried_after_its_first_pod(
    monkeypatch: pytest.MonkeyPatch, records: bool
) -> None:
    """100 identical pods over 2 racks of 20 nodes: one full cycle per placement, 99 carried —
    with gangplane's scheduling records on too, whose PodGroup record is made of the results."""
    cache = Cache()
    for i in range(40):
        cache.add_node(make_node(f"n{i:02d}", cpu="8", labels={RACK: f"r{i % 2}", ZONE: f"z{i % 4}"}))
    cache.add_pod_group(
        {
            "metadata": {"name": "g", "namespace": "default", "generation": 1},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": 100}},
                "schedulingConstraints": {"topology": [{"key": RACK}]},
            },
        }
    )
    pods = []
    for k in range(100):
        p = make_pod(f"m{k}", requests={"cpu": "100m"}, labels={"app": "web"})
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(p)
    results = []
    real = pga.schedule_pod
    for carry in (False, True):
        handle = Handle(
            gates=FeatureGate(),
            get_pod_group=cache.get_pod_group,
            pod_group_state=cache.pod_group_state,
            rng=random.Random(1),
            default_spread_selector=_default_selector,
            records=Recorder(None, FakeClock()) if records else None,  # type: ignore[arg-type]  # no loop: kept in memory
        )
        fw = Framework(default_profile(), handle, registry=default_registry())
        full_cycles = 0

        def counting(*a: Any, **kw: Any) -> Any:
            nonlocal full_cycles
            full_cycles += 1
            return real(*a, **kw)

        monkeypatch.setattr(pga, "schedule_pod", counting)
        group = PodGroupInfo(
            "default",
            "g",
            cache.get_pod_group("default", "g"),
            [PodInfo(p) for p in pods],
            PodGroupState("default/g"),
        )
        res = PodGroupAlgorithm(fw, carry_runs=carry, decide_certain=False).run(
            CycleState(), group, cache.snapshot()
        )
        results.append((_view(res), full_cycles))
    (full_view, full_n), (run_view, run_n) = results
    assert run_view == full_view
    assert full_n == 200 and run_n == 2
    # spreading over hostnames: 100 pods over a rack's 20 nodes of 8 cpu, 5 on each
    winner = full_view[5]
    per_node: dict[str, int] = {}
    for a in winner[3]:
        per_node[a[1]] = per_node.get(a[1], 0) + 1
    assert sorted(per_node.values()) == [5] * 20


class _Nominated:
    """One pod of higher priority nominated to a node (preemption made room for it there)."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.pod = PodInfo(make_pod("big", requests={"cpu": "7"}, priority=1000, nominated_node_name=node))

    def has_nominated_pods(self) -> bool:
        return True

    def nominated_node_names(self) -> set[str]:
        return {self.node}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [self.pod] if node_name == self.node else []


def test_no_run_while_pods_are_nominated_and_the_choices_stay_the_pod_by_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With a pod nominated anywhere each pod's Filter must count it: no pod is carried."""
    cache = Cache()
    for i in range(20):
        cache.add_node(make_node(f"n{i:02d}", cpu="8", labels={RACK: f"r{i % 2}", ZONE: "z"}))
    cache.add_pod_group(
        {
            "metadata": {"name": "g", "namespace": "default", "generation": 1},
            "spec": {
                "schedulingPolicy": {"gang": {"minCount": 30}},
                "schedulingConstraints": {"topology": [{"key": RACK}]},
            },
        }
    )
    pods = []
    for k in range(30):
        p = make_pod(f"m{k}", requests={"cpu": "500m"}, labels={"app": "web"})
        p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        pods.append(p)
    carried = 0
    real_next = PlacementRun.next

    def counting_next(self: PlacementRun, state: CycleState, pod_info: PodInfo) -> str | None:
        nonlocal carried
        host = real_next(self, state, pod_info)
        carried += host is not None
        return host

    monkeypatch.setattr(PlacementRun, "next", counting_next)
    views = []
    for carry in (False, True):
        handle = Handle(
            gates=FeatureGate(),
            get_pod_group=cache.get_pod_group,
            pod_group_state=cache.pod_group_state,
            rng=random.Random(2),
            default_spread_selector=_default_selector,
            nominator=_Nominated("n04"),
        )
        fw = Framework(default_profile(), handle, registry=default_registry())
        group = PodGroupInfo(
            "default",
            "g",
            cache.get_pod_group("default", "g"),
            [PodInfo(p) for p in pods],
            PodGroupState("default/g"),
        )
        views.append(
            _view(PodGroupAlgorithm(fw, carry_runs=carry).run(CycleState(), group, cache.snapshot()))
        )
    assert views[0] == views[1]
    assert carried == 0
    # the nominated pod's 7 cpu stay reserved on n04: the gang's pods there fit in the 1 cpu left
    on_n04 = [a for a in views[0][5][3] if a[1] == "n04"]
    assert 0 < len(on_n04) <= 2


@pytest.mark.parametrize(
    ("nodes", "pods", "wanted"),
    [
        (5000, 1000, True),  # ten windows of 500: start indices come back every ten pods
        (5000, 10, False),  # no start index comes back within the group
        (5000, 3, False),  # a gang of three never meets its first window again
        (5001, 1000, False),  # windows of 500 don't tile 5,001 nodes
        (1000, 1000, False),  # windows of 420: 50 start indices, seldom reused
        (80, 1000, False),  # one window holds every node: a plain PlacementRun's case
    ],
)
def test_window_runs_are_kept_only_where_the_start_indices_come_back(
    nodes: int, pods: int, wanted: bool
) -> None:
    fw = Framework(default_profile(), Handle(gates=FeatureGate()), registry=default_registry())
    assert pga._windows_come_back(fw, nodes, pods) is wanted
