"""Scheduler plugins, case by case, against kube's semantics and exact reason strings."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from apiserver.api.types import Obj
from scheduler import schedule_one
from scheduler.cache import Cache
from scheduler.defaults import default_profile, default_registry
from scheduler.diagnosis import FitError
from scheduler.framework import CycleState, Framework, Handle, NodeScore, PluginSpec, Profile
from scheduler.metrics import SchedulerMetrics
from scheduler.nodeinfo import PodInfo, compute_pod_requests, pod_requests_units
from scheduler.plugins.balanced_allocation import BalancedAllocation
from scheduler.plugins.default_binder import DefaultBinder
from scheduler.plugins.inter_pod_affinity import InterPodAffinity
from scheduler.plugins.node_affinity import NodeAffinity
from scheduler.plugins.node_name import NodeName
from scheduler.plugins.node_ports import NodePorts
from scheduler.plugins.node_resources_fit import NodeResourcesFit
from scheduler.plugins.node_unschedulable import NodeUnschedulable
from scheduler.plugins.pod_topology_spread import PodTopologySpread, build_default_selector
from scheduler.plugins.priority_sort import PrioritySort
from scheduler.plugins.scheduling_gates import SchedulingGates
from scheduler.plugins.taint_toleration import TaintToleration
from scheduler.queue import QueuedPodInfo
from scheduler.status import Code, Status
from scheduler.testing import (
    FakeClock,
    RecordingClient,
    container,
    make_node,
    make_pod,
    node_info,
    snapshot_of,
)

UNSCHED = Code.UNSCHEDULABLE
UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def code_and_reasons(s: Status | None) -> tuple[Code, list[str]]:
    return (Code.SUCCESS, []) if s is None else (s.code, s.reasons)


# --- requests ------------------------------------------------------------------------------------

GI = 1024**3
MI = 1024**2


@pytest.mark.parametrize(
    ("name", "pod", "want"),
    [
        ("no requests", make_pod("p"), {}),
        (
            "single container",
            make_pod("p", requests={"cpu": "500m", "memory": "1Gi"}),
            {"cpu": 500, "memory": GI},
        ),
        (
            "containers add up",
            make_pod("p", containers=[container("a", {"cpu": "1"}), container("b", {"cpu": "250m"})]),
            {"cpu": 1250},
        ),
        (
            "init container peak wins over the steady state",
            make_pod(
                "p",
                containers=[container("a", {"cpu": "1", "memory": "1Gi"})],
                init_containers=[
                    container("i1", {"cpu": "2", "memory": "512Mi"}),
                    container("i2", {"cpu": "500m"}),
                ],
            ),
            {"cpu": 2000, "memory": GI},
        ),
        (
            "sidecars add to containers and to later init containers",
            make_pod(
                "p",
                containers=[container("a", {"cpu": "1"})],
                init_containers=[
                    container("side", {"cpu": "500m"}, restart_policy="Always"),
                    container("i", {"cpu": "1200m"}),
                ],
            ),
            {"cpu": 1700},
        ),
        (
            "sidecar started after a big init container does not add to it",
            make_pod(
                "p",
                containers=[container("a", {"cpu": "100m"})],
                init_containers=[
                    container("i", {"cpu": "2"}),
                    container("side", {"cpu": "1"}, restart_policy="Always"),
                ],
            ),
            {"cpu": 2000},
        ),
        (
            "overhead is added last",
            make_pod(
                "p", requests={"cpu": "1", "memory": "1Gi"}, overhead={"cpu": "250m", "memory": "120Mi"}
            ),
            {"cpu": 1250, "memory": GI + 120 * MI},
        ),
        (
            "extended resources in units",
            make_pod("p", requests={"nvidia.com/gpu": "2"}),
            {"nvidia.com/gpu": 2},
        ),
    ],
)
def test_pod_requests(name: str, pod: Obj, want: dict[str, int]) -> None:
    got = {k: v for k, v in pod_requests_units(pod).items() if v}
    assert got == want
    assert {k: v for k, v in compute_pod_requests(pod).items() if v} == want


@pytest.mark.parametrize(
    ("name", "pod", "want"),
    [
        ("zero requests get 100m/200Mi", make_pod("p"), (100, 200 * MI)),
        ("only missing ones are defaulted", make_pod("p", requests={"cpu": "2"}), (2000, 200 * MI)),
        ("explicit zero stays zero", make_pod("p", requests={"cpu": "0", "memory": "0"}), (0, 0)),
        (
            "per container",
            make_pod("p", containers=[container("a", {"cpu": "1"}), container("b")]),
            (1100, 400 * MI),
        ),
    ],
)
def test_non_zero_requests_for_scoring(name: str, pod: Obj, want: tuple[int, int]) -> None:
    pi = PodInfo(pod)
    assert (pi.non_zero_cpu, pi.non_zero_memory) == want


# --- NodeResourcesFit ----------------------------------------------------------------------------


def run_filter(plugin: Any, pod: Obj, ni: Any, nodes: list[Any] | None = None) -> Status | None:
    state = CycleState()
    pi = PodInfo(pod)
    if hasattr(plugin, "pre_filter"):
        _, s = plugin.pre_filter(state, pi, nodes if nodes is not None else [ni])
        if s is not None and s.is_skip():
            return None
        assert s is None or s.is_success(), s
    return plugin.filter(state, pi, ni)


@pytest.mark.parametrize(
    ("name", "pod", "node", "existing", "want"),
    [
        ("fits", make_pod("p", requests={"cpu": "1"}), make_node("n", cpu="2"), [], (Code.SUCCESS, [])),
        (
            "zero-request pod fits a full node",
            make_pod("p"),
            make_node("n", cpu="1"),
            [make_pod("e", node_name="n", requests={"cpu": "1"})],
            (Code.SUCCESS, []),
        ),
        (
            "zero-request pod still needs a pod slot",
            make_pod("p"),
            make_node("n", pods="1"),
            [make_pod("e", node_name="n")],
            (UNSCHED, ["Too many pods"]),
        ),
        (
            "insufficient cpu, resolvable by preemption",
            make_pod("p", requests={"cpu": "1"}),
            make_node("n", cpu="2"),
            [make_pod("e", node_name="n", requests={"cpu": "1500m"})],
            (UNSCHED, ["Insufficient cpu"]),
        ),
        (
            "request above allocatable is unresolvable",
            make_pod("p", requests={"cpu": "3"}),
            make_node("n", cpu="2"),
            [],
            (UNRES, ["Insufficient cpu"]),
        ),
        (
            "every shortage is reported, in kube's order",
            make_pod("p", requests={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}),
            make_node("n", cpu="1", memory="1Gi", pods="1"),
            [make_pod("e", node_name="n", requests={"cpu": "500m", "memory": "512Mi"})],
            (
                UNRES,
                ["Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient nvidia.com/gpu"],
            ),
        ),
        (
            "gpu used up",
            make_pod("p", requests={"nvidia.com/gpu": "2"}),
            make_node("n", extra={"nvidia.com/gpu": "4"}),
            [make_pod("e", node_name="n", requests={"nvidia.com/gpu": "3"})],
            (UNSCHED, ["Insufficient nvidia.com/gpu"]),
        ),
        (
            "init container peak counts",
            make_pod("p", requests={"cpu": "100m"}, init_containers=[container("i", {"cpu": "3"})]),
            make_node("n", cpu="4"),
            [make_pod("e", node_name="n", requests={"cpu": "2"})],
            (UNSCHED, ["Insufficient cpu"]),
        ),
        (
            "sidecars count next to containers",
            make_pod(
                "p",
                requests={"cpu": "1"},
                init_containers=[container("s", {"cpu": "1"}, restart_policy="Always")],
            ),
            make_node("n", cpu="2"),
            [make_pod("e", node_name="n", requests={"cpu": "500m"})],
            (UNSCHED, ["Insufficient cpu"]),
        ),
        (
            "overhead counts",
            make_pod("p", requests={"memory": "1Gi"}, overhead={"memory": "1Mi"}),
            make_node("n", memory="2Gi"),
            [make_pod("e", node_name="n", requests={"memory": "1Gi"})],
            (UNSCHED, ["Insufficient memory"]),
        ),
    ],
)
def test_node_resources_fit_filter(name: str, pod: Obj, node: Obj, existing: list[Obj], want: Any) -> None:
    s = run_filter(NodeResourcesFit(), pod, node_info(node, *existing))
    assert code_and_reasons(s) == want


def test_node_resources_fit_ignored_extended_resources() -> None:
    plugin = NodeResourcesFit({"ignoredResourceGroups": ["example.com"]})
    pod = make_pod("p", requests={"example.com/foo": "1"})
    assert run_filter(plugin, pod, node_info(make_node("n"))) is None


def score_nodes(plugin: Any, pod: Obj, nis: list[Any]) -> list[int]:
    state = CycleState()
    pi = PodInfo(pod)
    if hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, pi, nis)
        if s is not None and s.is_skip():
            return []
    scores = [NodeScore(ni.name, plugin.score(state, pi, ni)[0]) for ni in nis]
    if hasattr(plugin, "normalize_score"):
        plugin.normalize_score(state, pi, scores)
    return [s.score for s in scores]


@pytest.mark.parametrize(
    ("name", "args", "pod", "existing_cpu", "want"),
    [
        # node: 4 cpu, 8Gi; the existing pod also counts 200Mi memory (non-zero default).
        # LeastAllocated = mean(free*100//alloc), MostAllocated = mean(used*100//alloc) over cpu and memory
        ("least allocated, empty node", {}, make_pod("p", requests={"cpu": "1", "memory": "2Gi"}), [], [75]),
        (
            "least allocated, busier node",
            {},
            make_pod("p", requests={"cpu": "1", "memory": "2Gi"}),
            ["2"],
            [48],
        ),
        (
            "most allocated prefers the busier node",
            {"scoringStrategy": {"type": "MostAllocated"}},
            make_pod("p", requests={"cpu": "1", "memory": "2Gi"}),
            ["2"],
            [51],
        ),
        # zero requests score as 100m/200Mi: cpu (4000-100)*100//4000 = 97, memory (8192-200)*100//8192 = 97
        ("zero-request pod scores with non-zero defaults", {}, make_pod("p"), [], [97]),
    ],
)
def test_node_resources_fit_score(
    name: str, args: Obj, pod: Obj, existing_cpu: list[str], want: list[int]
) -> None:
    existing = [make_pod(f"e{i}", node_name="n", requests={"cpu": c}) for i, c in enumerate(existing_cpu)]
    assert score_nodes(NodeResourcesFit(args), pod, [node_info(make_node("n"), *existing)]) == want


def test_balanced_allocation() -> None:
    plugin = BalancedAllocation()
    balanced = make_pod("p", requests={"cpu": "2", "memory": "4Gi"})
    lopsided = make_pod("q", requests={"cpu": "2", "memory": "0"})
    n = node_info(make_node("n"))
    assert score_nodes(plugin, balanced, [n]) == [100]
    assert score_nodes(plugin, lopsided, [n]) == [75]  # fractions 0.5 and 0 -> std 0.25
    assert score_nodes(plugin, make_pod("be"), [n]) == []  # best-effort pods skip the plugin


# --- taints, unschedulable, node name ------------------------------------------------------------

NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
NO_EXECUTE = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
PREFER = {"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}
TAINT_REASON = "node(s) had untolerated taint(s)"


@pytest.mark.parametrize(
    ("name", "taints", "tolerations", "want"),
    [
        ("no taints", [], [], (Code.SUCCESS, [])),
        ("NoSchedule untolerated", [NO_SCHEDULE], [], (UNRES, [TAINT_REASON])),
        ("NoExecute untolerated", [NO_EXECUTE], [], (UNRES, [TAINT_REASON])),
        ("PreferNoSchedule never filters", [PREFER], [], (Code.SUCCESS, [])),
        (
            "Equal toleration",
            [NO_SCHEDULE],
            [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
            (Code.SUCCESS, []),
        ),
        (
            "Equal is the default operator",
            [NO_SCHEDULE],
            [{"key": "dedicated", "value": "gpu"}],
            (Code.SUCCESS, []),
        ),
        ("value mismatch", [NO_SCHEDULE], [{"key": "dedicated", "value": "cpu"}], (UNRES, [TAINT_REASON])),
        (
            "Exists ignores the value",
            [NO_SCHEDULE],
            [{"key": "dedicated", "operator": "Exists"}],
            (Code.SUCCESS, []),
        ),
        (
            "empty key with Exists tolerates everything",
            [NO_SCHEDULE, NO_EXECUTE],
            [{"operator": "Exists"}],
            (Code.SUCCESS, []),
        ),
        (
            "effect must match when set",
            [NO_EXECUTE],
            [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
            (UNRES, [TAINT_REASON]),
        ),
    ],
)
def test_taint_toleration_filter(name: str, taints: list[Obj], tolerations: list[Obj], want: Any) -> None:
    pod = make_pod("p", tolerations=tolerations)
    assert (
        code_and_reasons(run_filter(TaintToleration(), pod, node_info(make_node("n", taints=taints)))) == want
    )


def test_taint_toleration_score_counts_prefer_no_schedule_reversed() -> None:
    other = {"key": "other", "value": "x", "effect": "PreferNoSchedule"}
    nodes = [
        node_info(make_node("clean")),
        node_info(make_node("one", taints=[PREFER])),
        node_info(make_node("two", taints=[PREFER, other])),
        node_info(make_node("hard", taints=[NO_SCHEDULE])),  # NoSchedule does not count for scoring
    ]
    assert score_nodes(TaintToleration(), make_pod("p"), nodes) == [100, 50, 0, 100]
    tolerant = make_pod(
        "p", tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "PreferNoSchedule"}]
    )
    assert score_nodes(TaintToleration(), tolerant, nodes) == [100, 100, 0, 100]


@pytest.mark.parametrize(
    ("name", "unschedulable", "tolerations", "want"),
    [
        ("schedulable", False, [], (Code.SUCCESS, [])),
        ("cordoned", True, [], (UNRES, ["node(s) were unschedulable"])),
        (
            "tolerates the unschedulable taint",
            True,
            [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
            (Code.SUCCESS, []),
        ),
    ],
)
def test_node_unschedulable(name: str, unschedulable: bool, tolerations: list[Obj], want: Any) -> None:
    ni = node_info(make_node("n", unschedulable=unschedulable))
    assert (
        code_and_reasons(run_filter(NodeUnschedulable(), make_pod("p", tolerations=tolerations), ni)) == want
    )


def test_node_name() -> None:
    ni = node_info(make_node("n1"))
    assert run_filter(NodeName(), make_pod("p"), ni) is None
    assert run_filter(NodeName(), make_pod("p", node_name="n1"), ni) is None
    assert code_and_reasons(run_filter(NodeName(), make_pod("p", node_name="n2"), ni)) == (
        UNRES,
        ["node(s) didn't match the requested node name"],
    )


# --- node affinity -------------------------------------------------------------------------------

AFF_REASON = "node(s) didn't match Pod's node affinity/selector"


def required(*terms: Obj) -> Obj:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def expr(key: str, op: str, *values: str) -> Obj:
    e: Obj = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


LABELS = {"zone": "a", "gen": "5", "ssd": "true"}


@pytest.mark.parametrize(
    ("name", "selector", "affinity", "fits"),
    [
        ("no constraints", None, None, True),
        ("nodeSelector matches", {"zone": "a"}, None, True),
        ("nodeSelector mismatch", {"zone": "b"}, None, False),
        ("In", None, required({"matchExpressions": [expr("zone", "In", "a", "b")]}), True),
        ("In missing label", None, required({"matchExpressions": [expr("rack", "In", "r1")]}), False),
        ("NotIn", None, required({"matchExpressions": [expr("zone", "NotIn", "a")]}), False),
        (
            "NotIn with the label absent matches",
            None,
            required({"matchExpressions": [expr("rack", "NotIn", "r1")]}),
            True,
        ),
        ("Exists", None, required({"matchExpressions": [expr("ssd", "Exists")]}), True),
        ("DoesNotExist", None, required({"matchExpressions": [expr("ssd", "DoesNotExist")]}), False),
        ("Gt", None, required({"matchExpressions": [expr("gen", "Gt", "4")]}), True),
        ("Gt equal is false", None, required({"matchExpressions": [expr("gen", "Gt", "5")]}), False),
        ("Lt", None, required({"matchExpressions": [expr("gen", "Lt", "6")]}), True),
        ("Lt non-integer label", None, required({"matchExpressions": [expr("zone", "Lt", "6")]}), False),
        (
            "expressions within a term are ANDed",
            None,
            required({"matchExpressions": [expr("zone", "In", "a"), expr("ssd", "DoesNotExist")]}),
            False,
        ),
        (
            "terms are ORed",
            None,
            required(
                {"matchExpressions": [expr("zone", "In", "b")]}, {"matchExpressions": [expr("ssd", "Exists")]}
            ),
            True,
        ),
        ("an empty term matches nothing", None, required({}), False),
        (
            "matchFields metadata.name",
            None,
            required({"matchFields": [expr("metadata.name", "In", "n1")]}),
            True,
        ),
        (
            "matchFields other name",
            None,
            required({"matchFields": [expr("metadata.name", "In", "n2")]}),
            False,
        ),
        (
            "nodeSelector AND affinity",
            {"zone": "b"},
            required({"matchExpressions": [expr("ssd", "Exists")]}),
            False,
        ),
    ],
)
def test_node_affinity_filter(name: str, selector: Obj | None, affinity: Obj | None, fits: bool) -> None:
    pod = make_pod("p", node_selector=selector, affinity=affinity)
    s = run_filter(NodeAffinity(), pod, node_info(make_node("n1", labels=LABELS)))
    assert code_and_reasons(s) == ((Code.SUCCESS, []) if fits else (UNRES, [AFF_REASON]))


@pytest.mark.parametrize(
    ("name", "affinity", "want_names", "want_status"),
    [
        (
            "no node-name terms: all nodes",
            required({"matchExpressions": [expr("zone", "In", "a")]}),
            None,
            None,
        ),
        ("pinned", required({"matchFields": [expr("metadata.name", "In", "n1", "n2")]}), {"n1", "n2"}, None),
        (
            "ORed terms union",
            required(
                {"matchFields": [expr("metadata.name", "In", "n1")]},
                {"matchFields": [expr("metadata.name", "In", "n3")]},
            ),
            {"n1", "n3"},
            None,
        ),
        (
            "one unpinned term frees all nodes",
            required(
                {"matchFields": [expr("metadata.name", "In", "n1")]},
                {"matchExpressions": [expr("zone", "Exists")]},
            ),
            None,
            None,
        ),
        (
            "ANDed fields intersect to nothing",
            required(
                {"matchFields": [expr("metadata.name", "In", "n1"), expr("metadata.name", "In", "n2")]},
            ),
            None,
            (UNRES, ["pod affinity terms conflict"]),
        ),
    ],
)
def test_node_affinity_pre_filter(
    name: str, affinity: Obj, want_names: set[str] | None, want_status: Any
) -> None:
    res, s = NodeAffinity().pre_filter(CycleState(), PodInfo(make_pod("p", affinity=affinity)), [])
    if want_status is not None:
        assert code_and_reasons(s) == want_status
        return
    assert s is None
    assert (res.node_names if res else None) == want_names


def test_node_affinity_preferred_score() -> None:
    pod = make_pod(
        "p",
        affinity={
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 2, "preference": {"matchExpressions": [expr("zone", "In", "a")]}},
                    {"weight": 6, "preference": {"matchExpressions": [expr("ssd", "Exists")]}},
                ]
            }
        },
    )
    nodes = [
        node_info(make_node("both", labels={"zone": "a", "ssd": "1"})),
        node_info(make_node("ssd", labels={"ssd": "1"})),
        node_info(make_node("zone", labels={"zone": "a"})),
        node_info(make_node("none")),
    ]
    assert score_nodes(NodeAffinity(), pod, nodes) == [100, 75, 25, 0]
    assert score_nodes(NodeAffinity(), make_pod("q"), nodes) == []  # no preferences: skipped


# --- node ports ----------------------------------------------------------------------------------


def port_pod(name: str, port: int, ip: str = "", protocol: str = "", node: str = "") -> Obj:
    p: Obj = {"containerPort": port, "hostPort": port}
    if ip:
        p["hostIP"] = ip
    if protocol:
        p["protocol"] = protocol
    return make_pod(name, node_name=node, containers=[container(ports=[p])])


@pytest.mark.parametrize(
    ("name", "existing", "pod", "conflict"),
    [
        ("free", [], port_pod("p", 8080), False),
        ("same port", [port_pod("e", 8080, node="n")], port_pod("p", 8080), True),
        ("different port", [port_pod("e", 8081, node="n")], port_pod("p", 8080), False),
        ("different protocol", [port_pod("e", 53, protocol="UDP", node="n")], port_pod("p", 53), False),
        (
            "different IPs",
            [port_pod("e", 80, ip="10.0.0.1", node="n")],
            port_pod("p", 80, ip="10.0.0.2"),
            False,
        ),
        (
            "0.0.0.0 conflicts with any IP",
            [port_pod("e", 80, ip="10.0.0.1", node="n")],
            port_pod("p", 80),
            True,
        ),
        (
            "any IP conflicts with 0.0.0.0",
            [port_pod("e", 80, node="n")],
            port_pod("p", 80, ip="10.0.0.2"),
            True,
        ),
    ],
)
def test_node_ports(name: str, existing: list[Obj], pod: Obj, conflict: bool) -> None:
    s = run_filter(NodePorts(), pod, node_info(make_node("n"), *existing))
    want = (
        (UNSCHED, ["node(s) didn't have free ports for the requested pod ports"])
        if conflict
        else (Code.SUCCESS, [])
    )
    assert code_and_reasons(s) == want


# --- pod topology spread -------------------------------------------------------------------------

SPREAD_REASON = "node(s) didn't match pod topology spread constraints"
APP = {"app": "web"}


def zone_nodes(*zones: str) -> list[Obj]:
    return [make_node(f"n{i}", labels={"zone": z}) for i, z in enumerate(zones)]


def spread(
    max_skew: int = 1,
    key: str = "zone",
    when: str = "DoNotSchedule",
    min_domains: int | None = None,
    **extra: Any,
) -> Obj:
    c: Obj = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": APP},
    }
    if min_domains is not None:
        c["minDomains"] = min_domains
    c.update(extra)
    return c


def web(name: str, node: str, **kw: Any) -> Obj:
    return make_pod(name, node_name=node, labels=APP, **kw)


def spread_filter(pod: Obj, nodes: list[Obj], pods: list[Obj]) -> dict[str, tuple[Code, list[str]]]:
    snap = snapshot_of(nodes, pods)
    plugin = PodTopologySpread({}, Handle(snapshot=snap))
    state = CycleState()
    pi = PodInfo(pod)
    _, s = plugin.pre_filter(state, pi, snap.list())
    assert s is None
    return {ni.name: code_and_reasons(plugin.filter(state, pi, ni)) for ni in snap.list()}


OK = (Code.SUCCESS, [])
SKEW = (UNSCHED, [SPREAD_REASON])


@pytest.mark.parametrize(
    ("name", "constraint", "nodes", "pods", "want"),
    [
        (
            "zone a has 2, b has 1: only b fits with maxSkew 1",
            spread(),
            zone_nodes("a", "a", "b"),
            [web("w1", "n0"), web("w2", "n1"), web("w3", "n2")],
            {"n0": SKEW, "n1": SKEW, "n2": OK},
        ),
        (
            "maxSkew 2 allows the fuller zone",
            spread(max_skew=2),
            zone_nodes("a", "a", "b"),
            [web("w1", "n0"), web("w2", "n1"), web("w3", "n2")],
            {"n0": OK, "n1": OK, "n2": OK},
        ),
        (
            "terminating and other-namespace pods do not count",
            spread(),
            zone_nodes("a", "b"),
            [
                web("t", "n0", deletion_timestamp="2026-01-01T00:00:00Z"),
                make_pod("o", "other", node_name="n0", labels=APP),
            ],
            {"n0": OK, "n1": OK},
        ),
        (
            "node without the topology key is unresolvable",
            spread(),
            [*zone_nodes("a"), make_node("bare")],
            [],
            {"n0": OK, "bare": (UNRES, [SPREAD_REASON + " (missing required label)"])},
        ),
        (
            "minDomains above the domain count makes the global minimum 0",
            spread(min_domains=3),
            zone_nodes("a", "b"),
            [web("w1", "n0"), web("w2", "n1")],
            {"n0": SKEW, "n1": SKEW},
        ),
        (
            "nodeAffinityPolicy Honor (default): excluded nodes are no domain",
            spread(),
            [make_node("n0", labels={"zone": "a", "pool": "x"}), make_node("n1", labels={"zone": "b"})],
            [web("w1", "n0")],
            {"n0": OK, "n1": OK},
        ),
    ],
)
def test_pod_topology_spread_filter(
    name: str, constraint: Obj, nodes: list[Obj], pods: list[Obj], want: Any
) -> None:
    selector = {"pool": "x"} if "Honor" in name else None
    pod = make_pod("new", labels=APP, spread=[constraint], node_selector=selector)
    assert spread_filter(pod, nodes, pods) == want


def test_pod_topology_spread_node_affinity_policy_ignore_counts_all_domains() -> None:
    nodes = [make_node("n0", labels={"zone": "a", "pool": "x"}), make_node("n1", labels={"zone": "b"})]
    pods = [web("w1", "n0")]
    honor = make_pod("new", labels=APP, spread=[spread()], node_selector={"pool": "x"})
    ignore = make_pod(
        "new", labels=APP, spread=[spread(nodeAffinityPolicy="Ignore")], node_selector={"pool": "x"}
    )
    assert spread_filter(honor, nodes, pods)["n0"] == OK  # zone b is no domain: min over {a: 1} is 1
    assert spread_filter(ignore, nodes, pods)["n0"] == SKEW  # zone b counts with 0 pods


def test_pod_topology_spread_node_taints_policy_honor() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    nodes = [make_node("n0", labels={"zone": "a"}), make_node("n1", labels={"zone": "b"}, taints=[taint])]
    pods = [web("w1", "n0")]
    ignore = make_pod("new", labels=APP, spread=[spread()])
    honor = make_pod("new", labels=APP, spread=[spread(nodeTaintsPolicy="Honor")])
    assert spread_filter(ignore, nodes, pods)["n0"] == SKEW
    assert spread_filter(honor, nodes, pods)["n0"] == OK


def test_pod_topology_spread_pod_not_matching_itself() -> None:
    nodes = zone_nodes("a", "b")
    pods = [web("w1", "n0")]
    pod = make_pod("other", labels={"app": "db"}, spread=[spread()])
    assert spread_filter(pod, nodes, pods) == {"n0": OK, "n1": OK}


def test_pod_topology_spread_score_prefers_emptier_domain() -> None:
    nodes = zone_nodes("a", "a", "b")
    pods = [web("w1", "n0"), web("w2", "n1")]
    snap = snapshot_of(nodes, pods)
    plugin = PodTopologySpread({}, Handle(snapshot=snap))
    pod = make_pod("new", labels=APP, spread=[spread(when="ScheduleAnyway")])
    scores = score_nodes(plugin, pod, snap.list())
    assert scores[2] == 100 and scores[0] == scores[1] < 100


def test_pod_topology_spread_system_default_constraints_need_a_selector() -> None:
    nodes = [make_node(f"n{i}", labels={"topology.kubernetes.io/zone": "a"}) for i in range(2)]
    pods = [web("w1", "n0"), web("w2", "n0")]
    snap = snapshot_of(nodes, pods)
    pod = make_pod("new", labels=APP)
    assert score_nodes(PodTopologySpread({}, Handle(snapshot=snap)), pod, snap.list()) == []
    svc = {"spec": {"selector": APP}}
    h = Handle(snapshot=snap, default_spread_selector=lambda p: build_default_selector(p, [svc]))
    scores = score_nodes(PodTopologySpread({}, h), pod, snap.list())
    assert scores[1] > scores[0]


# --- inter-pod affinity --------------------------------------------------------------------------


def pod_affinity(kind: str, key: str, labels: dict[str, str], preferred_weight: int = 0) -> Obj:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    if preferred_weight:
        return {
            kind: {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": preferred_weight, "podAffinityTerm": term}
                ]
            }
        }
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def affinity_filter(pod: Obj, nodes: list[Obj], pods: list[Obj]) -> dict[str, tuple[Code, list[str]]]:
    snap = snapshot_of(nodes, pods)
    plugin = InterPodAffinity({}, Handle(snapshot=snap))
    state = CycleState()
    pi = PodInfo(pod)
    _, s = plugin.pre_filter(state, pi, snap.list())
    if s is not None and s.is_skip():
        return {ni.name: OK for ni in snap.list()}
    return {ni.name: code_and_reasons(plugin.filter(state, pi, ni)) for ni in snap.list()}


AFFINITY_REASON = (UNRES, ["node(s) didn't match pod affinity rules"])
ANTI_REASON = (UNSCHED, ["node(s) didn't match pod anti-affinity rules"])
EXISTING_ANTI_REASON = (UNSCHED, ["node(s) didn't satisfy existing pods anti-affinity rules"])


@pytest.mark.parametrize(
    ("name", "pod", "nodes", "pods", "want"),
    [
        (
            "affinity to a zone with a matching pod",
            make_pod("p", affinity=pod_affinity("podAffinity", "zone", {"app": "db"})),
            zone_nodes("a", "b"),
            [make_pod("db", node_name="n0", labels={"app": "db"})],
            {"n0": OK, "n1": AFFINITY_REASON},
        ),
        (
            "the first pod of a self-affine group may go anywhere",
            make_pod("p", labels=APP, affinity=pod_affinity("podAffinity", "zone", APP)),
            zone_nodes("a", "b"),
            [],
            {"n0": OK, "n1": OK},
        ),
        (
            "no match and not self-affine",
            make_pod("p", affinity=pod_affinity("podAffinity", "zone", {"app": "db"})),
            zone_nodes("a", "b"),
            [],
            {"n0": AFFINITY_REASON, "n1": AFFINITY_REASON},
        ),
        (
            "affinity needs the topology label on the node",
            make_pod("p", labels=APP, affinity=pod_affinity("podAffinity", "rack", APP)),
            zone_nodes("a"),
            [],
            {"n0": AFFINITY_REASON},
        ),
        (
            "anti-affinity keeps away from matching pods",
            make_pod("p", affinity=pod_affinity("podAntiAffinity", "zone", {"app": "db"})),
            zone_nodes("a", "b"),
            [make_pod("db", node_name="n0", labels={"app": "db"})],
            {"n0": ANTI_REASON, "n1": OK},
        ),
        (
            "existing pods' anti-affinity keeps the pod away",
            make_pod("p", labels=APP),
            zone_nodes("a", "b"),
            [make_pod("lonely", node_name="n1", affinity=pod_affinity("podAntiAffinity", "zone", APP))],
            {"n0": OK, "n1": EXISTING_ANTI_REASON},
        ),
        (
            "anti-affinity in another namespace does not match",
            make_pod("p", affinity=pod_affinity("podAntiAffinity", "zone", {"app": "db"})),
            zone_nodes("a"),
            [make_pod("db", "other", node_name="n0", labels={"app": "db"})],
            {"n0": OK},
        ),
    ],
)
def test_inter_pod_affinity_filter(name: str, pod: Obj, nodes: list[Obj], pods: list[Obj], want: Any) -> None:
    assert affinity_filter(pod, nodes, pods) == want


def test_inter_pod_affinity_namespace_selector_uses_namespace_labels() -> None:
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "zone",
        "namespaceSelector": {"matchLabels": {"team": "x"}},
    }
    pod = make_pod(
        "p", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    )
    nodes = zone_nodes("a", "b")
    pods = [
        make_pod("db", "team-x", node_name="n0", labels={"app": "db"}),
        make_pod("db", "team-y", node_name="n1", labels={"app": "db"}),
    ]
    snap = snapshot_of(nodes, pods)
    labels = {"team-x": {"team": "x"}, "team-y": {"team": "y"}}
    plugin = InterPodAffinity({}, Handle(snapshot=snap, namespace_labels=labels.get))
    state = CycleState()
    pi = PodInfo(pod)
    plugin.pre_filter(state, pi, snap.list())
    assert [code_and_reasons(plugin.filter(state, pi, ni)) for ni in snap.list()] == [ANTI_REASON, OK]


def test_inter_pod_affinity_preferred_score() -> None:
    nodes = zone_nodes("a", "b", "c")
    pods = [
        make_pod("db", node_name="n0", labels={"app": "db"}),
        make_pod("cache", node_name="n1", labels={"app": "cache"}),
    ]
    snap = snapshot_of(nodes, pods)
    affinity = {
        **pod_affinity("podAffinity", "zone", {"app": "db"}, preferred_weight=10),
        **pod_affinity("podAntiAffinity", "zone", {"app": "cache"}, preferred_weight=5),
    }
    scores = score_nodes(
        InterPodAffinity({}, Handle(snapshot=snap)), make_pod("p", affinity=affinity), snap.list()
    )
    assert scores == [100, 0, 33]  # raw 10, -5, 0 rescaled between min and max


# --- queue-side plugins, binder ------------------------------------------------------------------


def test_scheduling_gates() -> None:
    assert SchedulingGates().pre_enqueue(PodInfo(make_pod("p"))) is None
    s = SchedulingGates().pre_enqueue(PodInfo(make_pod("p", scheduling_gates=["a", "b"])))
    assert code_and_reasons(s) == (UNRES, ["waiting for scheduling gates: [a b]"])


@pytest.mark.parametrize(
    ("name", "a", "b", "a_first"),
    [
        ("higher priority first", (10, 5.0), (1, 1.0), True),
        ("same priority: earlier first", (1, 1.0), (1, 2.0), True),
        ("same priority: later second", (1, 3.0), (1, 2.0), False),
    ],
)
def test_priority_sort(name: str, a: tuple[int, float], b: tuple[int, float], a_first: bool) -> None:
    qa = QueuedPodInfo(PodInfo(make_pod("a", priority=a[0])), timestamp=a[1])
    qb = QueuedPodInfo(PodInfo(make_pod("b", priority=b[0])), timestamp=b[1])
    assert PrioritySort().less(qa, qb) is a_first


@pytest.mark.anyio
async def test_default_binder_posts_a_binding() -> None:
    client = RecordingClient()
    binder = DefaultBinder({}, Handle(client=client))
    pod = make_pod("p", uid="u1")
    assert await binder.bind(CycleState(), PodInfo(pod), "n1") is None
    _, (gvr, name, sub, body, ns), _ = client.calls[0]
    assert (gvr.resource, name, sub, ns) == ("pods", "p", "binding", "default")
    assert body == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }


@pytest.mark.anyio
async def test_default_binder_error_is_an_error_status() -> None:
    from apiserver.errors import conflict

    client = RecordingClient()
    client.fail["create_subresource"] = conflict("pods", "p", "", "pod p is already assigned to node n2")
    s = await DefaultBinder({}, Handle(client=client)).bind(CycleState(), PodInfo(make_pod("p")), "n1")
    assert s is not None and s.code == Code.ERROR and "already assigned" in s.message()


# --- whole default profile -----------------------------------------------------------------------


def test_default_profile_filters_in_kube_order() -> None:
    """A node failing several plugins reports the first one in kube's order."""
    fw = Framework(
        Profile(
            plugins=[PluginSpec(n) for n in ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")]
        ),
        registry=default_registry(),
    )
    cache = Cache()
    cache.add_node(make_node("n", cpu="1", unschedulable=True, taints=[NO_SCHEDULE]))
    snap = cache.snapshot()
    fw.handle.snapshot = snap
    state = CycleState()
    pi = PodInfo(make_pod("p", requests={"cpu": "2"}))
    fw.run_pre_filter_plugins(state, pi, snap.list())
    s = fw.run_filter_plugins(state, pi, snap.get("n"))  # type: ignore[arg-type]
    assert s is not None and (s.plugin, s.reasons) == ("NodeUnschedulable", ["node(s) were unschedulable"])


# --- default preemption --------------------------------------------------------------------------


class FakeNominator:
    def __init__(self, by_node: dict[str, list[Obj]]) -> None:
        self.by_node = {n: [PodInfo(p) for p in pods] for n, pods in by_node.items()}

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, []))


