"""Cold start: ``gangplane serve`` from exec until ``/readyz`` answers 200, as a user runs it."""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.results import Metric
from bench.workloads.api import _client_from_kubeconfig
from bench.workloads.common import Env

METRICS = {"seconds_to_readyz": Metric("s", False)}
PARAMS = {"cluster": None}  # None: the embedded default fleet; "empty"; or a path: --cluster FILE
# "stored_objects": N starts on a --data-dir already holding N ConfigMaps (bench.workloads.storage)


async def run(params: dict[str, Any], env: Env) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "apiserver.cli", "serve", "--port", "0", "--kubeconfig", f"{tmp}/kc"]
        if params.get("cluster") == "empty":
            Path(tmp, "fleet.yaml").write_text("nodes: []\n")
            args += ["--cluster", f"{tmp}/fleet.yaml"]
        elif params.get("cluster"):
            args += ["--cluster", str(params["cluster"])]
        if params.get("stored_objects"):
            from bench.workloads.storage import populate

            populate(Path(tmp, "data"), int(params["stored_objects"]))
            args += ["--data-dir", f"{tmp}/data"]
        t0 = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=tmp
        )
        try:
            await _url(proc)
            # the kubeconfig is written before the start line: its CA verifies the HTTPS listener
            async with _client_from_kubeconfig(Path(tmp, "kc")) as http:
                while (await http.get("/readyz")).status_code != 200:
                    await asyncio.sleep(0.005)
            elapsed = time.perf_counter() - t0
        finally:
            proc.terminate()
            await proc.wait()
        Path(tmp, "kc").unlink(missing_ok=True)
    return {"seconds_to_readyz": elapsed}


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
