"""The window proofs of a cycle, with the window as a plain slice (before) or as a
:class:`~scheduler.noderun.NodeRun` (a script, not a pytest test)::

    python -m bench.micro.noderun_cpu [--nodes 5000] [--window 500] [--cycles 20000] [--runs 3]

Per simulated cycle: the Filter fast path's window built from a rotating start, then what a
cycle's consumers ask of it: ``Snapshot.is_run`` twice (TaintToleration's and the array
scorers' ``wants_table``; a gang member's cycle asks a third time, PodTopologySpread's
``uniform_score``) and ``nodetable.rows_for`` once, with one node's NodeInfo replaced between
cycles (an assume) so every cycle's proof is fresh. The two modes alternate every cycle in one
process; prints the CPU (``time.process_time``) per cycle of each. Numbers go in docs/bench.md.
"""

from __future__ import annotations

import argparse
import time

from bench.workloads.common import node, pod


def run(nodes: int, window: int, cycles: int) -> dict[str, float]:
    from scheduler.cache import Cache
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo
    from scheduler.nodetable import rows_for

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i))
    snap = cache.snapshot()
    cache.update_snapshot(snap)
    snap.node_table()
    spent = {"slice": 0.0, "noderun": 0.0}
    start = 0
    for c in range(cycles):
        # an assume between cycles: one NodeInfo replaced (the snapshot's epoch moves on)
        name = snap.ordered()[(start + 7) % nodes].name
        snap.assume_pod(PodInfo(pod(f"p{c}")), name)
        mode = "noderun" if c % 2 else "slice"
        t = time.process_time()
        if mode == "noderun":
            w = snap.run(start, window)
        else:
            ordered = snap.ordered()
            w = ordered[start : start + window]
            if len(w) < window:
                w += ordered[: window - len(w)]
        table = snap.node_table()
        ok = snap.is_run(w) and snap.is_run(w)
        rows = rows_for(CycleState(), table, w)
        spent[mode] += time.process_time() - t
        assert ok and rows is not None
        start = (start + window) % nodes
    return {m: v / (cycles // 2) * 1e6 for m, v in spent.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for _ in range(args.runs):
        got = run(args.nodes, args.window, args.cycles)
        print(
            f"slice {got['slice']:.2f} µs/cycle  noderun {got['noderun']:.2f} µs/cycle  "
            f"saved {got['slice'] - got['noderun']:.2f} µs"
        )


if __name__ == "__main__":
    main()