def preemption_setup(nodes: list[Obj], pods: list[Obj], **handle_kw: Any) -> tuple[Framework, Any]:
    from scheduler.plugins.default_preemption import DefaultPreemption

    snap = snapshot_of(nodes, pods)
    fw = Framework(
        default_profile(), Handle(snapshot=snap, clock=FakeClock(), **handle_kw), registry=default_registry()
    )
    plugin = fw.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return fw, plugin


def victims_on(
    fw: Framework, plugin: Any, pod: Obj, node: str, pdbs: list[Obj] = ()
) -> tuple[list[str], int, Any]:  # type: ignore[assignment]
    state = CycleState()
    pi = PodInfo(pod)
    snap = fw.handle.snapshot
    fw.run_pre_filter_plugins(state, pi, snap.list())
    victims, violations, status = plugin.select_victims_on_node(state, pi, snap.get(node).clone(), list(pdbs))
    return [v.name for v in victims], violations, status


def low(name: str, prio: int, cpu: str = "1", **kw: Any) -> Obj:
    return make_pod(name, node_name="n", priority=prio, requests={"cpu": cpu}, **kw)


def test_select_victims_reprieves_the_most_important_first() -> None:
    fw, plugin = preemption_setup(
        [make_node("n", cpu="4")], [low("a", 1), low("b", 2), low("c", 3), low("h", 100)]
    )
    got = victims_on(fw, plugin, make_pod("p", priority=50, requests={"cpu": "2"}), "n")
    assert got[:2] == (["b", "a"], 0)


