"""Preemption victims as units, their order, and the reprieve search (pure; no API, no framework).

Workload-aware preemption (KEP-5710, part of ``GenericWorkload`` in 1.37) changes *what* a victim
is, not only who preempts:

* A **victim** is a preemption unit. A pod whose PodGroup has ``disruptionMode: all`` is never a
  victim alone: the unit is every placed pod of that group, wherever it runs, so the group is
  reprieved entirely or evicted entirely. Any other pod is a unit by itself.
* A unit's **priority** is its PodGroup's (``spec.priority``, 0 when unset) when the pod belongs
  to a known PodGroup, else the pod's own; the preemptor may only take units of lower priority.
* **Order** (most important first, as upstream's ``MoreImportantVictim``): higher priority; at
  equal priority, pods of a PodGroup before pods without one; among group units, the larger;
  then the earlier start (pods not started yet count as the newest); then the first pod's UID, so
  the order never depends on cache iteration.
* **Selection** (``select_victims``): remove every potential unit; if the preemptor still does not
  fit, nothing is preempted. Otherwise reprieve units from the most important down — those whose
  eviction would break a PodDisruptionBudget first, then the rest (a binary search for the longest
  prefix that fits, then one by one) — keeping each reprieve after which the preemptor still
  fits. A unit is reprieved by putting its pods back exactly where they run.

The caller supplies the state through three callbacks (``fits``, ``remove``, ``add``), so the same
search serves the whole-cluster domain of a PodGroup preemptor and the one-node domain of a single
pod (``DefaultPreemption``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apiserver.api.types import Obj
from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector

if TYPE_CHECKING:
    from scheduler.podgroups import PodGroupState


#: ``(namespace, name) -> PodGroup or None`` (the scheduler's PodGroup cache)
PodGroupGetter = Callable[[str, str], Obj | None]
#: ``(namespace, name) -> the group's placed pods`` (bound or assumed, on any node)
GroupMembers = Callable[[str, str], Iterable[PodInfo]]


# ---------------------------------------------------------------------------------- PodGroups
def pod_group_name(pi: PodInfo) -> str:
    """``spec.schedulingGroup.podGroupName`` or ``""``."""
    return str((((pi.pod.get("spec") or {}).get("schedulingGroup")) or {}).get("podGroupName") or "")


def pod_group_priority(pg: Obj) -> int:
    """``util.PodGroupPriority``: the group's ``spec.priority`` (set by Priority admission), else 0."""
    return int(((pg.get("spec") or {}).get("priority")) or 0)


def disruption_mode_all(pg: Obj | None) -> bool:
    """``spec.disruptionMode: {all: {}}`` — the group is one preemption unit."""
    mode = ((pg or {}).get("spec") or {}).get("disruptionMode") or {}
    return isinstance(mode, dict) and mode.get("all") is not None


# ---------------------------------------------------------------------------------- units
@dataclass(frozen=True, slots=True)
class Victim:
    """A preemption unit: one pod, or every placed pod of a ``disruptionMode: all`` PodGroup."""

    pods: tuple[PodInfo, ...]
    priority: int
    #: the pods belong to a PodGroup the scheduler knows (upstream's ``IsPodGroup``)
    in_group: bool = False
    #: ``namespace/name`` of the PodGroup when the unit is that whole (``all``) group
    group: str = ""

    @property
    def key(self) -> str:
        return self.group or self.pods[0].key

    @property
    def earliest_start(self) -> float:
        starts = [p.start_time for p in self.pods if p.start_time is not None]
        return min(starts) if starts else math.inf

    @property
    def node_names(self) -> set[str]:
        return {p.node_name for p in self.pods}


def build_victims(
    pods: Iterable[PodInfo],
    get_pod_group: PodGroupGetter | None,
    group_members: GroupMembers | None,
) -> list[Victim]:
    """The units the given placed pods belong to, each once, in first-seen order.

    ``get_pod_group`` None means the scheduler does not know PodGroups (``GenericWorkload`` off):
    every pod is its own unit at its own priority, as before workload-aware preemption.
    """
    out: list[Victim] = []
    seen: set[str] = set()
    for pi in pods:
        name = pod_group_name(pi)
        pg = get_pod_group(pi.namespace, name) if name and get_pod_group is not None else None
        if pg is None:
            if pi.key not in seen:
                seen.add(pi.key)
                out.append(Victim((pi,), pi.priority))
            continue
        priority = pod_group_priority(pg)
        if not disruption_mode_all(pg):
            if pi.key not in seen:
                seen.add(pi.key)
                out.append(Victim((pi,), priority, in_group=True))
            continue
        gkey = f"{pi.namespace}/{name}"
        if gkey in seen:
            continue
        seen.add(gkey)
        members = list(group_members(pi.namespace, name)) if group_members is not None else []
        if not any(m.key == pi.key for m in members):
            members.append(pi)  # the cache lags the node: never lose the pod we were given
        members.sort(key=lambda m: m.key)
        out.append(Victim(tuple(members), priority, in_group=True, group=gkey))
    return out


def importance_key(v: Victim, generic_workload: bool = True) -> tuple[Any, ...]:
    """Sort key, most important first (see the module docstring)."""
    if not generic_workload:
        return (-v.priority, v.earliest_start, v.pods[0].uid)
    return (
        -v.priority,
        0 if v.in_group else 1,
        -len(v.pods) if v.in_group else 0,
        v.earliest_start,
        v.pods[0].uid,
    )


