"""scheduler.victims: preemption units, their upstream order, PDB split and the reprieve search.

The search is driven with a toy state (a set of present units and a capacity rule), so each case
states exactly when the preemptor "fits"; the scheduler-level behaviour is covered elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver.api.types import Obj
from scheduler.nodeinfo import PodInfo
from scheduler.testing import make_pod
from scheduler.victims import (
    Victim,
    build_victims,
    disruption_mode_all,
    more_important,
    pod_group_priority,
    select_victims,
    sort_victims,
    split_by_pdb,
)

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T01:00:00Z"


def pod(
    name: str, *, prio: int = 0, node: str = "n1", group: str = "", start: str | None = T0, **kw: Any
) -> PodInfo:
    p = make_pod(name, priority=prio, node_name=node, start_time=start, **kw)
    if group:
        p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return PodInfo(p)


def pg(name: str, *, priority: int | None = None, mode: str = "single") -> Obj:
    spec: Obj = {"schedulingPolicy": {"gang": {"minCount": 1}}, "disruptionMode": {mode: {}}}
    if priority is not None:
        spec["priority"] = priority
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def getter(*groups: Obj) -> Callable[[str, str], Obj | None]:
    by = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in groups}
    return lambda ns, name: by.get((ns, name))


def members_of(*pods: PodInfo) -> Callable[[str, str], list[PodInfo]]:
    return lambda ns, name: [
        p
        for p in pods
        if p.namespace == ns and p.pod["spec"].get("schedulingGroup", {}).get("podGroupName") == name
    ]


def single(p: PodInfo, prio: int | None = None, in_group: bool = False) -> Victim:
    return Victim((p,), p.priority if prio is None else prio, in_group=in_group)


# ---------------------------------------------------------------------------------- units
def test_pod_group_helpers() -> None:
    assert pod_group_priority(pg("a", priority=7)) == 7
    assert pod_group_priority(pg("a")) == 0
    assert disruption_mode_all(pg("a", mode="all"))
    assert not disruption_mode_all(pg("a")) and not disruption_mode_all(None)


def test_all_mode_group_is_one_unit_with_every_placed_member_at_the_group_priority() -> None:
    a0, a1 = pod("a-0", prio=5, group="a", node="n1"), pod("a-1", prio=5, group="a", node="n2")
    s0 = pod("s-0", prio=9, group="s", node="n1")
    lone = pod("lone", prio=3, node="n1")
    units = build_victims(
        [a0, s0, lone, a1],
        getter(pg("a", priority=1, mode="all"), pg("s", priority=2)),
        members_of(a0, a1, s0),
    )
    assert [(u.key, u.priority, u.in_group, len(u.pods)) for u in units] == [
        ("default/a", 1, True, 2),
        ("default/s-0", 2, True, 1),  # a single-mode member: its own unit, the group's priority
        ("default/lone", 3, False, 1),
    ]
    assert units[0].node_names == {"n1", "n2"}


def test_without_pod_groups_every_pod_is_a_unit_at_its_own_priority() -> None:
    a0 = pod("a-0", prio=5, group="a")
    units = build_victims([a0], None, None)
    assert [(u.key, u.priority, u.in_group) for u in units] == [("default/a-0", 5, False)]
    # a group the cache does not know yet: the pod alone
    assert build_victims([a0], getter(), members_of(a0))[0].priority == 5


def test_all_mode_unit_keeps_a_pod_the_member_index_has_not_seen() -> None:
    a0, a1 = pod("a-0", group="a"), pod("a-1", group="a")
    (unit,) = build_victims([a1], getter(pg("a", mode="all")), members_of(a0))
    assert [p.name for p in unit.pods] == ["a-0", "a-1"]


# ---------------------------------------------------------------------------------- order
def test_order_priority_then_groups_then_size_then_start() -> None:
    big = Victim(tuple(pod(f"b-{i}") for i in range(3)), 1, in_group=True, group="default/b")
    small = Victim((pod("c-0", start=T0),), 1, in_group=True, group="default/c")
    old_pod = single(pod("old", start=T0), prio=1)
    new_pod = single(pod("new", start=T1), prio=1)
    unstarted = single(pod("pending", start=None), prio=1)
    high = single(pod("high", start=T1), prio=2)
    ordered = sort_victims([unstarted, new_pod, small, old_pod, big, high])
    assert [v.key for v in ordered] == [
        "default/high",
        "default/b",
        "default/c",
        "default/old",
        "default/new",
        "default/pending",
    ]
    assert more_important(big, small) and not more_important(small, big)
    # GenericWorkload off: priority, then start time only
    assert [v.key for v in sort_victims([new_pod, small, old_pod], generic_workload=False)] == [
        "default/c",
        "default/old",
        "default/new",
    ]


def test_equal_victims_are_ordered_by_uid() -> None:
    a, b = single(pod("a")), single(pod("b"))
    assert [v.key for v in sort_victims([b, a])] == ["default/a", "default/b"]


# ---------------------------------------------------------------------------------- PDBs
def pdb(allowed: int, app: str = "db", disrupted: dict[str, str] | None = None, ns: str = "default") -> Obj:
    return {
        "metadata": {"name": "pdb", "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}},
    }


def test_pdb_budget_is_consumed_in_order_and_a_group_violates_as_a_whole() -> None:
    db = [pod(f"db-{i}", labels={"app": "db"}) for i in range(3)]
    group = Victim(tuple(db[1:]), 0, in_group=True, group="default/g")
    first = single(db[0])
    other = single(pod("web", labels={"app": "web"}))
    violating, ok = split_by_pdb([first, group, other], [pdb(2)])
    assert [v.key for v in violating] == ["default/g"]  # its second pod exceeds the budget
    assert [v.key for v in ok] == ["default/db-0", "default/web"]


def test_pdb_disrupted_pods_other_namespaces_and_empty_selectors_do_not_count() -> None:
    a, b = single(pod("db-0", labels={"app": "db"})), single(pod("db-1", labels={"app": "db"}))
    violating, _ = split_by_pdb([a, b], [pdb(0, disrupted={"db-0": T0})])
    assert [v.key for v in violating] == ["default/db-1"]
    assert split_by_pdb([a, b], [pdb(0, ns="other")])[0] == []
    empty = {
        "metadata": {"namespace": "default"},
        "spec": {"selector": {}},
        "status": {"disruptionsAllowed": 0},
    }
    assert split_by_pdb([a, b], [empty])[0] == []


# ---------------------------------------------------------------------------------- selection
class World:
    """Units present or removed; the preemptor fits when the removed units free ``need`` pods."""

    def __init__(self, units: list[Victim], need: int, forbid: set[str] | None = None) -> None:
        self.present = {u.key for u in units}
        self.need = need
        self.forbid = forbid or set()  # units that must be gone for the preemptor to fit
        self.sizes = {u.key: len(u.pods) for u in units}
        self.calls = 0

    def fits(self) -> bool:
        self.calls += 1
        freed = sum(n for k, n in self.sizes.items() if k not in self.present)
        return freed >= self.need and not (self.forbid & self.present)

    def remove(self, v: Victim) -> None:
        assert v.key in self.present
        self.present.discard(v.key)

    def add(self, v: Victim) -> None:
        assert v.key not in self.present
        self.present.add(v.key)

    def select(self, units: list[Victim], pdbs: list[Obj] | None = None) -> Any:
        return select_victims(units, pdbs or [], self.fits, self.remove, self.add)


def test_nothing_is_touched_unless_the_whole_preemptor_then_fits() -> None:
    units = [single(pod(f"p{i}")) for i in range(3)]
    w = World(units, need=4)
    assert w.select(units) is None
    assert w.present == {u.key for u in units}  # every unit put back
    assert w.select([]) is None


def test_single_units_preempt_only_as_many_as_needed_lowest_first() -> None:
    units = [single(pod("low-old", prio=1, start=T0)), single(pod("low-new", prio=1, start=T1))]
    units += [single(pod("mid", prio=2)), single(pod("high", prio=3))]
    w = World(units, need=2)
    sel = w.select(units)
    assert [v.key for v in sel.victims] == ["default/low-old", "default/low-new"]
    assert w.present == {"default/mid", "default/high"}
    assert sel.num_pdb_violations == 0


def test_an_all_mode_group_is_evicted_entirely_rather_than_a_subset() -> None:
    gang = Victim(tuple(pod(f"g-{i}", prio=1) for i in range(4)), 1, in_group=True, group="default/g")
    w = World([gang], need=1)
    sel = w.select([gang])
    assert [p.name for p in sel.pods] == ["g-0", "g-1", "g-2", "g-3"]


def test_an_all_mode_group_is_reprieved_entirely_when_it_is_not_needed() -> None:
    gang = Victim(tuple(pod(f"g-{i}", prio=1) for i in range(4)), 1, in_group=True, group="default/g")
    lone = single(pod("lone", prio=1))
    w = World([gang, lone], need=1)
    sel = w.select([gang, lone])
    assert [v.key for v in sel.victims] == ["default/lone"]  # groups outrank single pods
    assert w.present == {"default/g"}


def test_pdb_violating_victims_are_reprieved_first() -> None:
    protected = single(pod("db", prio=1, labels={"app": "db"}))
    spare = single(pod("spare", prio=2))
    w = World([protected, spare], need=1)
    sel = w.select([protected, spare], [pdb(0)])
    # the PDB-protected pod is lower priority, but reprieved before anything else is tried
    assert [v.key for v in sel.victims] == ["default/spare"]
    assert sel.num_pdb_violations == 0


def test_pdb_violation_is_counted_when_it_cannot_be_avoided() -> None:
    protected = single(pod("db", prio=1, labels={"app": "db"}))
    w = World([protected], need=1)
    sel = w.select([protected], [pdb(0)])
    assert [v.key for v in sel.victims] == ["default/db"] and sel.num_pdb_violations == 1


def test_prefix_search_finds_the_same_victims_as_one_by_one_with_few_fits_calls() -> None:
    high = [single(pod(f"h{i:02d}", prio=3)) for i in range(20)]
    low = [single(pod(f"l{i:02d}", prio=1)) for i in range(20)]
    w = World(high + low, need=3)
    sel = w.select(high + low)
    # one by one would keep all 20 high and the 17 most important low units
    assert [v.key for v in sel.victims] == ["default/l17", "default/l18", "default/l19"]
    # 1 (all removed) + 6 (binary search over 41 prefix lengths) + 3 (the rest one by one), not 1 + 40
    assert w.calls == 10


def test_prefix_search_then_one_by_one_skips_a_unit_that_must_go() -> None:
    units = [single(pod(f"p{i}", prio=1)) for i in range(6)]
    w = World(units, need=1, forbid={"default/p2"})
    sel = w.select(units)
    assert [v.key for v in sel.victims] == ["default/p2"]
    assert w.present == {u.key for u in units} - {"default/p2"}
