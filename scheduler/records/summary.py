"""Cycle data turned into the bounded fields of a scheduling record.

Everything here is capped, so that a record's size does not grow with the cluster: node names
per rejection reason, nodes whose scores are kept (the best ones; the rest as a count and a
range), placements listed. The counts are always exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scheduler.diagnosis import Diagnosis, NodeToStatus
from scheduler.status import Status

if TYPE_CHECKING:
    import numpy as np

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
    out: list[Obj] = []
    if len(node_to_status):
        out = _rejected_nodes(node_to_status, limits)
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
    columns: Mapping[str, Any],
    raw: Mapping[str, Any],
    weights: Mapping[str, int],
    partial_totals: Any,
    limits: RecordLimits,
) -> Obj:
    """The best nodes' per-plugin raw and final (normalised x weight) scores; the rest as a range.

    ``partial_totals`` are the framework's per-node sums without the plugins that score every
    node alike (``int`` columns); those add the same number everywhere, so the order is the same.
    Columns, raw columns and totals are lists, or from the scheduling cycle's array path int64
    numpy arrays (a raw column may also be an ``int``: every node alike; the totals ``None``:
    every column uniform, read as zeros); every number is written as a Python ``int``, so a
    record is the same whichever path the cycle took.
    """
    n = len(nodes)
    if partial_totals is None:
        partial_totals = _Zeros()
    uniform = sum(c for c in columns.values() if isinstance(c, int))
    ranked: list[int] = []
    lowest = 0
    if n:
        ranked, lowest = _ranked(partial_totals, min(limits.top_nodes + 1, n))
    best = ranked[: limits.top_nodes]
    top: list[Obj] = []
    for i in best:
        plugins: Obj = {}
        for name, col in columns.items():
            entry: Obj = {"score": col if isinstance(col, int) else int(col[i])}
            r = raw.get(name)
            if type(r) is int:
                entry["raw"] = r
            elif r is not None and len(r) == n:
                entry["raw"] = int(r[i])
            plugins[name] = entry
        top.append({"node": nodes[i].name, "total": int(partial_totals[i]) + uniform, "plugins": plugins})
    out: Obj = {
        "plugins": [{"name": name, "weight": weights.get(name, 1)} for name in columns],
        "top": top,
    }
    if n > len(best):
        out["rest"] = {
            "nodes": n - len(best),
            "minTotal": lowest + uniform,
            "maxTotal": int(partial_totals[ranked[-1]]) + uniform,
        }
    return out


def _ranked(partial_totals: Any, k: int) -> tuple[list[int], int]:
    """The ``k`` best nodes' indexes (highest total first, ties in node order) and the lowest total.

    When at least ``k`` nodes share the highest total (an empty or evenly filled cluster scores
    many nodes alike), they are the answer: two C passes over the list (``max``, ``count``) and
    ``list.index`` find them, with no conversion. Otherwise the totals go to numpy (:func:`_best`),
    whose conversion costs less than sorting many distinct totals. Totals that are already an
    int64 array (the cycle's array path) go to :func:`_best` as they are.
    """
    if type(partial_totals) is _Zeros:
        return list(range(k)), 0  # every node ties: the first k in node order
    if type(partial_totals) is not list and hasattr(partial_totals, "dtype"):
        return _best(partial_totals, k), int(partial_totals.min())
    hi = max(partial_totals)
    count = partial_totals.count(hi)
    if count >= k:
        ranked = _indexes(partial_totals, hi, k)
        return ranked, hi if count == len(partial_totals) else min(partial_totals)
    import numpy as np  # only once a record is written: numpy stays off the start-up path

    totals = np.fromiter(partial_totals, np.int64, len(partial_totals))
    return _best(totals, k), int(totals.min())


class _Zeros:
    """The totals of a cycle whose every Score column was uniform (the array path builds none):
    0 for every node, as the list path's ``[0] * n`` reads."""

    __slots__ = ()

    def __getitem__(self, i: int) -> int:
        return 0


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


def _best(totals: np.ndarray, k: int) -> list[int]:
    """Indexes of the ``k`` highest totals, highest first, ties in node order (as kube lists them).

    The ``k``-th highest value is the cut-off (``np.partition``, linear): every node above it is
    among the best, and the first nodes equal to it in node order fill the rest, so a cluster that
    scores every node alike (an empty one) costs no more than one that does not.
    """
    import numpy as np

    n = len(totals)
    cut = totals[np.argpartition(totals, n - k)[n - k]]
    above = np.flatnonzero(totals > cut)
    equal = np.flatnonzero(totals == cut)[: k - len(above)]
    picked = np.concatenate((above, equal))
    # highest first; a stable sort keeps node order among equal totals (``above`` and ``equal``
    # are each in node order, and no total of ``above`` equals one of ``equal``)
    order = np.argsort(-totals[picked], kind="stable")
    return picked[order].tolist()


def _rejected_nodes(node_to_status: NodeToStatus, limits: RecordLimits) -> list[Obj]:
    """The explicit statuses grouped per plugin and reason.

    One dictionary step per node, keyed by the status's plugin and its reasons joined (a reason
    string is usually one shared constant, whose hash is cached): the statuses are per-node
    Python objects, so reading them is the floor; a numpy pass measured slower, as turning them
    into arrays costs more than grouping them. Only the few distinct groups are handled one by one.
    """
    groups: dict[tuple[str | None, str], list[str]] = {}
    for node, st in node_to_status.items():
        groups.setdefault((st.plugin, _SEP.join(st.reasons)), []).append(node)
    by_plugin: dict[str, dict[str, list[str]]] = {}
    counts: dict[str, int] = {}
    for (plugin_name, joined), nodes in groups.items():
        plugin = plugin_name or "(unknown)"
        counts[plugin] = counts.get(plugin, 0) + len(nodes)
        per_reason = by_plugin.setdefault(plugin, {})
        # no reasons: the status's message, ", ".join([]) (the empty string)
        for reason in joined.split(_SEP) if joined else ("",):
            per_reason.setdefault(reason, []).extend(nodes)
    out: list[Obj] = []
    for plugin, per_reason in by_plugin.items():
        out.append(
            {
                "plugin": plugin,
                "nodes": counts[plugin],
                "reasons": [
                    {"reason": r, "nodes": len(ns), "examples": sorted(ns)[: limits.nodes_per_reason]}
                    for r, ns in sorted(per_reason.items(), key=lambda kv: (-len(kv[1]), kv[0]))
                ],
            }
        )
    return out


#: joins a status's reasons into one key (no reason text holds a NUL)
_SEP = "\x00"


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
