"""The plain cycle with its Score totals fused (:mod:`scheduler.score_fusion`) or per plugin, in one
process (a script, not a pytest test)::

    python -m bench.micro.fusion_cpu [--pods 12000] [--block 200] [--runs 2]

Runs ``cycle_cpu``'s ``plain-bound`` workload (plain pods over 5,000 nodes: update_snapshot,
schedule_pod, assume, each pod's bound self confirming it one cycle later) and switches the
fused path on and off every ``--block`` pods, so both modes share the process, the heap and the
machine's load; prints the CPU per pod (``time.process_time``) of each mode over the measured
pods and the hosts digest (the two modes decide alike: the digest equals ``cycle_cpu
plain-bound``'s for the same pods). On a loaded machine, separate processes spread by ±10 %,
more than the difference measured here; alternating blocks in one process does not.
Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any


def run(pods: int, block: int) -> tuple[dict[str, float], str]:
    from bench.micro import cycle_cpu
    from scheduler import schedule_one, score_fusion

    real = score_fusion.fused_totals
    fused = [True]
    spent = {True: 0.0, False: 0.0}
    counted = {True: 0, False: 0}
    seen = [0]
    mark = [time.process_time()]

    def switched(*args: Any) -> Any:
        return real(*args) if fused[0] else score_fusion.NOT_FUSED

    plain_schedule = schedule_one.schedule_pod

    def timed(*args: Any, **kwargs: Any) -> Any:
        # a block ends when its last pod's cycle is about to start: charge it to the mode it ran
        seen[0] += 1
        if seen[0] % block == 0:
            now = time.process_time()
            spent[fused[0]] += now - mark[0]
            counted[fused[0]] += block
            mark[0] = now
            fused[0] = not fused[0]
        return plain_schedule(*args, **kwargs)

    tune = cycle_cpu._tune_gc

    def tuned() -> None:
        tune()
        spent[True] = spent[False] = 0.0
        counted[True] = counted[False] = 0
        seen[0] = 0
        mark[0] = time.process_time()

    schedule_one.fused_totals = switched  # type: ignore[assignment]
    schedule_one.schedule_pod = timed  # type: ignore[assignment]
    cycle_cpu._tune_gc = tuned  # type: ignore[assignment]
    try:
        _, hosts = cycle_cpu.plain(pods=pods, bound=True)
    finally:
        schedule_one.fused_totals = real  # type: ignore[assignment]
        schedule_one.schedule_pod = plain_schedule  # type: ignore[assignment]
        cycle_cpu._tune_gc = tune  # type: ignore[assignment]
    per_pod = {
        "fused": spent[True] / max(counted[True], 1) * 1e6,
        "columns": spent[False] / max(counted[False], 1) * 1e6,
    }
    return per_pod, hashlib.sha256("\n".join(hosts).encode()).hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=int, default=12000)
    ap.add_argument("--block", type=int, default=200)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    for _ in range(args.runs):
        per_pod, digest = run(args.pods, args.block)
        print(
            f"fused {per_pod['fused']:.1f} µs/pod  columns {per_pod['columns']:.1f} µs/pod  "
            f"ratio {per_pod['fused'] / per_pod['columns']:.3f}  hosts {digest}"
        )


if __name__ == "__main__":
    main()
