"""The ``gangplane`` command's process, and a bench scenario's, start no OpenBLAS worker threads
(gangplane.blas).

Observed as a user would: the threads of the command's process once numpy is imported, counted
in ``/proc/self/task`` of a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gangplane.blas import OPENBLAS_THREADS, one_blas_thread

_PROC = Path("/proc/self/task")
needs_proc = pytest.mark.skipif(not _PROC.is_dir(), reason="counting threads needs Linux's /proc")

#: a fresh interpreter: ``SETUP`` (Python), then numpy imported; prints its thread count
_COUNT = """
import contextlib, os
{setup}
import numpy
print(len(os.listdir("/proc/self/task")))
"""


def _cores() -> int:
    """The cores this process may run on (OpenBLAS sizes its pool by them)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _threads_after_numpy(setup: str, env: dict[str, str] | None = None) -> int:
    clean = {k: v for k, v in os.environ.items() if k != OPENBLAS_THREADS}
    clean.update(env or {})
    out = subprocess.run(
        [sys.executable, "-c", _COUNT.format(setup=setup)],
        env=clean,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_one_blas_thread_sets_the_default_and_keeps_a_users_value() -> None:
    env: dict[str, str] = {}
    one_blas_thread(env)
    assert env == {OPENBLAS_THREADS: "1"}
    mine = {OPENBLAS_THREADS: "4"}
    one_blas_thread(mine)
    assert mine == {OPENBLAS_THREADS: "4"}


@needs_proc
def test_the_command_process_has_one_thread_after_numpy() -> None:
    # the command's main returns from --help by SystemExit; its process then imports numpy
    setup = "from gangplane import cli\nwith contextlib.suppress(SystemExit): cli.main(['--help'])"
    assert _threads_after_numpy(setup) == 1


@needs_proc
def test_a_bench_scenario_process_has_one_thread_after_numpy() -> None:
    # a bench/micro script runs its scenarios under server_gc without the command
    setup = "from bench.workloads.common import server_gc\nwith server_gc(): pass"
    assert _threads_after_numpy(setup) == 1


@needs_proc
def test_without_it_numpy_starts_a_worker_where_there_are_cores_to_spare() -> None:
    # what the command avoids (and what makes the test above able to fail)
    if _cores() < 2:
        pytest.skip("OpenBLAS starts no worker on one core: nothing to compare with")
    assert _threads_after_numpy("") > 1


@needs_proc
def test_a_users_thread_count_is_kept() -> None:
    if _cores() < 2:
        pytest.skip("OpenBLAS starts no worker on one core: nothing to compare with")
    setup = "from gangplane import cli\nwith contextlib.suppress(SystemExit): cli.main(['--help'])"
    assert _threads_after_numpy(setup, {OPENBLAS_THREADS: "2"}) > 1
