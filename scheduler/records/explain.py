"""A ``SchedulingRecord`` as the tables ``gangplane explain pod/NAME`` prints: readable at a glance.

Newest attempt first. Per attempt: the outcome and message; the Filter rejections (plugin, how
many nodes, reason, example nodes); the best nodes' scores per plugin (final score, raw in
parentheses); a preemption's candidates and victims; for a PodGroup, every placement considered,
its outcome and why it was dropped, with the Filter rejections of its first unplaced pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Obj = dict[str, Any]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = "  ") -> list[str]:
    """kubectl's column layout: left-aligned, three spaces between columns."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return [indent + "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]


def _filter_rows(entries: Sequence[Obj]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for e in entries:
        for i, r in enumerate(e.get("reasons") or [{"reason": "", "nodes": e.get("nodes"), "examples": []}]):
            examples = ", ".join(r.get("examples") or [])
            more = (r.get("nodes") or 0) - len(r.get("examples") or [])
            if examples and more > 0:
                examples += f" (+{more} more)"
            rows.append([e["plugin"] if i == 0 else "", r.get("nodes"), r.get("reason"), examples])
    return rows


def _score_lines(score: Obj) -> list[str]:
    plugins = [p["name"] for p in score.get("plugins") or []]
    weights = {p["name"]: p.get("weight", 1) for p in score.get("plugins") or []}
    headers = ["NODE", "TOTAL", *[f"{p} (x{weights[p]})" for p in plugins]]
    rows = []
    for t in score.get("top") or []:
        cells = []
        for p in plugins:
            e = (t.get("plugins") or {}).get(p) or {}
            cell = str(e.get("score", ""))
            if "raw" in e:
                cell += f" (raw {e['raw']})"
            cells.append(cell)
        rows.append([t["node"], t["total"], *cells])
    lines = [
        "  Scores (final = normalised x weight; raw as the plugin scored):",
        *table(headers, rows, "    "),
    ]
    rest = score.get("rest")
    if rest:
        lines.append(f"    ... {rest['nodes']} more node(s), totals {rest['minTotal']}..{rest['maxTotal']}")
    return lines


def _preemption_lines(p: Obj) -> list[str]:
    if "candidatesFound" in p:
        lines = [f"  Preemption: {p['candidatesFound']} candidate node(s) found"]
    else:
        lines = [f"  Preemption (workload-aware): {p.get('victimUnits', 0)} victim unit(s)"]
    if p.get("message"):
        lines.append(f"    {p['message']}")
    if p.get("candidates"):
        rows = [
            [
                c["node"],
                c["victims"],
                c["pdbViolations"],
                c["highestVictimPriority"],
                c.get("victimPrioritySum", ""),
            ]
            for c in p["candidates"]
        ]
        lines += table(
            ["CANDIDATE", "VICTIMS", "PDB VIOLATIONS", "HIGHEST PRIORITY", "PRIORITY SUM"], rows, "    "
        )
    if p.get("chosen"):
        lines.append(f"    chosen: {p['chosen']} ({p.get('why', '')})")
    victims = p.get("victims") or []
    if victims:
        rows = []
        for v in victims:
            who = v.get("pod") or ", ".join(v.get("pods") or [])
            rows.append([who, v.get("priority"), v.get("reason")])
        lines += table(["VICTIM", "PRIORITY", "WHY"], rows, "    ")
    return lines


def _placement_lines(a: Obj) -> list[str]:
    placements = a.get("placements") or []
    if not placements:
        return []
    rows = []
    for p in placements:
        fit = f"{p.get('podsFit', '-')}/{p.get('podsTried', '-')}" if "podsTried" in p else "-"
        rows.append(
            [p["name"], p.get("nodes", ""), fit, p.get("score", "-"), p.get("outcome"), p.get("why", "")]
        )
    shown = len(placements)
    head = f"  Placements ({a.get('placementsConsidered', shown)} considered of {a.get('placementsTotal', shown)}):"
    lines = [head, *table(["PLACEMENT", "NODES", "PODS FIT", "SCORE", "OUTCOME", "WHY"], rows, "    ")]
    for p in placements:
        first = p.get("firstUnplacedPod")
        if not first:
            continue
        lines.append(f"    {p['name']}: first pod that did not fit, {first['pod']}:")
        lines += table(
            ["FILTER PLUGIN", "NODES", "REASON", "NODES (EXAMPLES)"],
            _filter_rows(first.get("filter") or []),
            "      ",
        )
    return lines


def render(record: Obj) -> str:
    """The whole record as text (newest attempt first)."""
    meta = record.get("metadata") or {}
    subject = record.get("subject") or {}
    attempts = list(record.get("attempts") or [])
    total = record.get("totalAttempts", len(attempts))
    out = [
        f"{subject.get('kind', '?')} {meta.get('namespace', '')}/{subject.get('name', '')}: "
        f"{total} scheduling attempt(s), the last {len(attempts)} shown, newest first"
    ]
    for a in reversed(attempts):
        out.append("")
        out.append(
            f"Attempt {a.get('attempt', '?')}   {a.get('time', '')}   profile {a.get('profile', '')}   "
            f"{a.get('cycle', '')} cycle" + (f" (PodGroup {a['podGroup']})" if a.get("podGroup") else "")
        )
        result = a.get("result", "?")
        where = a.get("selectedNode") or a.get("selectedPlacement")
        line = f"  Result: {result}" + (f" -> {where}" if where else "")
        if a.get("nominatedNode"):
            line += f"   nominated node: {a['nominatedNode']}"
        out.append(line)
        if a.get("message"):
            out.append(f"  Message: {a['message']}")
        nodes = a.get("nodes")
        if nodes:
            line = f"  Nodes: {nodes['total']} in the cycle, {nodes['feasible']} feasible, {nodes['rejected']} rejected"
            if nodes.get("notFiltered"):
                line += f", {nodes['notFiltered']} not filtered (enough fit first, or ruled out up front)"
            out.append(line)
        if a.get("filter"):
            out += table(["FILTER PLUGIN", "NODES", "REASON", "NODES (EXAMPLES)"], _filter_rows(a["filter"]))
        if a.get("score"):
            out += _score_lines(a["score"])
        if a.get("assignments"):
            rows = [[pod, node] for pod, node in a["assignments"].items()]
            out += ["  Assignments:", *table(["POD", "NODE"], rows, "    ")]
        out += _placement_lines(a)
        if a.get("preemption"):
            out += _preemption_lines(a["preemption"])
        if a.get("nominations"):
            out.append("  Nominations: " + ", ".join(f"{k} -> {v}" for k, v in a["nominations"].items()))
    return "\n".join(out) + "\n"
