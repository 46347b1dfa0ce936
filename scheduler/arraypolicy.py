"""When the scheduler's array paths pay (numpy-free, so that callers can decide before importing numpy).

The node table (:mod:`scheduler.nodetable`) scores a batch of nodes with a few numpy operations
of fixed cost (a few microseconds each) instead of Python per node. That pays for the window a
cycle scores from its rotating start (a run of consecutive rows: no per-node lookup at all) from
``ARRAY_MIN_NODES`` nodes on. Any other batch must first be mapped to rows node by node, which
pays only from ``MAPPED_MIN_NODES`` on: a PodGroup placement's 100 nodes of one rack scored
~10-25% slower through the table than node by node (the gang placement micro-benchmark), so such
batches keep the per-node path. Read at call time: tests lower them to exercise the array paths
on small clusters.
"""

from __future__ import annotations

ARRAY_MIN_NODES = 64
MAPPED_MIN_NODES = 1024
