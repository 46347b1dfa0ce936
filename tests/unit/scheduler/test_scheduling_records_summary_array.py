"""The record summaries are made by array (numpy) and must say exactly what the per-node Python
summaries said before (the reference implementation below is that code, kept here as the oracle).

Random cycles: node counts from none to 5,000, totals with many ties (an empty cluster scores
every node alike), plugins that score every node alike (``int`` columns), raw scores present or
not, Filter statuses from several plugins with one, several, repeated or no reasons, a plugin-less
status, nodes absent from the statuses (PreFilter), and different caps.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from scheduler.diagnosis import NodeToStatus
from scheduler.records.summary import RecordLimits, rejections_summary, score_summary
from scheduler.status import Code, Status

Obj = dict[str, Any]


# -- the reference: the Python summaries the array ones replace ---------------------------------


def reference_rejections(
    node_to_status: NodeToStatus,
    absent_status: Status,
    pre_filter_msg: str,
    num_nodes: int,
    limits: RecordLimits,
) -> list[Obj]:
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


def reference_scores(
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
    ranked = _reference_best(partial_totals, limits.top_nodes + 1, ordered)
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


def _reference_best(totals: Sequence[int], k: int, ordered: Sequence[int]) -> list[int]:
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
        out.extend(_reference_indexes(totals, value, n))
    out.extend(_reference_indexes(totals, cut, want - len(out)))
    return out


def _reference_indexes(values: Sequence[int], value: int, limit: int) -> list[int]:
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


# -- random cycles ---------------------------------------------------------------------------------


@dataclass
class _Node:
    name: str


def _limits(rng: random.Random) -> RecordLimits:
    return RecordLimits(top_nodes=rng.choice([0, 1, 5, 7]), nodes_per_reason=rng.choice([0, 1, 3, 10]))


def _scores(
    rng: random.Random, n: int
) -> tuple[list[_Node], dict[str, Any], dict[str, Any], dict[str, int], list[int]]:
    nodes = [_Node(f"node-{i:05d}") for i in rng.sample(range(100_000), n)]
    spread = rng.choice([1, 3, 100])  # 1: every node alike, 3: many ties, 100: few
    columns: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    weights: dict[str, int] = {}
    for p in range(rng.randint(1, 4)):
        name = f"Plugin{p}"
        weights[name] = rng.choice([1, 2, 5])
        if rng.random() < 0.3:
            columns[name] = rng.randint(0, 100) * weights[name]
            continue
        values = [rng.randrange(spread) for _ in range(n)]
        columns[name] = [v * weights[name] for v in values]
        if rng.random() < 0.7:
            raw[name] = values if rng.random() < 0.9 else values[:-1]  # a short one is left out
    lists = [c for c in columns.values() if not isinstance(c, int)]
    totals = [sum(c[i] for c in lists) for i in range(n)]
    return nodes, columns, raw, weights, totals


@pytest.mark.parametrize("seed", range(200))
def test_score_summary_by_array_is_the_python_one(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 5, 6, 7, 30, 500]) if seed % 20 else 5000
    nodes, columns, raw, weights, totals = _scores(rng, n)
    limits = _limits(rng)
    got = score_summary(nodes, columns, raw, weights, totals, limits)
    assert got == reference_scores(nodes, columns, raw, weights, totals, limits)
    assert all(type(t["total"]) is int for t in got["top"])
    if "rest" in got:
        assert type(got["rest"]["minTotal"]) is int and type(got["rest"]["maxTotal"]) is int


def _status(rng: random.Random) -> Status:
    plugin = rng.choice(["NodeResourcesFit", "TaintToleration", "NodeAffinity", "", None])
    pool = ["Insufficient cpu", "Insufficient memory", "node(s) had untolerated taint", "too many pods"]
    reasons = rng.choice([[], [rng.choice(pool)], rng.sample(pool, 2), [pool[0], pool[0]]])
    code = rng.choice([Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE])
    return Status(code, *reasons, plugin=plugin)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(200))
def test_rejections_by_array_are_the_python_ones(seed: int) -> None:
    rng = random.Random(seed)
    num_nodes = rng.choice([0, 1, 3, 40, 500]) if seed % 20 else 5000
    rejected = rng.randint(0, num_nodes)
    shared = _status(rng)  # a batch Filter may give many nodes the same Status object
    statuses = {
        f"n-{i:05d}": shared if rng.random() < 0.3 else _status(rng)
        for i in rng.sample(range(100_000), rejected)
    }
    absent = rng.choice(
        [
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
            Status(Code.UNSCHEDULABLE, "no nodes", plugin="NodeAffinity"),
        ]
    )
    nts = NodeToStatus(statuses, absent)
    pre_filter = rng.choice(["", "PreFilter said no"])
    limits = _limits(rng)
    got = rejections_summary(nts, nts.absent_status, pre_filter, num_nodes, limits)
    assert got == reference_rejections(nts, nts.absent_status, pre_filter, num_nodes, limits)
    for entry in got:
        assert type(entry["nodes"]) is int
        for r in entry["reasons"]:
            assert type(r["nodes"]) is int and all(type(x) is str for x in r["examples"])