def test_select_victims_with_no_lower_priority_pods() -> None:
    fw, plugin = preemption_setup([make_node("n", cpu="1")], [low("h", 100)])
    names_, _, status = victims_on(fw, plugin, make_pod("p", priority=50, requests={"cpu": "1"}), "n")
    assert names_ == [] and code_and_reasons(status) == (
        UNRES,
        ["No preemption victims found for incoming pod"],
    )


def test_select_victims_reprieves_pdb_protected_pods_first() -> None:
    pdb = {
        "metadata": {"name": "keep", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    pods = [low("db", 5, labels={"app": "db"}), low("web", 1)]
    fw, plugin = preemption_setup([make_node("n", cpu="2")], pods)
    # one pod has to go: the PDB-protected one is tried first and kept
    assert victims_on(fw, plugin, make_pod("p", priority=50, requests={"cpu": "1"}), "n", [pdb])[:2] == (
        ["web"],
        0,
    )
    # both have to go: one violation is counted
    assert victims_on(fw, plugin, make_pod("p", priority=50, requests={"cpu": "2"}), "n", [pdb])[:2] == (
        ["db", "web"],
        1,
    )


@pytest.mark.parametrize(
    ("name", "candidates", "want"),
    [
        ("fewest PDB violations", [("a", [1], 1), ("b", [5, 5], 0)], "b"),
        ("lowest highest-priority victim", [("a", [5], 0), ("b", [3, 3], 0)], "b"),
        ("smallest priority sum", [("a", [3, 3], 0), ("b", [3, 1], 0)], "b"),
        ("fewest victims", [("a", [3, 1, 1], 0), ("b", [3, 2], 0)], "b"),
        ("first on a full tie", [("a", [3], 0), ("b", [3], 0)], "a"),
    ],
)
def test_pick_one_node_for_preemption(
    name: str, candidates: list[tuple[str, list[int], int]], want: str
) -> None:
    from scheduler.plugins.default_preemption import Candidate, pick_one_node_for_preemption

    cs = [
        Candidate(
            n,
            [
                PodInfo(make_pod(f"{n}{i}", priority=p, start_time="2026-01-01T00:00:00Z"))
                for i, p in enumerate(prios)
            ],
            v,
        )
        for n, prios, v in candidates
    ]
    assert pick_one_node_for_preemption(cs, 0.0) == want


def test_pick_one_node_prefers_the_latest_started_victims() -> None:
    from scheduler.plugins.default_preemption import Candidate, pick_one_node_for_preemption

    old = Candidate("old", [PodInfo(make_pod("o", priority=1, start_time="2026-01-01T00:00:00Z"))])
    new = Candidate("new", [PodInfo(make_pod("n", priority=1, start_time="2026-06-01T00:00:00Z"))])
    assert pick_one_node_for_preemption([old, new], 0.0) == "new"


@pytest.mark.anyio
async def test_preemption_actuation() -> None:
    victim = low("victim", 1, cpu="2")
    nominated_low = make_pod("waiting", priority=1, nominated_node_name="n")
    client = RecordingClient([victim, nominated_low])
    recorded: list[tuple[Any, ...]] = []
    registry = CollectorRegistry()
    fw, _ = preemption_setup(
        [make_node("n", cpu="2")],
        [victim],
        client=client,
        nominator=FakeNominator({"n": [nominated_low]}),
        record_event=lambda *a: recorded.append(a),
        metrics=SchedulerMetrics(registry),
        scheduler_name="default-scheduler",
    )
    pod = PodInfo(make_pod("urgent", priority=100, requests={"cpu": "2"}))
    state = CycleState()
    try:
        schedule_one.schedule_pod(fw, state, pod, fw.handle.snapshot)
    except FitError as e:
        result, status = await fw.run_post_filter_plugins(state, pod, e.diagnosis.node_to_status)
    assert status.is_success() and result is not None
    assert (result.nominated_node_name, [v["metadata"]["name"] for v in result.victims]) == ("n", ["victim"])

    patch, delete, clear = client.calls
    assert patch[0] == "patch" and patch[1][1] == "victim" and patch[2]["subresource"] == "status"
    cond = patch[1][2]["status"]["conditions"][0]
    assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
    }
    assert delete[0] == "delete" and delete[1][1:] == ("victim", "default")
    assert (
        clear[0] == "patch"
        and clear[1][1] == "waiting"
        and clear[1][2] == {"status": {"nominatedNodeName": None}}
    )
    assert recorded[0][1:5] == (
        "Normal",
        "Preempted",
        "Preempting",
        "Preempted by pod uid-default-urgent on node n",
    )
    assert registry.get_sample_value("scheduler_preemption_attempts_total") == 1
    assert registry.get_sample_value("scheduler_preemption_victims_count") == 1


@pytest.mark.anyio
async def test_terminating_victims_are_not_deleted_again() -> None:
    victim = low("victim", 1, cpu="2", deletion_timestamp="2026-01-01T00:00:00Z")
    client = RecordingClient([victim])
    fw, plugin = preemption_setup([make_node("n", cpu="2")], [victim], client=client)
    from scheduler.plugins.default_preemption import Candidate

    assert (
        await plugin.prepare_candidate(Candidate("n", [PodInfo(victim)]), PodInfo(make_pod("u", priority=9)))
        is None
    )
    assert client.calls == []


def test_preemptor_waits_for_its_earlier_victims() -> None:
    terminating = low(
        "victim",
        1,
        deletion_timestamp="2026-01-01T00:00:00Z",
        conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    )
    fw, plugin = preemption_setup([make_node("n")], [terminating])
    pod = PodInfo(make_pod("p", priority=10, nominated_node_name="n"))
    assert plugin.pod_eligible_to_preempt_others(pod, Status(Code.UNSCHEDULABLE)) == (
        False,
        "not eligible due to a terminating pod on the nominated node.",
    )
    assert plugin.pod_eligible_to_preempt_others(pod, Status(UNRES)) == (True, "")


def test_nominated_pods_hold_their_room() -> None:
    """A pod may not take room held for a nominated pod of higher or equal priority."""
    nominated = make_pod("big", priority=100, requests={"cpu": "2"}, nominated_node_name="n")
    fw, _ = preemption_setup([make_node("n", cpu="2")], [], nominator=FakeNominator({"n": [nominated]}))
    snap = fw.handle.snapshot
    for prio, fits in [(10, False), (100, False), (200, True)]:
        pi = PodInfo(make_pod(f"p{prio}", priority=prio, requests={"cpu": "1"}))
        state = CycleState()
        fw.run_pre_filter_plugins(state, pi, snap.list())
        s = fw.run_filter_plugins_with_nominated_pods(state, pi, snap.get("n"))
        assert (s is None) is fits, prio


@pytest.mark.anyio
async def test_binding_and_preemption_through_the_api_server(client: Any) -> None:
    """The same calls against the in-process API server: bind, then preempt the bound pod."""
    from apiserver.client.interface import NODES, PODS, PRIORITYCLASSES

    await client.create(NODES, make_node("n", cpu="2"))
    await client.create(
        PRIORITYCLASSES,
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "low"},
            "value": 1,
        },
    )
    victim = make_pod("victim", requests={"cpu": "2"})
    victim["spec"]["priorityClassName"] = "low"
    del victim["metadata"]["uid"]
    victim = await client.create(PODS, victim, "default")
    assert await DefaultBinder({}, Handle(client=client)).bind(CycleState(), PodInfo(victim), "n") is None
    bound = await client.get(PODS, "victim", "default")
    assert bound["spec"]["nodeName"] == "n"

    fw, _ = preemption_setup([make_node("n", cpu="2")], [bound], client=client)
    pod = PodInfo(make_pod("urgent", priority=100, requests={"cpu": "2"}))
    state = CycleState()
    with pytest.raises(FitError) as e:
        schedule_one.schedule_pod(fw, state, pod, fw.handle.snapshot)
    result, status = await fw.run_post_filter_plugins(state, pod, e.value.diagnosis.node_to_status)
    assert status.is_success() and result is not None and result.nominated_node_name == "n"
    after = await client.get(PODS, "victim", "default")
    assert after["metadata"].get("deletionTimestamp")
    cond = next(c for c in after["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (cond["status"], cond["reason"]) == ("True", "PreemptionByScheduler")


@pytest.mark.parametrize(
    ("name", "gates", "pod_group", "want"),
    [
        ("no gates: single-pod preemption", None, None, None),
        (
            "GenericWorkload: the group preempts as a whole",
            {"TopologyAwareWorkloadScheduling": False},
            {"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
            "preemption: not eligible due to workload aware preemption enabled",
        ),
        (
            "topology constraints: placement-based scheduling does its own preemption",
            {},
            {"spec": {"schedulingConstraints": {"topology": [{"key": "rack"}]}}},
            "preemption: not eligible due to placement-based pod group scheduling limitation",
        ),
        ("topology gate on, group unknown", {}, None, "preemption: pod group for pod not found"),
    ],
)
@pytest.mark.anyio
async def test_pods_of_a_pod_group_do_not_preempt_alone(
    name: str, gates: Any, pod_group: Any, want: str | None
) -> None:
    from featuregates import FeatureGate

    victim = low("victim", 1, cpu="2")
    kw: dict[str, Any] = {"client": RecordingClient([victim])}
    if gates is not None:
        kw["gates"] = FeatureGate(overrides=gates)
        kw["get_pod_group"] = lambda ns, n: pod_group
    fw, _ = preemption_setup([make_node("n", cpu="2")], [victim], **kw)
    pod_obj = make_pod("member", priority=100, requests={"cpu": "2"})
    pod_obj["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    pod = PodInfo(pod_obj)
    state = CycleState()
    with pytest.raises(FitError) as e:
        schedule_one.schedule_pod(fw, state, pod, fw.handle.snapshot)
    result, status = await fw.run_post_filter_plugins(state, pod, e.value.diagnosis.node_to_status)
    if want is None:
        assert status.is_success()
    else:
        assert (status.code, status.message(), result) == (Code.UNSCHEDULABLE, want, None)
