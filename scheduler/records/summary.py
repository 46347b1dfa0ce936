"""Cycle data turned into the bounded fields of a scheduling record.

Everything here is capped, so that a record's size does not grow with the cluster: node names
per rejection reason, nodes whose scores are kept (the best ones; the rest as a count and a
range), placements listed. The counts are always exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.diagnosis import Diagnosis, NodeToStatus
from scheduler.status import Status

Obj = dict[str, Any]


@dataclass(frozen=True)
class RecordLimits:
    """Caps of one record, and of the recorder's memory."""

    #: attempts kept per pod or PodGroup (the newest); ``totalAttempts`` counts them all
    attempts_per_subject: int = 5
    #: subjects (pods and PodGroups) remembered, the most recently attempted ones; beyond it the
    #: least recently attempted one is dropped: its record deleted if it was written, never written
    #: if it was not yet. It also bounds a burst's API writes (see the recorder), so its default
    #: is what keeps records within 10 % of a SchedulingBasic drain's CPU at 500 nodes
    #: (docs/scheduling-records.md, "Bounds and cost"); ``--scheduling-records-max-subjects``
    subjects: int = 256
    #: nodes whose per-plugin scores are listed (the best totals)
    top_nodes: int = 5
    #: node names listed per Filter rejection reason
    nodes_per_reason: int = 10
    #: placements listed per PodGroup cycle (the rest counted)
    placements: int = 20
    #: preemption candidates listed
    candidates: int = 5


def filter_summary(diagnosis: Diagnosis, num_nodes: int, limits: RecordLimits) -> list[Obj]:
    """Per Filter plugin: how many nodes it rejected, by reason, with the first node names."""
    nts = diagnosis.node_to_status
    return rejections_summary(nts, nts.absent_status, diagnosis.pre_filter_msg, num_nodes, limits)


def rejections_summary(
    node_to_status: NodeToStatus,
    absent_status: Status,
    pre_filter_msg: str,
    num_nodes: int,
    limits: RecordLimits,
) -> list[Obj]:
    """:func:`filter_summary` from a cycle's parts, as captured when the cycle ended.

    The recorder keeps these references on the scheduling loop and summarises when the record is
    written: the per-node statuses are not changed after Filter (PostFilter plugins read them,
    and DefaultPreemption builds statuses of its own), while ``absent_status`` and
    ``pre_filter_msg`` are attributes that could be reassigned, so they are passed as they were.
    """
    by_plugin: dict[str, dict[str, list[str]]] = {}
    counts: dict[str, int] = {}
    for node, st in node_to_status.items():
        plugin = st.plugin or "(unknown)"
        counts[plugin] = counts.get(plugin, 0) + 1
        reasons = by_plugin.setdefault(plugin, {})
        for reason in st.reasons or [st.message()]:
            reasons.setdefault(reason, []).append(node)
    out: list[Obj] = []
    for plugin, reasons in by_plugin.items():
        out.append(
            {
                "plugin": plugin,
                "nodes": counts[plugin],
                "reasons": [
                    {"reason": r, "nodes": len(ns), "examples": sorted(ns)[: limits.nodes_per_reason]}
                    for r, ns in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))
                ],
            }
        )
    absent = num_nodes - len(node_to_status)
    st = absent_status
    if pre_filter_msg or (absent > 0 and st.reasons and not st.is_success()):
        out.append(
            {
                "plugin": st.plugin or "PreFilter",
                "nodes": absent,
                "reasons": [{"reason": r, "nodes": absent, "examples": []} for r in st.reasons],
            }
        )
    out.sort(key=lambda e: (-e["nodes"], e["plugin"]))
    return out


def score_summary(
    nodes: Sequence[Any],
    columns: Mapping[str, Sequence[int] | int],
    raw: Mapping[str, Sequence[int]],
    weights: Mapping[str, int],
    partial_totals: Sequence[int],
    limits: RecordLimits,
) -> Obj:
    """The best nodes' per-plugin raw and final (normalised x weight) scores; the rest as a range.

    ``partial_totals`` are the framework's per-node sums without the plugins that score every
    node alike (``int`` columns); those add the same number everywhere, so the order is the same.
    """
    n = len(nodes)
    uniform = sum(c for c in columns.values() if isinstance(c, int))
    ordered = sorted(partial_totals, reverse=True)  # in C; gives the cut-off and the minimum
    ranked = _best(partial_totals, limits.top_nodes + 1, ordered)
    best = ranked[: limits.top_nodes]
    top: list[Obj] = []
    for i in best:
        plugins: Obj = {}
        for name, col in columns.items():
            entry: Obj = {"score": col if isinstance(col, int) else col[i]}
            r = raw.get(name)
            if r is not None and len(r) == n:
                entry["raw"] = r[i]
            plugins[name] = entry
        top.append({"node": nodes[i].name, "total": partial_totals[i] + uniform, "plugins": plugins})
    out: Obj = {
        "plugins": [{"name": name, "weight": weights.get(name, 1)} for name in columns],
        "top": top,
    }
    if n > len(best):
        out["rest"] = {
            "nodes": n - len(best),
            "minTotal": ordered[-1] + uniform,
            "maxTotal": partial_totals[ranked[-1]] + uniform,
        }
    return out


def _best(totals: Sequence[int], k: int, ordered: Sequence[int]) -> list[int]:
    """Indexes of the ``k`` highest totals, highest first (ties in node order), found in C.

    ``ordered`` (the totals sorted, highest first) gives the cut-off and how many totals are
    above it (fewer than ``k``); each is found with ``list.index``, then the first totals equal
    to the cut-off in node order, so that many tied nodes (an empty cluster scores every node
    alike) cost no per-node Python work.
    """
    n = len(totals)
    if n == 0:
        return []
    want = min(k, n)
    cut = ordered[want - 1]
    above = ordered.index(cut)  # totals above the cut-off: the first ones of ``ordered``
    out: list[int] = []
    for value in dict.fromkeys(ordered[:above]):  # each distinct value, highest first
        out.extend(_indexes(totals, value, n))
    out.extend(_indexes(totals, cut, want - len(out)))
    return out


def _indexes(values: Sequence[int], value: int, limit: int) -> list[int]:
    """The first ``limit`` indexes of ``value`` in ``values``, in order (``list.index`` in C)."""
    out: list[int] = []
    i = -1
    index = values.index
    while len(out) < limit:
        try:
            i = index(value, i + 1)
        except ValueError:
            break
        out.append(i)
    return out


def victims_summary(candidate: Any, preemptor_priority: int) -> list[Obj]:
    """A candidate's victims with why each was picked.

    kube's rule (``SelectVictimsOnNode``): every lower-priority pod is removed, then the most
    important ones are put back (PDB-protected ones first) as long as the preemptor still fits;
    what is left had to go.
    """
    return [
        {
            "pod": p.key,
            "priority": p.priority,
            "reason": f"priority {p.priority} < preemptor's {preemptor_priority}; the pod does not fit with it",
        }
        for p in candidate.victims
    ]


def candidate_summary(candidate: Any) -> Obj:
    """One preemption candidate: node, victims, and what kube ranks candidates by (PDB violations first)."""
    victims = list(candidate.victims)
    return {
        "node": candidate.name,
        "victims": len(victims),
        "pdbViolations": getattr(candidate, "num_pdb_violations", 0),
        "highestVictimPriority": max((v.priority for v in victims), default=0),
        "victimPrioritySum": sum(v.priority for v in victims),
        **({"podGroupsEvictedWhole": list(candidate.groups)} if getattr(candidate, "groups", None) else {}),
    }
