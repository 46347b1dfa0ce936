"""Where a big gang's search spends its CPU, per member (a script, not a test):

    python bench/micro/search_parts.py                 # 3 gangs of 5,000 on 5,000 nodes
    python bench/micro/search_parts.py 5000 5000 --gangs 4

Runs :func:`bench.micro.gang_footprint.measure_gangs` (gangs placed one after the other on one
cache, as the scheduler does) with the search's pieces wrapped, and prints each piece's time per
member and per call: the window runs (``WindowedRuns.next``/``_catch_up``/``assumed``), the class
pick and its parts, a run told of the pod on its own node (``PlacementRun.assumed``: the node's
Filter, its node-local Scores, the spreading hostname term, the class move), the snapshot's
assume, the assumed PodInfo, the signatures and the full cycles.

Why: the gangs' CPU (``gang_footprint``) says how much, not where; py-spy's samples of ~50 µs per
member spread over ~40 functions with a few samples each. Wrapping costs ~0.2-0.3 µs per call
(``perf_counter_ns`` twice), so nested pieces read high by that much per level: compare pieces,
not the total with ``gang_footprint``'s. Run it by path from a neutral directory with
``PYTHONPATH`` set to the tree to measure (see docs/bench.md, "Session 22 — bigsearch").
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

#: (module, attribute holder, name, label): the pieces timed, outermost first
_PIECES = (
    ("scheduler.podgroup_algorithm", "PodGroupAlgorithm", "run", "search (PodGroupAlgorithm.run)"),
    ("scheduler.placement_run", "WindowedRuns", "next", "WindowedRuns.next"),
    ("scheduler.class_pick", "ClassPick", "pick", "  ClassPick.pick"),
    ("scheduler.class_pick", "ClassPick", "_pick_over", "    _pick_over (totals, ties, draw)"),
    ("scheduler.class_pick", "ClassPick", "_position", "      _position (r-th tied node)"),
    ("scheduler.class_pick", "", "host_zone_raws", "    host_zone_raws"),
    ("scheduler.placement_run", "WindowedRuns", "_catch_up", "  WindowedRuns._catch_up"),
    ("scheduler.placement_run", "PlacementRun", "assumed", "    PlacementRun.assumed (own node)"),
    ("scheduler.placement_run", "", "run_filter_chain", "      own node's Filter"),
    ("scheduler.plugins.node_resources_fit", "NodeResourcesFit", "score", "      NodeResourcesFit.score"),
    (
        "scheduler.plugins.balanced_allocation",
        "BalancedAllocation",
        "score",
        "      BalancedAllocation.score",
    ),
    ("scheduler.plugins.spread_run", "SpreadScoreRun", "assumed", "      SpreadScoreRun.assumed"),
    ("scheduler.class_pick", "ClassPick", "moved", "      ClassPick.moved"),
    ("scheduler.cache", "Snapshot", "assume_pod", "Snapshot.assume_pod"),
    ("scheduler.podgroup_algorithm", "", "_assumed", "_assumed (the pod on its node)"),
    ("scheduler.placement_run", "WindowedRuns", "assumed", "WindowedRuns.assumed"),
    ("scheduler.class_pick", "SharedCounts", "add", "  SharedCounts.add"),
    ("scheduler.podgroup_algorithm", "", "_shared_signatures", "_shared_signatures"),
    ("scheduler.podgroup_algorithm", "PodGroupAlgorithm", "_full_cycle", "full cycles"),
)


def _wrap(holder: Any, name: str, label: str, spent: Counter[str], calls: Counter[str]) -> None:
    """``holder.name`` replaced by a wrapper adding its wall nanoseconds to ``spent[label]``."""
    inner: Callable[..., Any] = getattr(holder, name)
    clock = time.perf_counter_ns

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = clock()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += clock() - t0
            calls[label] += 1

    setattr(holder, name, timed)


def main(argv: list[str]) -> None:
    import importlib

    from bench.micro.gang_footprint import measure_gangs, take_gangs

    args = list(argv)
    gangs = take_gangs(args, 3)
    members = int(args[0]) if args else 5000
    nodes = int(args[1]) if len(args) > 1 else 5000
    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for module, holder, name, label in _PIECES:
        mod = importlib.import_module(module)
        _wrap(getattr(mod, holder) if holder else mod, name, label, spent, calls)
    print(measure_gangs(members, nodes, gangs))
    per = members * gangs
    print(f"{'piece':44s} {'calls':>8s} {'us/member':>10s} {'us/call':>9s}")
    for _, _, _, label in _PIECES:
        n = calls[label]
        if n:
            print(f"{label:44s} {n:8d} {spent[label] / 1e3 / per:10.2f} {spent[label] / 1e3 / n:9.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
