"""One pod's scheduling cycle repeated on a fixed snapshot, for the three shapes of the
gangs-1000x3 and SchedulingBasic cycles (a script, not a pytest-benchmark test):

    python bench/micro/cycle_fixed.py [REPS]   # µs CPU per schedule_pod, best of 7 rounds:
                                               # first   - a new StatefulSet's first pod (no
                                               #           pod matches its default spreading)
                                               # sibling - its second pod (the first one
                                               #           assumed on a node: a few counted pods)
                                               # plain   - a pod without an owner (no spreading)

5,000 nodes in 50 racks, 300 sets of 3 and 300 plain pods already placed, the snapshot caught
up; then each shape's cycle runs REPS times (default 2,000) from the same rotating start index
with a fresh CycleState, so no cycle pays the snapshot's catch-up of a previous one
(``cycle_cpu.py`` measures that too, and is noisier for it). ``cycle_cpu``'s ``gangs`` is one
first and two siblings per set plus the catch-ups and the PodGroup bookkeeping. Prints the
hosts chosen (a digest): two builds that decide alike print the same. Compare builds by
running this file from a neutral directory with ``PYTHONPATH`` set to each tree, alternately.
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from typing import Any

from bench.micro import cycle_cpu
from bench.workloads.common import pod

ROUNDS = 7


def _setup() -> tuple[Any, Any, dict[str, Any]]:
    """(framework, snapshot, pods by shape) with the cluster filled as the module says."""
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo, compile_selector

    cache, handle, fw, snap = cycle_cpu._spreading_framework()
    # as the scheduler's DefaultSelectors: a pod without an owner has no default spreading
    handle.default_spread_selector = lambda p: (
        compile_selector({"matchLabels": {"app": p["metadata"]["labels"]["app"]}})
        if p["metadata"].get("ownerReferences")
        else None
    )

    def place(p: dict[str, Any]) -> None:
        cache.update_snapshot(snap)
        handle.snapshot = snap
        pi = PodInfo(p)
        r = schedule_one.schedule_pod(fw, CycleState(), pi, snap)
        cache.assume_pod(p, r.suggested_host, pi)

    for k in range(300):
        for p in cycle_cpu._set_pods(f"w{k}"):
            place(p)
    for i in range(300):
        q = pod(f"pl-{i}")
        q["metadata"]["uid"] = f"plu-{i}"
        place(q)
    first, sibling, _ = cycle_cpu._set_pods("probe")
    place(first)
    cache.update_snapshot(snap)
    handle.snapshot = snap
    snap.node_table()
    plain = pod("plainprobe")
    plain["metadata"]["uid"] = "pp"
    return fw, snap, {"first": cycle_cpu._set_pods("fresh")[0], "sibling": sibling, "plain": plain}


def main(argv: list[str]) -> None:
    from scheduler import schedule_one
    from scheduler.framework import CycleState
    from scheduler.nodeinfo import PodInfo

    reps = int(argv[0]) if argv else 2000
    fw, snap, shapes = _setup()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*cycle_cpu.GC_THRESHOLD)
    hosts: list[str] = []
    out: list[str] = []
    for name, p in shapes.items():
        best = None
        start = fw.next_start_node_index
        for _ in range(ROUNDS):
            infos = [PodInfo(p) for _ in range(reps)]
            states = [CycleState() for _ in range(reps)]
            t = time.process_time()
            for pi, state in zip(infos, states, strict=True):
                fw.next_start_node_index = start
                hosts.append(schedule_one.schedule_pod(fw, state, pi, snap).suggested_host)
            us = (time.process_time() - t) / reps * 1e6
            best = us if best is None else min(best, us)
        out.append(f"{name} {best:.1f}")
    digest = hashlib.sha1(",".join(hosts).encode()).hexdigest()[:12]
    print(" ".join(out), f"µs CPU/cycle hosts {digest}")


if __name__ == "__main__":
    main(sys.argv[1:])
