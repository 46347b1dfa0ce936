"""The fused Score totals with per-cycle array plugins added (this tree's
:func:`scheduler.score_fusion.fused_totals`) against another tree's ``fused_totals``, alternated
in one process (a script, not a pytest test)::

    python -m bench.micro.partialfusion_cpu --base /work/tmp/integ7-a/scheduler/score_fusion.py \
        [--workload gangs|sets] [--count 600] [--runs 2]

Runs ``cycle_cpu``'s ``gangs`` (PodGroups of 3 StatefulSet pods placed by the PodGroup algorithm)
or ``sets`` (the same pods, one cycle each) workload on 5,000 nodes with default spreading, and
switches ``schedule_one.fused_totals`` between the two versions every set, so both share the
process, the heap and the machine's load. Prints the CPU per pod (``time.process_time``) of
each over the measured sets and the hosts digest, which equals ``cycle_cpu``'s for the same
workload when both versions decide alike. Numbers go in docs/bench.md, never into assertions.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import time
from typing import Any


def _load(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("_base_score_fusion", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(base_path: str, workload: str, count: int) -> tuple[dict[str, float], str]:
    from bench.micro import cycle_cpu
    from scheduler import schedule_one, score_fusion

    base = _load(base_path)
    new = score_fusion.fused_totals
    spent = {"base": 0.0, "new": 0.0}
    sets = {"base": 0, "new": 0}
    real_timed = cycle_cpu._timed
    pods_each = [3]

    def alternating(place: Any, warm: int, n: int, each: int) -> float:
        pods_each[0] = each
        for k in range(warm):
            place(k)
        cycle_cpu._tune_gc()
        for k in range(warm, warm + n):
            mode = "new" if k % 2 else "base"
            which = new if mode == "new" else base.fused_totals
            # the base's NOT_FUSED sentinel is its own object: map it to this tree's
            schedule_one.fused_totals = which if mode == "new" else _bridge(base)  # type: ignore[assignment]
            t = time.process_time()
            place(k)
            spent[mode] += time.process_time() - t
            sets[mode] += 1
        return 0.0

    cycle_cpu._timed = alternating  # type: ignore[assignment]
    try:
        _, hosts = getattr(cycle_cpu, workload)(count)
    finally:
        cycle_cpu._timed = real_timed  # type: ignore[assignment]
        schedule_one.fused_totals = new  # type: ignore[assignment]
    per_pod = {m: spent[m] / max(sets[m] * pods_each[0], 1) * 1e6 for m in spent}
    return per_pod, hashlib.sha256("\n".join(hosts).encode()).hexdigest()[:12]


def _bridge(base: Any) -> Any:
    from scheduler.score_fusion import NOT_FUSED

    def call(*args: Any) -> Any:
        out = base.fused_totals(*args)
        return NOT_FUSED if out is base.NOT_FUSED else out

    return call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="another tree's scheduler/score_fusion.py")
    ap.add_argument("--workload", choices=["gangs", "sets"], default="gangs")
    ap.add_argument("--count", type=int, default=600)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    for _ in range(args.runs):
        per_pod, digest = run(args.base, args.workload, args.count)
        print(
            f"{args.workload}: base {per_pod['base']:.1f} µs/pod  new {per_pod['new']:.1f} µs/pod  "
            f"ratio {per_pod['new'] / per_pod['base']:.3f}  hosts {digest}"
        )


if __name__ == "__main__":
    main()
