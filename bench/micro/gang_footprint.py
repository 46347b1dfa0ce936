"""What a big gang's PodGroup cycle leaves for the cyclic collector (a script, not a test):

    python -m bench.micro.gang_footprint                      # a gang of 1,000 on 1,000 nodes
    python -m bench.micro.gang_footprint 5000 5000            # a gang of 5,000 on 5,000 nodes
    python -m bench.micro.gang_footprint 1000 1000 --pairs OLD_TREE NEW_TREE --rounds 3
    python -m bench.micro.gang_footprint 5000 5000 --gangs 10  # 10 gangs in a row, one cache

One gang of StatefulSet pods (kube's default spreading) is placed by the PodGroup algorithm on
the whole cluster (``nodes`` nodes in racks of 100), and its result is kept alive, as the
scheduler keeps every member's CycleState until the group is bound. Printed, for the objects the
cycle left alive (everything allocated since a ``gc.freeze()`` just before it, after a full
collection): how many GC-tracked objects there are, how many references they hold (what a
collector pass traverses), how many of them are lists of NodeInfos, the CPU of one young pass
over them (``gc.collect(1)``, ``time.process_time``), the CPU of the placement itself, and a
digest of the hosts chosen (two builds that place alike print the same digest).

Why: a young collector pass traverses every container allocated since the last one; in the
plane (gang-1x1000-running) the passes while a gang was placed and bound traversed the members'
cycle states, which held one ~420-node window each (``scheduler.cycle_memo``).

``--gangs N``: places N gangs (StatefulSets ``g0``..) one after the other on the same cache,
as the scheduler does (the winner kept in the snapshot, assumed in the cache and adopted), so
the 2nd..Nth gang's search runs on nodes holding the previous gangs' pods (gangs-10x5000);
prints each gang's placement CPU (the collector off, as above) and host digest, and the total.

``--pairs A B``: runs this script against source tree A and B alternately (``PYTHONPATH``),
``--rounds`` times each, and prints each run's line (both trees need the helpers it imports
from :mod:`bench.micro.cycle_cpu`, ``_gang_group`` among them: session 15 on).
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from typing import Any


def _setup(nodes: int) -> tuple[Any, Any, Any, Any]:
    """``(cache, snapshot, algorithm, CycleState)`` over ``nodes`` nodes in racks of 100, with
    kube's default spreading of a StatefulSet's pods."""
    from bench.micro.cycle_cpu import _spreading_framework
    from scheduler.interfaces import CycleState
    from scheduler.podgroup_algorithm import PodGroupAlgorithm

    cache, handle, fw, snap = _spreading_framework(nodes, racks=max(1, nodes // 100))
    handle.snapshot = snap
    return cache, snap, PodGroupAlgorithm(fw), CycleState


def measure(members: int, nodes: int) -> str:
    from bench.micro.cycle_cpu import _gang_group
    from scheduler.nodeinfo import NodeInfo

    cache, snap, algorithm, cycle_state = _setup(nodes)
    group = _gang_group("g", members)
    cache.update_snapshot(snap)
    snap.node_table()  # built before the freeze: the cluster's, not the cycle's
    gc.collect()
    gc.freeze()
    gc.disable()
    t0 = time.process_time()
    result = algorithm.run(cycle_state(), group, snap)
    cpu = time.process_time() - t0
    assert result.success and result.placement is not None
    young = [o for o in gc.get_objects() if o is not result]
    refs = sum(len(gc.get_referents(o)) for o in young)
    node_lists = sum(1 for o in young if type(o) is list and o and type(o[0]) is NodeInfo)
    count = len(young)
    del young
    t1 = time.process_time()
    gc.collect(1)
    pass_ms = (time.process_time() - t1) * 1000
    hosts = ",".join(a.node_name for a in result.placement.fitting())
    digest = hashlib.sha1(hosts.encode()).hexdigest()[:12]
    gc.enable()
    return (
        f"tracked {count} refs {refs} node-lists {node_lists} young-pass {pass_ms:.1f} ms "
        f"placement {cpu:.3f} s CPU hosts {digest}"
    )


def measure_gangs(members: int, nodes: int, gangs: int) -> str:
    from bench.micro.cycle_cpu import _gang_group

    cache, snap, algorithm, cycle_state = _setup(nodes)
    lines = []
    total = 0.0
    everything = hashlib.sha1()
    for k in range(gangs):
        group = _gang_group(f"g{k}", members)
        cache.update_snapshot(snap)
        snap.node_table()
        gc.collect()
        gc.disable()
        t0 = time.process_time()
        result = algorithm.run(cycle_state(), group, snap, keep_winner=True)
        cpu = time.process_time() - t0
        gc.enable()
        total += cpu
        assert result.success and result.placement is not None
        fitting = result.placement.fitting()
        for a in fitting:
            cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
        if result.kept:
            cache.adopt_assumed(snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting})
        hosts = ",".join(a.node_name for a in fitting)
        everything.update(hosts.encode())
        digest = hashlib.sha1(hosts.encode()).hexdigest()[:12]
        lines.append(f"gang {k} placement {cpu:.3f} s CPU hosts {digest}")
    lines.append(f"all {gangs} gangs {total:.3f} s CPU hosts {everything.hexdigest()[:12]}")
    return "\n".join(lines)


def take_gangs(args: list[Any], default: int) -> int:
    """``--gangs N`` taken out of ``args`` (the micros that place gangs in a row share it)."""
    if "--gangs" not in args:
        return default
    j = args.index("--gangs")
    gangs = int(args[j + 1])
    del args[j : j + 2]
    return gangs


def main(argv: list[str]) -> None:
    args: list[Any] = list(argv)
    if "--pairs" in args:
        from bench.micro.alternating import run_pairs  # the parent's only: see its docstring

        run_pairs(__file__, args)
        return
    gangs = take_gangs(args, 0)
    members = int(args[0]) if args else 1000
    nodes = int(args[1]) if len(args) > 1 else 1000
    print(measure_gangs(members, nodes, gangs) if gangs else measure(members, nodes))


if __name__ == "__main__":
    main(sys.argv[1:])
