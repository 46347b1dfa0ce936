"""``gangplane serve --data-dir`` as a real process: start, stop (SIGTERM) or kill -9, restart on
the same dir; raw-HTTP helpers (httpx) for lists and watches that the tests check event by event."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import Server, _start_server, _stop

CM_PATH = "/api/v1/namespaces/default/configmaps"


def start(workdir: Path, data_dir: Path, *extra: str) -> Server:
    """A plain-HTTP, anonymous server on ``data_dir`` (its log in ``workdir/serve.log``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    return _start_server(workdir, ["--no-tls", "--anonymous", "--data-dir", str(data_dir), *extra])


def stop(server: Server) -> int:
    """SIGTERM, as an operator stops it; returns the exit code."""
    _stop(server)
    return server.proc.returncode


def kill9(server: Server) -> None:
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(30)


def list_objects(url: str, path: str = CM_PATH) -> tuple[dict[str, dict[str, Any]], int]:
    """name -> object, and the list's resourceVersion."""
    r = httpx.get(url + path, timeout=30)
    r.raise_for_status()
    body = r.json()
    return {o["metadata"]["name"]: o for o in body["items"]}, int(body["metadata"]["resourceVersion"])


def watch_events(url: str, rv: int, path: str = CM_PATH, timeout: float = 5.0) -> Iterator[dict[str, Any]]:
    """The events of a watch from ``rv``, ending when the server's ``timeoutSeconds`` closes it."""
    params = {"watch": "true", "resourceVersion": str(rv), "timeoutSeconds": str(int(timeout))}
    with httpx.stream("GET", url + path, params=params, timeout=timeout + 30) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line.strip():
                yield json.loads(line)


def serve_exit(data_dir: Path, workdir: Path) -> subprocess.CompletedProcess[str]:
    """``gangplane serve --data-dir`` expected to refuse to start: its exit code and stderr."""
    import sys

    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "serve",
            "--port",
            "0",
            "--no-tls",
            "--anonymous",
            "--kubeconfig",
            str(workdir / "kubeconfig"),
            "--data-dir",
            str(data_dir),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workdir,
    )
