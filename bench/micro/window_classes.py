"""The shape of a big gang's window picks, for a batched pick's design (a script, not a test):

    python -m bench.micro.window_classes 5000 5000 2      # 2 gangs of 5,000 on 5,000 nodes

Runs :func:`bench.micro.gang_footprint.measure_gangs` with :meth:`PlacementRun.next` and
:func:`scheduler.score_totals.select` wrapped (placements unchanged: same host digests) and
prints, over every pick a window's run made in numpy arrays:

- how many distinct (carried spread raw score, node-local base) pairs the window's feasible
  nodes have at the pick: the distinct totals a batched pick would have to compare;
- how many distinct (zone row, hostname count, node-local base) keys they have: classes that
  no other window's pod changes (its pod changes a zone's count: the raw score of a whole
  class), the unit a batched pick would keep;
- how many nodes tie for the best total (each tie is a ``randrange`` draw over that count);
- how often the spread column's raw min/max (NormalizeScore's bounds) changed since the same
  run's previous pick: a batched pick cannot assume them fixed when this is near 100 %.

Why: docs/bench.md "Session 15 — bigsearch3": the batched pick's preconditions, measured.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any


def main(argv: list[str]) -> None:
    import numpy as np

    import scheduler.placement_run as pr
    from bench.micro.gang_footprint import measure_gangs
    from scheduler import score_totals

    classes: list[int] = []
    ties: list[int] = []
    lasting: list[int] = []
    moved = Counter[bool]()
    last: dict[int, tuple[int, int]] = {}
    orig_next = pr.PlacementRun.next
    orig_select = score_totals.select

    def next_(self: Any, state: Any, pod_info: Any) -> str | None:
        host = orig_next(self, state, pod_info)
        carried = [c for c in self.columns if c.carried is not None]
        if host is not None and self.arrays and len(carried) == 1:
            raw = carried[0].raw
            classes.append(len(set(zip(raw.tolist(), self.base.tolist(), strict=True))))
            cr = carried[0].carried
            cols = [
                list(cr.per_node[i]) if cr.hostname[i] else cr.node_rows[i].tolist()
                for i in range(len(cr.constraints))
            ]
            lasting.append(len(set(zip(*cols, self.base.tolist(), strict=True))))
            b = (int(raw.min()), int(raw.max()))
            if id(self) in last:
                moved[last[id(self)] != b] += 1
            last[id(self)] = b
        return host

    def select(rng: Any, nodes: Any, totals: Any) -> str:
        ties.append(int((totals == totals.max()).sum()))
        return orig_select(rng, nodes, totals)

    # the runs' pick from their columns, which this script wraps (scheduler.class_pick is the
    # built form of the sketch and would bypass it)
    pr.CLASS_PICK = False
    pr.PlacementRun.next = next_  # type: ignore[method-assign]
    score_totals.select = select
    args = [int(a) for a in argv] + [5000, 5000, 1][len(argv) :]
    print(measure_gangs(args[0], args[1], args[2]))
    c, t = np.array(classes), np.array(ties)
    print(
        f"run picks {len(c)}: distinct (raw, base) per window median {np.median(c):.0f} p90 "
        f"{np.percentile(c, 90):.0f} max {c.max()}"
    )
    k = np.array(lasting)
    print(
        f"distinct (domain rows, host counts, base) per window median {np.median(k):.0f} p90 "
        f"{np.percentile(k, 90):.0f} max {k.max()}"
    )
    print(
        f"ties median {np.median(t):.0f} p90 {np.percentile(t, 90):.0f} max {t.max()}, "
        f"single winner {100 * (t == 1).mean():.1f} %"
    )
    print(f"spread bounds moved since the run's previous pick: {moved[True]} of {sum(moved.values())}")


if __name__ == "__main__":
    main(sys.argv[1:])
