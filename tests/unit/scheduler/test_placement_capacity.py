"""Placements rejected by capacity arithmetic (scheduler/placement_capacity.py).

Each rule is checked on a small rack, and on random clusters every rejected rack is one where
the pod-by-pod search finds the group infeasible, and the whole PodGroup algorithm chooses the
same placement, the same node per pod and the same failure text with and without the check.
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
from scheduler.interfaces import CycleState, Handle, PodGroupInfo, Profile
from scheduler.nodeinfo import PodInfo
from scheduler.placement_capacity import GroupDemand
from scheduler.podgroup_algorithm import PodGroupAlgorithm, PodGroupAlgorithmResult
from scheduler.podgroups import PodGroupState
from scheduler.schedule_one_podgroup import gang_unschedulable_message
from scheduler.testing import make_node, make_pod

RACK = "topology.kubernetes.io/rack"
GPU = "example.com/gpu"


def pg(min_count: int | None, topology: str = RACK) -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if topology:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {"metadata": {"name": "g", "namespace": "default", "generation": 1}, "spec": spec}


def member(name: str, **kw: Any) -> Obj:
    p = make_pod(name, **kw)
    p["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    return p


def cache_with(nodes: list[Obj], group: Obj | None = None, bound: list[Obj] = ()) -> Cache:  # type: ignore[assignment]
    c = Cache()
    for n in nodes:
        c.add_node(n)
    if group is not None:
        c.add_pod_group(group)
    for p in bound:
        c.add_pod(p)
    return c


class FirstOfTies(random.Random):
    """Picks the first of tied nodes: two runs that draw a different number of times still agree."""

    def randrange(self, *args: Any, **kw: Any) -> int:
        return 0


def framework_for(
    cache: Cache, profile: Profile | None = None, seed: int = 0, rng: random.Random | None = None
) -> Framework:
    handle = Handle(
        gates=FeatureGate(),
        get_pod_group=cache.get_pod_group,
        pod_group_state=cache.pod_group_state,
        rng=rng or random.Random(seed),
    )
    return Framework(profile or default_profile(), handle, registry=default_registry())


def group_info(cache: Cache, pods: list[Obj]) -> PodGroupInfo:
    state = cache.pod_group_state("default", "g") or PodGroupState("default/g")
    return PodGroupInfo(
        "default", "g", cache.get_pod_group("default", "g"), [PodInfo(p) for p in pods], state
    )


def rack(cache: Cache, value: str = "r0") -> Any:
    return cache.snapshot().domains(RACK).domains[value]


def demand(cache: Cache, pods: list[Obj], needed: int) -> GroupDemand:
    d = GroupDemand.of(framework_for(cache), [PodInfo(p) for p in pods], needed)
    assert d is not None
    return d


def test_pod_slots_per_node_reject_a_rack_whose_totals_would_pass() -> None:
    # 3 nodes with 3 cpu free: 9 cpu in total, but a 2-cpu pod fits only once per node
    c = cache_with([make_node(f"n{i}", cpu="3", labels={RACK: "r0"}) for i in range(3)])
    pods = [member(f"m{i}", requests={"cpu": "2"}) for i in range(4)]
    assert demand(c, pods, 3).admits(rack(c))
    assert not demand(c, pods, 4).admits(rack(c))


def test_free_pod_slots_count() -> None:
    c = cache_with([make_node(f"n{i}", pods="2", labels={RACK: "r0"}) for i in range(2)])
    pods = [member(f"m{i}") for i in range(5)]
    assert demand(c, pods, 4).admits(rack(c))
    assert not demand(c, pods, 5).admits(rack(c))


def test_the_largest_request_needs_one_node_with_room() -> None:
    c = cache_with([make_node(f"n{i}", cpu="2", labels={RACK: "r0"}) for i in range(4)])
    pods = [member("big", requests={"cpu": "3"}), member("small", requests={"cpu": "1"})]
    assert demand(c, pods, 1).admits(rack(c))  # one pod: the small one will do
    assert not demand(c, pods, 2).admits(rack(c))  # both: the 3-cpu pod fits no node


def test_a_node_bound_past_its_capacity_hides_no_room_elsewhere() -> None:
    # n0 holds 6 cpu of pods on 4: its -2 must not cancel n1's free 2 cpu
    nodes = [make_node(f"n{i}", cpu="4", labels={RACK: "r0"}) for i in range(2)]
    over = make_pod("over", requests={"cpu": "6"}, node_name="n0")
    c = cache_with(nodes, bound=[over])
    assert demand(c, [member("m", requests={"cpu": "2"})], 1).admits(rack(c))


def test_only_the_smallest_requests_count_when_more_pods_than_needed_are_queued() -> None:
    c = cache_with([make_node(f"n{i}", cpu="2", labels={RACK: "r0"}) for i in range(2)])
    pods = [member("a", requests={"cpu": "2"}), member("b", requests={"cpu": "2"})]
    pods += [member(f"s{i}", requests={"cpu": "500m"}) for i in range(4)]
    assert demand(c, pods, 5).admits(rack(c))  # a 2-cpu pod on one node, four 500m on the other
    assert not demand(c, pods, 6).admits(rack(c))  # all six ask 6 cpu of 4


def test_ignored_extended_resources_and_profiles_without_the_fit_filter_decide_nothing() -> None:
    c = cache_with([make_node("n0", labels={RACK: "r0"})])
    pods = [member("m", requests={GPU: "1"})]
    assert not demand(c, pods, 1).admits(rack(c))
    profile = default_profile(plugin_args={"NodeResourcesFit": {"ignoredResources": [GPU]}})
    d = GroupDemand.of(framework_for(c, profile), [PodInfo(p) for p in pods], 1)
    assert d is not None and d.admits(rack(c))
    no_fit = default_profile(disabled={"filter": {"NodeResourcesFit"}})
    assert GroupDemand.of(framework_for(c, no_fit), [PodInfo(p) for p in pods], 1) is None


# --- random clusters ---------------------------------------------------------------------------


def random_case(seed: int) -> tuple[Cache, list[Obj]]:
    rnd = random.Random(seed)
    racks = rnd.randint(2, 6)
    nodes = []
    bound = []
    for i in range(rnd.randint(4, 24)):
        extra = {GPU: str(rnd.randint(0, 2))} if rnd.random() < 0.3 else None
        nodes.append(
            make_node(
                f"n{i:02d}",
                cpu=str(rnd.randint(1, 6)),
                memory=f"{rnd.randint(1, 8)}Gi",
                pods=str(rnd.randint(1, 6)),
                labels={RACK: f"r{rnd.randrange(racks)}"} if rnd.random() < 0.9 else {},
                extra=extra,
            )
        )
        for j in range(rnd.randint(0, 3)):
            cpu = f"{rnd.randint(0, 4000)}m"
            bound.append(make_pod(f"b{i}-{j}", requests={"cpu": cpu}, node_name=f"n{i:02d}"))
    size = rnd.randint(1, 12)
    min_count = rnd.choice([None, rnd.randint(1, size)])
    same = rnd.random() < 0.5
    shapes = [(f"{rnd.randint(100, 3000)}m", f"{rnd.randint(64, 2048)}Mi") for _ in range(size)]
    pods = []
    for k in range(size):
        cpu, mem = shapes[0] if same else shapes[k]
        requests = {"cpu": cpu, "memory": mem}
        if rnd.random() < 0.15:
            requests[GPU] = "1"
        pods.append(member(f"m{k}", requests=requests))
    return cache_with(nodes, pg(min_count), bound), pods


def outcome(c: Cache, pods: list[Obj], result: PodGroupAlgorithmResult) -> tuple[Any, ...]:
    placement = result.placement
    nodes = [(a.pod_info.key, a.node_name, a.message) for a in placement.assignments] if placement else None
    text = gang_unschedulable_message(group_info(c, pods), result) if not result.success else ""
    return (
        result.success,
        result.status.message() if result.status is not None else None,
        placement.placement.name if placement else None,
        nodes,
        text,
    )


@pytest.mark.parametrize("seed", range(300))
def test_random_clusters_rejected_racks_are_infeasible_and_decisions_unchanged(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, pods = random_case(seed)
    snap = c.snapshot()
    group = group_info(c, pods)
    fw = framework_for(c, seed=seed)
    algo = PodGroupAlgorithm(fw)
    placements, s = fw.run_placement_generate_plugins(CycleState(), group, snap)
    d = algo._demand(group)
    for p in placements or []:
        domain = snap.domains(RACK).domains[p.value]
        if d is not None and not d.admits(domain):
            most = d.most_pods(domain, d.needed)
            mark = snap.backup()
            snap.scope = domain
            try:
                tried = algo.evaluate(CycleState(), group, p, snap)
                assert not tried.feasible and len(tried.fitting()) <= most, p.name
            finally:
                snap.restore(mark)
                snap.scope = None
    # ties broken the same way in both runs (a skipped placement draws no random numbers)
    with_check = PodGroupAlgorithm(framework_for(c, rng=FirstOfTies())).run(
        CycleState(), group_info(c, pods), snap
    )
    monkeypatch.setattr(PodGroupAlgorithm, "_hopeless", staticmethod(lambda demand, domain, evaluated: False))
    without = PodGroupAlgorithm(framework_for(c, rng=FirstOfTies())).run(
        CycleState(), group_info(c, pods), snap
    )
    assert not without.skipped_for_capacity
    assert outcome(c, pods, with_check) == outcome(c, pods, without)


def test_random_clusters_do_skip_placements_both_when_the_group_fits_and_when_it_does_not() -> None:
    seen = set()
    for seed in range(60):
        c, pods = random_case(seed)
        fw = framework_for(c, rng=FirstOfTies())
        r = PodGroupAlgorithm(fw).run(CycleState(), group_info(c, pods), c.snapshot())
        if r.skipped_for_capacity:
            seen.add(r.success)
    assert seen == {True, False}
