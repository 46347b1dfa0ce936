"""One OpenBLAS thread for a process gangplane owns: its numpy does no BLAS work.

The scheduler's node table is numpy arrays (issue #22), and the numpy wheels carry OpenBLAS,
which starts a pool of worker threads when numpy is imported (one per core but the caller's)
and lets each spin for a while before it sleeps. gangplane never calls a BLAS routine: its
array code is element-wise arithmetic, comparisons and reductions, which numpy runs in the
calling thread. The pool is only a cost: on this repository's 2-core machine the one worker
spun 30-60 ms of CPU on the other core after numpy's import (the scheduler imports it as it
starts on a large cluster, priming its node table: :mod:`scheduler.prime`), 1-2.5 % of the
process CPU of ``gangs-1000x3``'s measured phase (``cpu_s``; the wall time does not change, the
main thread never waits for it), plus a thread and its buffers for the life of the process.

``OPENBLAS_NUM_THREADS=1`` makes OpenBLAS start no worker. It is read once, when numpy is first
imported, so it must be in the environment before that: the command sets it first thing
(:func:`gangplane.cli.main`), and the bench's in-process scenarios set it as that command does
(:func:`bench.workloads.common.server_gc`). A value the user set is kept. The pytest plugin and
code embedding a control plane leave their process's environment alone: numpy there belongs to
the embedding program as much as to gangplane.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: OpenBLAS's own variable for the size of its thread pool (1: the caller's thread only)
OPENBLAS_THREADS = "OPENBLAS_NUM_THREADS"


def one_blas_thread(environ: MutableMapping[str, str] | None = None) -> None:
    """Ask OpenBLAS for no worker threads, unless the environment already says how many."""
    env = os.environ if environ is None else environ
    env.setdefault(OPENBLAS_THREADS, "1")


__all__ = ["OPENBLAS_THREADS", "one_blas_thread"]
