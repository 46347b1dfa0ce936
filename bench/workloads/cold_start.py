"""Cold start: ``gangplane serve`` from exec until ``/readyz`` answers 200, as a user runs it.

A pip-installed gangplane has its bytecode compiled at install time, so by default
(``bytecode: cached``) one untimed start first lets the interpreter write ``__pycache__`` for
every module a start imports (even where ``PYTHONDONTWRITEBYTECODE`` is set, as in editable
development trees), and the starts share one kubeconfig path, so the serving certificates of the
first are reused as on a user's second start. ``bytecode: none`` points the interpreter at an
empty bytecode cache and a fresh kubeconfig directory, so every module is compiled from source
and new certificates are made on each start: a first start ever, the worst case. Besides the wall time the server's
own CPU seconds up to ``/readyz`` are reported (Linux), which a loaded machine disturbs less.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.results import Metric
from bench.workloads.api import _client_from_kubeconfig, _cpu_seconds
from bench.workloads.common import Env

METRICS = {"seconds_to_readyz": Metric("s", False), "server_cpu_s": Metric("s", False)}
#: cluster: None (the embedded default fleet), "empty", or a path (--cluster FILE);
#: bytecode: "cached" (as installed) or "none" (every module compiled on each start);
#: stored_objects: N starts on a --data-dir already holding N ConfigMaps (bench.workloads.storage)
PARAMS = {"cluster": None, "bytecode": "cached"}

_warmed: set[tuple[Any, ...]] = set()
#: per scenario (cluster, stored objects): the directory its kubeconfig and certificates live in
_kubeconfig_dirs: dict[tuple[Any, ...], str] = {}


def _kubeconfig_dir(key: tuple[Any, ...]) -> str:
    if key not in _kubeconfig_dirs:
        _kubeconfig_dirs[key] = tempfile.mkdtemp(prefix="gangplane-cold-start-")
        atexit.register(shutil.rmtree, _kubeconfig_dirs[key], True)
    return _kubeconfig_dirs[key]


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    bytecode = params.get("bytecode", "cached")
    if bytecode not in ("cached", "none"):
        raise ValueError(f"cold-start: bytecode must be 'cached' or 'none', not {bytecode!r}")
    warm_key = (params.get("cluster"), params.get("stored_objects"))
    with tempfile.TemporaryDirectory() as tmp:
        kc_dir = tmp if bytecode == "none" else _kubeconfig_dir(warm_key)
        args = [sys.executable, "-m", "gangplane.cli", "serve", "--port", "0", "--kubeconfig", f"{kc_dir}/kc"]
        if params.get("cluster") == "empty":
            Path(tmp, "fleet.yaml").write_text("nodes: []\n")
            args += ["--cluster", f"{tmp}/fleet.yaml"]
        elif params.get("cluster"):
            args += ["--cluster", str(params["cluster"])]
        if params.get("stored_objects"):
            from bench.workloads.storage import populate

            populate(Path(tmp, "data"), int(params["stored_objects"]))
            args += ["--data-dir", f"{tmp}/data"]
        child_env = dict(os.environ)
        if bytecode == "none":
            child_env["PYTHONDONTWRITEBYTECODE"] = "1"
            child_env["PYTHONPYCACHEPREFIX"] = str(Path(tmp, "no-pycache"))
        elif warm_key not in _warmed:
            child_env.pop("PYTHONDONTWRITEBYTECODE", None)
            await _start(args, tmp, kc_dir, child_env)
            _warmed.add(warm_key)
        return await _start(args, tmp, kc_dir, child_env)


async def _start(args: list[str], tmp: str, kc_dir: str, child_env: dict[str, str]) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tmp, env=child_env
    )
    try:
        await _url(proc)
        # the kubeconfig is written before the start line: its CA verifies the HTTPS listener
        async with _client_from_kubeconfig(Path(kc_dir, "kc")) as http:
            while (await http.get("/readyz")).status_code != 200:
                await asyncio.sleep(0.005)
        out = {"seconds_to_readyz": time.perf_counter() - t0}
        cpu = _cpu_seconds(proc.pid)
        if cpu is not None:
            out["server_cpu_s"] = cpu
    finally:
        proc.terminate()
        await proc.wait()
    Path(kc_dir, "kc").unlink(missing_ok=True)
    return out


async def _url(proc: asyncio.subprocess.Process) -> str:
    assert proc.stdout is not None
    lines = []
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line:
            raise RuntimeError("gangplane serve exited during start-up:\n" + "".join(lines))
        text = line.decode()
        lines.append(text)
        m = re.search(r"serving on (\S+)", text)
        if m:
            return m.group(1)
