"""KEP-5547 with real kubectl: a gang Job on ``gangplane serve --feature-gates=WorkloadWithJob=true``.

``kubectl apply`` of a Job with ``spec.scheduling.schedulingPolicy.gang`` (parallelism 4) gives one
Workload and one PodGroup (``kubectl get workloads,podgroups``), the pods name the PodGroup, the Job
completes, and admission rejects what KEP-5547 rejects with its messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import delete_namespace, fails, namespace, ok

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def job_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _start_server(
        tmp_path_factory.mktemp("serve-job"),
        ["--no-tls", "--anonymous", "--feature-gates=WorkloadWithJob=true"],
    )
    yield s
    _stop(s)


@pytest.fixture
def kc(kubectl137: Path, job_server: Server) -> Kubectl:
    return Kubectl(kubectl137, job_server, "1.37")


@pytest.fixture
def ns(job_server: Server) -> Iterator[str]:
    name = namespace(job_server, "jobwl")
    yield name
    delete_namespace(job_server, name)


def gang_job(name: str, parallelism: int, min_count: int | None = None) -> str:
    gang = {} if min_count is None else {"minCount": min_count}
    return json.dumps(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "completionMode": "Indexed",
                "scheduling": {"schedulingPolicy": {"gang": gang}},
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "w", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}
                        ],
                    }
                },
            },
        }
    )


def test_gang_job_gets_a_workload_and_a_pod_group_and_completes(kc: Kubectl, ns: str) -> None:
    assert ok(kc, "-n", ns, "apply", "-f", "-", input=gang_job("train", 4)) == "job.batch/train created\n"
    ok(kc, "-n", ns, "wait", "--for=condition=Complete", "job/train", "--timeout=60s", timeout=90)
    wls = json.loads(ok(kc, "-n", ns, "get", "workloads", "-o", "json"))["items"]
    pgs = json.loads(ok(kc, "-n", ns, "get", "podgroups", "-o", "json"))["items"]
    assert len(wls) == 1 and len(pgs) == 1
    (tpl,) = wls[0]["spec"]["podGroupTemplates"]
    assert tpl["name"] == "train-pgt-0" and tpl["schedulingPolicy"] == {"gang": {"minCount": 4}}
    assert pgs[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 4}}
    pods = json.loads(ok(kc, "-n", ns, "get", "pods", "-l", "job-name=train", "-o", "json"))["items"]
    assert len(pods) == 4
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pgs[0]["metadata"]["name"]}
    table = ok(kc, "-n", ns, "get", "workloads")
    assert "Job/train" in table
    events = ok(kc, "-n", ns, "get", "events", "--field-selector", "involvedObject.name=train")
    assert "WorkloadCreated" in events and "PodGroupCreated" in events


def test_gang_min_count_above_parallelism_is_rejected(kc: Kubectl, ns: str) -> None:
    proc = fails(kc, "-n", ns, "apply", "-f", "-", input=gang_job("big", 2, min_count=3))
    assert (
        "spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must be less than or equal to spec.parallelism (2)"
        in proc.stderr
    )


def test_explain_job_scheduling(kc: Kubectl) -> None:
    out = ok(kc, "explain", "job.spec.scheduling")
    assert "schedulingPolicy" in out and "disruptionMode" in out


def test_example_gang_job_is_accepted(kc: Kubectl, ns: str) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "gang-job.yaml"
    out = ok(kc, "-n", ns, "apply", "--dry-run=server", "-f", str(example))
    assert out == "job.batch/train created (server dry run)\n"
