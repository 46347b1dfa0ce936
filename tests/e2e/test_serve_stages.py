"""``gangplane serve --stages FILE``: a user stage file steers the simulated lifecycle; a bad one
stops the start naming the field."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import namespace, ok

pytestmark = pytest.mark.e2e

STAGES = """\
stages:
- name: batch-fails
  resourceRef: {kind: Pod}
  selector: {matchLabels: {app: batch}}
  delay: 10s
  next: {phase: Failed}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: b, labels: {app: batch}}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
"""


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("stages")
    (tmp / "stages.yaml").write_text(STAGES)
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--stages", str(tmp / "stages.yaml")])
    yield s
    _stop(s)


def test_a_stage_file_fails_matching_pods(staged: Server, kubectl137: Any) -> None:
    kc = Kubectl(kubectl137, staged, "1.37")
    ns = namespace(staged, "stg")
    ok(kc, "-n", ns, "apply", "-f", "-", input=POD)
    ok(kc, "-n", ns, "wait", "--for=jsonpath={.status.phase}=Failed", "pod/b", "--timeout=30s", timeout=40)
    code = ok(
        kc,
        "-n",
        ns,
        "get",
        "pod",
        "b",
        "-o",
        "jsonpath={.status.containerStatuses[0].state.terminated.exitCode}",
    )
    assert code == "1"


def test_a_bad_stage_file_stops_serve(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("stages: [{resourceRef: {kind: Pod}, delay: soon, next: {ready: true}}]\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "serve",
            "--port",
            "0",
            "--no-tls",
            "--stages",
            str(bad),
            "--kubeconfig",
            str(tmp_path / "kc"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert f"gangplane: invalid --stages file {bad}: stages[0].delay:" in proc.stderr
