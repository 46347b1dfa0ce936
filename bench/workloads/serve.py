"""A ``gangplane serve`` child process for the HTTP-level scenarios.

Started on a free port in a temporary directory with its own kubeconfig and fleet file; the
context waits for its "serving on" line, keeps reading its log while it runs (a full pipe would
stall the server's logging and so the server), and terminates it at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Served:
    url: str
    kubeconfig: Path
    proc: asyncio.subprocess.Process
    #: the server's temporary directory (kubeconfig, fleet, data dir)
    dir: Path


@contextlib.asynccontextmanager
async def gangplane_serve(fleet: dict[str, Any] | None = None, *flags: str) -> AsyncIterator[Served]:
    """``gangplane serve --cluster <fleet> FLAGS…`` (an empty fleet when None) until the block ends."""
    from bench.workloads.cold_start import _url

    with tempfile.TemporaryDirectory() as tmp:
        fleet_file = Path(tmp, "fleet.yaml")
        fleet_file.write_text(yaml.safe_dump(fleet if fleet is not None else {"nodes": []}))
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "gangplane.cli",
            "serve",
            "--port",
            "0",
            "--kubeconfig",
            f"{tmp}/kc",
            "--cluster",
            str(fleet_file),
            "--no-scheduling-records",  # speed is measured without gangplane's records (see records_overhead)
            *flags,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=tmp,
        )
        drain: asyncio.Task[None] | None = None
        try:
            url = await _url(proc)
            drain = asyncio.create_task(_drain(proc))
            yield Served(url, Path(tmp, "kc"), proc, Path(tmp))
        finally:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
            if drain is not None:
                drain.cancel()
                await asyncio.gather(drain, return_exceptions=True)


async def _drain(proc: asyncio.subprocess.Process) -> None:
    assert proc.stdout is not None
    while await proc.stdout.read(65536):
        pass


__all__ = ["Served", "gangplane_serve"]