def more_important(a: Victim, b: Victim, generic_workload: bool = True) -> bool:
    return importance_key(a, generic_workload) < importance_key(b, generic_workload)


def sort_victims(victims: Iterable[Victim], generic_workload: bool = True) -> list[Victim]:
    return sorted(victims, key=lambda v: importance_key(v, generic_workload))


# ---------------------------------------------------------------------------------- PDBs
def split_by_pdb(victims: Sequence[Victim], pdbs: Sequence[Obj]) -> tuple[list[Victim], list[Victim]]:
    """(units whose eviction would exceed a PDB's ``disruptionsAllowed``, the rest), order kept.

    Budgets are consumed in the given order, pod by pod; a unit is violating when any of its pods
    is (a whole-group unit cannot be half reprieved), and every pod of a unit consumes budget. A pod already listed in a PDB's
    ``disruptedPods`` is being evicted through the API and consumes nothing; a PDB with an empty
    selector matches nothing (1.37).
    """
    allowed = [int(((pdb.get("status") or {}).get("disruptionsAllowed")) or 0) for pdb in pdbs]
    selectors = []
    for pdb in pdbs:
        sel = (pdb.get("spec") or {}).get("selector")
        empty = sel is None or (not sel.get("matchLabels") and not sel.get("matchExpressions"))
        selectors.append(None if empty else compile_selector(sel))

    def violates(p: PodInfo) -> bool:
        if not p.labels:
            return False
        for i, pdb in enumerate(pdbs):
            sel = selectors[i]
            if sel is None or (pdb.get("metadata") or {}).get("namespace") != p.namespace:
                continue
            if not sel.matches(p.labels):
                continue
            if p.name in (((pdb.get("status") or {}).get("disruptedPods")) or {}):
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True  # 1.37 stops at the first exhausted budget
        return False

    violating: list[Victim] = []
    ok: list[Victim] = []
    for v in victims:
        bad = [violates(p) for p in v.pods]
        (violating if any(bad) else ok).append(v)
    return violating, ok


# ---------------------------------------------------------------------------------- selection
@dataclass
class Selection:
    """The units to evict (most important first) and how many of them break a PDB."""

    victims: list[Victim]
    num_pdb_violations: int = 0

    @property
    def pods(self) -> list[PodInfo]:
        return [p for v in self.victims for p in v.pods]


def select_victims(
    potential: Sequence[Victim],
    pdbs: Sequence[Obj],
    fits: Callable[[], bool],
    remove: Callable[[Victim], None],
    add: Callable[[Victim], None],
    generic_workload: bool = True,
) -> Selection | None:
    """The minimal set of ``potential`` units whose eviction lets the preemptor fit, or None.

    ``remove``/``add`` take a unit's pods out of / back into the caller's state; ``fits`` answers
    whether the preemptor fits the state as it is now. On None (the preemptor does not fit even
    with every potential unit gone) every unit has been put back; on success the state holds
    exactly the reprieved units.
    """
    if not potential:
        return None
    for v in potential:
        remove(v)
    if not fits():
        for v in potential:
            add(v)
        return None
    ordered = sort_victims(potential, generic_workload)
    violating, non_violating = split_by_pdb(ordered, pdbs)
    victims: list[Victim] = []
    num_violations = 0

    def reprieve(v: Victim) -> bool:
        add(v)
        if fits():
            return True
        remove(v)
        return False

    for v in violating:
        if not reprieve(v):
            victims.append(v)
            num_violations += 1
    tail = _reprieve_prefix(non_violating, fits, remove, add)
    for v in tail:
        if not reprieve(v):
            victims.append(v)
    return Selection(sort_victims(victims, generic_workload), num_violations)


def _reprieve_prefix(
    ordered: list[Victim],
    fits: Callable[[], bool],
    remove: Callable[[Victim], None],
    add: Callable[[Victim], None],
) -> list[Victim]:
    """Reprieve the longest most-important prefix that still fits (binary search); return the rest.

    ``ordered`` is most important first and entirely removed on entry. Upstream searches over
    priority-tier boundaries; searching over every prefix length gives the same victims whenever
    putting a pod back never makes the preemptor fit better (resources, ports, spreading), since
    one-by-one reprieving would keep that same prefix and stop at the same unit, and it costs
    O(log n) runs of ``fits`` instead of one per unit before the one-by-one pass over the rest.
    The prefix is put back; the remaining units are returned (still removed).
    """
    if not ordered:
        return []
    cursor = 0  # units [0, cursor) are currently put back

    def move_to(target: int) -> None:
        nonlocal cursor
        for k in range(cursor, target):
            add(ordered[k])
        for k in range(target, cursor):
            remove(ordered[k])
        cursor = target

    lo, hi = 0, len(ordered)  # the answer: the largest k in [0, n] whose prefix fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        move_to(mid)
        if fits():
            lo = mid
        else:
            hi = mid - 1
    move_to(lo)
    return ordered[lo:]


def placed_members(state: PodGroupState | None, get_node: Callable[[str], NodeInfo | None]) -> list[PodInfo]:
    """The bound or assumed members of a group (``PodGroupState``), as the nodes hold them.

    ``get_node(name)`` returns that node's ``NodeInfo`` (a snapshot's). A member the node does not
    hold (its pod event not seen yet) is skipped: only pods that occupy capacity can be victims.
    """
    if state is None:
        return []
    out: list[PodInfo] = []
    for key, node in sorted({**state.assigned, **state.assumed}.items()):
        ni = get_node(node)
        if ni is None:
            continue
        out.extend(p for p in ni.pods if p.key == key)
    return out
