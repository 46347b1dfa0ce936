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
``--rounds`` times each, and prints each run's line.
"""

from __future__ import annotations

import gc
import hashlib
import os
import subprocess
import sys
import time
from typing import Any


def measure(members: int, nodes: int) -> str:
    import random

    from bench.micro.cycle_cpu import _set_pods
    from bench.workloads.common import node
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle
    from scheduler.interfaces import CycleState, PodGroupInfo
    from scheduler.nodeinfo import NodeInfo, PodInfo, compile_selector
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i, racks=max(1, nodes // 100)))
    handle = Handle(rng=random.Random(1))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    pods = [PodInfo(p) for p in _set_pods("g", members, group=True)]
    pg = {
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
    }
    group = PodGroupInfo("default", "g", pg, pods, PodGroupState("default/g"))
    cache.update_snapshot(snap)
    snap.node_table()  # built before the freeze: the cluster's, not the cycle's
    gc.collect()
    gc.freeze()
    gc.disable()
    t0 = time.process_time()
    result = algorithm.run(CycleState(), group, snap)
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
    import random

    from bench.micro.cycle_cpu import _set_pods
    from bench.workloads.common import node
    from scheduler.cache import Cache
    from scheduler.defaults import default_profile, default_registry
    from scheduler.framework import Framework, Handle
    from scheduler.interfaces import CycleState, PodGroupInfo
    from scheduler.nodeinfo import PodInfo, compile_selector
    from scheduler.podgroup_algorithm import PodGroupAlgorithm
    from scheduler.podgroups import PodGroupState

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i, racks=max(1, nodes // 100)))
    handle = Handle(rng=random.Random(1))
    handle.default_spread_selector = lambda p: compile_selector(
        {"matchLabels": {"app": p["metadata"]["labels"]["app"]}}
    )
    fw = Framework(default_profile(), handle, registry=default_registry())
    snap = cache.snapshot()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    lines = []
    total = 0.0
    everything = hashlib.sha1()
    for k in range(gangs):
        app = f"g{k}"
        pods = [PodInfo(p) for p in _set_pods(app, members, group=True)]
        pg = {
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": members}}},
        }
        group = PodGroupInfo("default", app, pg, pods, PodGroupState(f"default/{app}"))
        cache.update_snapshot(snap)
        snap.node_table()
        gc.collect()
        gc.disable()
        t0 = time.process_time()
        result = algorithm.run(CycleState(), group, snap, keep_winner=True)
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


def pairs(trees: list[str], rounds: int, argv: list[str]) -> None:
    for r in range(rounds):
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run(
                [sys.executable, __file__, *argv], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
            print(f"round {r} {tree}: {out}", flush=True)


def main(argv: list[str]) -> None:
    args: list[Any] = list(argv)
    if "--pairs" in args:
        i = args.index("--pairs")
        trees = args[i + 1 : i + 3]
        del args[i : i + 3]
        rounds = 3
        if "--rounds" in args:
            j = args.index("--rounds")
            rounds = int(args[j + 1])
            del args[j : j + 2]
        pairs(trees, rounds, args)
        return
    gangs = 0
    if "--gangs" in args:
        j = args.index("--gangs")
        gangs = int(args[j + 1])
        del args[j : j + 2]
    members = int(args[0]) if args else 1000
    nodes = int(args[1]) if len(args) > 1 else 1000
    print(measure_gangs(members, nodes, gangs) if gangs else measure(members, nodes))


if __name__ == "__main__":
    main(sys.argv[1:])
