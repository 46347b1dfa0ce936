"""The scheduler's start-up priming: its snapshot and node table built before the first pod.

The first cycle after start would otherwise copy every NodeInfo into the snapshot (5,000 clones
on a 5,000-node cluster), build the numpy node table row by row and pay numpy's import (about
0.1 s of CPU) while that pod - or a whole gang - waits. A kube-scheduler has the same one-time
work (its first ``UpdateSnapshot`` copies every node) but does it in Go; here it is done once
the informers have synced, when :meth:`~scheduler.scheduler.Scheduler.start` returns, so the
first pod's latency is its own cycle's.

Priming decides nothing: the cache's next ``update_snapshot`` copies only what changed since,
exactly as it would after an earlier cycle, and the node table is kept current the same way
(rows refilled when next read). The table - and numpy with it - is built only when the cluster
is large enough for a cycle to use it (:data:`~scheduler.arraypolicy.ARRAY_MIN_NODES`), so a
small cluster (``gangplane serve``'s default fleet, the pytest plugin's) never imports numpy.
"""

from __future__ import annotations

from scheduler.arraypolicy import ARRAY_MIN_NODES
from scheduler.cache import Cache, Snapshot


def prime(cache: Cache, snapshot: Snapshot) -> bool:
    """Bring ``snapshot`` up to date with ``cache`` and, on a cluster of at least
    :data:`ARRAY_MIN_NODES` nodes, build its node table; returns whether the table was built."""
    cache.update_snapshot(snapshot)
    if snapshot.num_nodes() < ARRAY_MIN_NODES:
        return False
    snapshot.node_table()
    return True
