"""The scheduler cache's per-pod snapshot catch-up, without the cycle around it (a script):

    python -m bench.micro.snapcatch_cpu [PODS]

Over 5,000 nodes (the SchedulingBasic cluster), each pod is assumed in the cache on a node
taken round-robin, then :meth:`Cache.update_snapshot` brings the snapshot up to date and
:meth:`Snapshot.node_table` refills the node's row, as a plain pod's next cycle does; the
pod's bound self confirms it one pod later (``Cache.add_pod``, the informer's Add). Prints the
CPU time per pod (``time.process_time``) of the whole loop, and a digest of the snapshot's
capacity index and table after it (two builds that keep them alike print the same digest).
Compare builds by alternating them: ``PYTHONPATH=<tree> python -m bench.micro.snapcatch_cpu``.
"""

from __future__ import annotations

import gc
import hashlib
import sys
import time
from typing import Any

from bench.workloads.common import bound_pod, node, pod


def run(pods: int = 20_000, nodes: int = 5000) -> tuple[float, str]:
    from scheduler.cache import Cache
    from scheduler.nodeinfo import PodInfo

    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i))
    snap = cache.snapshot()
    snap.node_table()
    names = list(snap.node_names)
    made = []
    for i in range(pods):
        p = pod(f"p-{i}")
        p["metadata"]["uid"] = f"u-{i}"
        made.append((p, PodInfo(p), names[(i * 7) % nodes]))
    gc.collect()
    gc.freeze()
    pending: list[dict[str, Any]] = []
    t = time.process_time()
    for i, (p, pi, host) in enumerate(made):
        cache.update_snapshot(snap)
        snap.node_table()
        cache.assume_pod(p, host, pi)
        pending.append(bound_pod(p, host, i + 1))
        if len(pending) > 1:
            b = pending.pop(0)
            cache.finish_binding(b)
            cache.add_pod(b)
    cache.update_snapshot(snap)
    table = snap.node_table()
    us = (time.process_time() - t) / pods * 1e6
    h = hashlib.sha256(repr(sorted(snap.index.entries().items())).encode())
    h.update(table.requested.tobytes())
    h.update(table.allocatable.tobytes())
    h.update(table.pod_count.tobytes())
    return us, h.hexdigest()[:12]


def main(argv: list[str]) -> None:
    us, digest = run(int(argv[0]) if argv else 20_000)
    print(f"snapcatch {us:.2f} us CPU/pod digest {digest}")


if __name__ == "__main__":
    main(sys.argv[1:])
