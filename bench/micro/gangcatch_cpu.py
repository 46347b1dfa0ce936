"""The snapshot catch-up after a big gang, as gangs-10x5000 has it (a script, not a test):

    python -m bench.micro.gangcatch_cpu [GANGS] [MEMBERS]

Gangs of ``MEMBERS`` StatefulSet pods (kube's default spreading; 5,000 by default) are placed
one after another by the PodGroup algorithm on 5,000 nodes in 50 racks, in the plane's order:
a gang's cycle starts with :meth:`Cache.update_snapshot`, its search leaves the winner assumed
in the snapshot (``keep_winner``), the previous gang's bound pods then confirm their assumed
selves in the cache (in the plane they arrive while the next search runs), the gang is assumed
in the cache and the snapshot adopts what it can (:meth:`Cache.adopt_assumed`). So the next
catch-up finds every node of the last gang changed in the cache and assumed on in the snapshot.

Prints the CPU (``time.process_time``) of each catch-up from the third gang on (the
``update_snapshot`` call plus the index work it leaves for the next reader: the node table's
rows and deferred nodes), per node changed, and a digest of every chosen host plus the
snapshot's capacity index and table after the last gang (two builds that keep the snapshot
alike print the same digest). Compare builds by alternating
``PYTHONPATH=<tree> python -m bench.micro.gangcatch_cpu``.
"""

from __future__ import annotations

import hashlib
import sys
import time
from typing import Any

from bench.micro.cycle_cpu import _gang_group, _spreading_framework, _tune_gc
from bench.workloads.common import bound_pod


def run(gangs: int = 6, members: int = 5000) -> tuple[list[float], str]:
    from scheduler.interfaces import CycleState
    from scheduler.podgroup_algorithm import PodGroupAlgorithm

    cache, handle, fw, snap = _spreading_framework()
    handle.snapshot = snap
    algorithm = PodGroupAlgorithm(fw)
    digest = hashlib.sha256()
    catch_up: list[float] = []
    unconfirmed: list[tuple[Any, str]] = []
    rv = 0
    _tune_gc()
    for k in range(gangs):
        group = _gang_group(f"g{k}", members)
        t = time.process_time()
        cache.update_snapshot(snap)
        snap.node_table()
        snap._catch_up()
        if k >= 2:
            catch_up.append(time.process_time() - t)
        result = algorithm.run(CycleState(), group, snap, keep_winner=True)
        assert result.success and result.placement is not None
        for p, host in unconfirmed:  # the previous gang's bindings come back
            rv += 1
            cache.add_pod(bound_pod(p, host, rv))
        unconfirmed = []
        fitting = result.placement.fitting()
        for a in fitting:
            cache.assume_pod(a.pod_info.pod, a.node_name, a.pod_info)
            unconfirmed.append((a.pod_info.pod, a.node_name))
            digest.update(a.node_name.encode())
        if result.kept:
            cache.adopt_assumed(snap, {a.node_name for a in fitting}, {a.pod_info.uid for a in fitting})
    cache.update_snapshot(snap)
    table = snap.node_table()
    digest.update(repr(sorted(snap.index.entries().items())).encode())
    digest.update(table.requested.tobytes())
    digest.update(table.pod_count.tobytes())
    return catch_up, digest.hexdigest()[:12]


def main(argv: list[str]) -> None:
    gangs = int(argv[0]) if argv else 6
    members = int(argv[1]) if len(argv) > 1 else 5000
    cpu, digest = run(gangs, members)
    per = sorted(c / members * 1e6 for c in cpu)
    print(
        f"gangcatch median {per[len(per) // 2]:.2f} us CPU/node "
        f"({' '.join(f'{c:.3f}' for c in cpu)} s per catch-up) digest {digest}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
