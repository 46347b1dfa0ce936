"""The batched window pick's per-pod step, checked against the run's pick (a script, not a test):

    python -m bench.micro.window_class_pick 5000 5000 2           # 2 gangs of 5,000 on 5,000 nodes
    python -m bench.micro.window_class_pick 5000 5000 1 --break merge   # must print differences

A sketch of the design in docs/bench.md "Session 15 — bigsearch3", not scheduler code: at every
pick a window's run makes in arrays (``score_totals.select`` called from ``PlacementRun.next``),
the window's feasible nodes are grouped into classes keyed by what no other window's pod changes
(per spreading constraint the node's domain row or its hostname count, and the node-local base);
each class's raw spread score is computed once from the per-value terms (the same float additions
as ``SpreadScoreRun._score_all``), NormalizeScore runs over the class raws (their min/max are the
nodes'), the best classes' sizes give the tie count, the same ``randrange`` is drawn (on a copy
of the generator's state) and the r-th tied position in feasible order taken. The host must equal
the run's own pick: printed as ``same``/``diff``, with the sketch's time per pick (``perf_counter``,
without building the classes, which the design keeps up to date instead).

Why: so the next session builds the batched pick from a sketch known to agree on real picks.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import time
from typing import Any


def class_pick(run: Any, rng: Any, broken: str = "") -> tuple[str, float, int]:
    """The host the class sketch picks for ``run``'s next pod, its time and how many classes tied."""
    (col,) = [c for c in run.columns if c.carried is not None]
    spread = col.carried
    nc = len(spread.constraints)
    keycols = [
        list(spread.per_node[i]) if spread.hostname[i] else spread.node_rows[i].tolist() for i in range(nc)
    ]
    classes: dict[tuple[Any, ...], tuple[int, list[int]]] = {}
    for q, key in enumerate(zip(*keycols, run.base.tolist(), strict=True)):
        got = classes.get(key)
        if got is None:
            classes[key] = got = (q, [])
        got[1].append(q)  # ascending: feasible order
    t0 = time.perf_counter()
    info = []
    for key, (rep, qs) in classes.items():
        total = 0.0
        for i in range(nc):
            term = spread.terms[i][rep] if spread.hostname[i] else spread.value_terms[i][key[i]]
            total = float(term) if i == 0 else total + float(term)
        info.append((int(total + 0.5), key[-1], qs))
    lo, hi = min(r for r, _, _ in info), max(r for r, _, _ in info)
    best: int | None = None
    tied: list[list[int]] = []
    for raw, base, qs in info:
        norm = 100 if hi == 0 else 100 * (hi + lo - raw) // hi
        total_score = base + col.weight * norm
        if best is None or total_score > best:
            best, tied = total_score, [qs]
        elif total_score == best:
            tied.append(qs)
    ties = sum(map(len, tied))
    if ties == 1:
        q = tied[0][0]
    else:
        r = rng.randrange(ties)
        if broken == "merge":
            r = min(r + 1, ties - 1)
        q = tied[0][r] if len(tied) == 1 else next(itertools.islice(heapq.merge(*tied), r, None))
    return run.feasible[q].name, time.perf_counter() - t0, len(tied)


def main(argv: list[str]) -> None:
    import numpy as np

    import scheduler.placement_run as pr
    from bench.micro.gang_footprint import measure_gangs
    from scheduler import score_totals

    broken = ""
    if "--break" in argv:
        j = argv.index("--break")
        broken = argv[j + 1]
        del argv[j : j + 2]
    current: list[Any] = [None]
    same = diff = 0
    times: list[float] = []
    multi: list[int] = []
    orig_next, orig_select = pr.PlacementRun.next, score_totals.select

    def next_(self: Any, state: Any, pod_info: Any) -> str | None:
        current[0] = self
        try:
            return orig_next(self, state, pod_info)
        finally:
            current[0] = None

    def select(rng: Any, nodes: Any, totals: Any) -> str:
        nonlocal same, diff
        run = current[0]
        if run is None or not run.arrays or run.feasible is not nodes:
            return orig_select(rng, nodes, totals)
        before = rng.getstate()
        mine, took, n_tied = class_pick(run, rng, broken)
        rng.setstate(before)
        theirs = orig_select(rng, nodes, totals)
        same, diff = same + (mine == theirs), diff + (mine != theirs)
        times.append(took)
        multi.append(n_tied)
        return theirs

    # the runs' pick from their columns, which this script wraps (scheduler.class_pick is the
    # built form of the sketch and would bypass it)
    pr.CLASS_PICK = False
    pr.PlacementRun.next = next_  # type: ignore[method-assign]
    score_totals.select = select
    args = [int(a) for a in argv] + [5000, 5000, 1][len(argv) :]
    print(measure_gangs(args[0], args[1], args[2]))
    print(
        f"class pick vs run pick: same {same} diff {diff}; sketch {1e6 * np.median(times):.1f} µs "
        f"per pick (median); picks with several best classes {100 * np.mean(np.array(multi) > 1):.0f} %"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
