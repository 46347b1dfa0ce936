"""``gangplane serve --scheduling-records-max-subjects N``: the records of the newest N pods and
PodGroups are kept; ``gangplane explain`` on an older one says so instead of a bare NotFound."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e
FLEET = {
    "nodes": [{"name": "n{index}", "count": 2, "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}]
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("records-window")
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(FLEET))
    s = _start_server(
        tmp,
        [
            "--no-tls",
            "--anonymous",
            "--cluster",
            str(tmp / "fleet.yaml"),
            "--scheduling-records-max-subjects",
            "2",
        ],
    )
    yield s
    _stop(s)


@pytest.fixture
def k(server: Server, kubectl137: Path) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


def _explain(server: Server, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "explain", target, "--kubeconfig", str(server.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_explain_says_an_old_subject_is_no_longer_kept(server: Server, k: Kubectl) -> None:
    for name in ("first", "second", "third"):
        k.run("run", name, "--image=pause", "--restart=Never")
        k.run("wait", "--for=condition=PodScheduled", f"pod/{name}", "--timeout=60s")
        k.run("wait", "--for=create", f"schedulingrecord/pod.{name}", "--timeout=60s")
    # the third pushed the first out of the window of 2: its record was deleted
    k.run("wait", "--for=delete", "schedulingrecord/pod.first", "--timeout=60s")
    names = json.loads(k.run("get", "schedulingrecords", "-o", "json").stdout)["items"]
    assert sorted(o["metadata"]["name"] for o in names) == ["pod.second", "pod.third"]
    proc = _explain(server, "pod/first")
    assert proc.returncode == 1
    assert (
        "gangplane explain: no SchedulingRecord for pod/first in namespace default: the scheduler keeps "
        "the newest 2 subjects (--scheduling-records-max-subjects) and this one is no longer among them"
    ) in proc.stderr
    assert "Result: Scheduled" in _explain(server, "pod/third").stdout
    # a pod that was never attempted keeps the plain message
    never = _explain(server, "pod/nobody")
    assert (
        never.returncode == 1 and "no scheduling record for pod/nobody in namespace default" in never.stderr
    )
    configz = json.loads(k.run("get", "--raw", "/configz").stdout)
    assert configz["gangplane.dev/schedulingRecords"] == {"maxSubjects": 2, "attemptsPerSubject": 5}
