"""Jobs and CronJobs with real kubectl (1.35 and 1.37) against ``gangplane serve``.

The server runs the Job controller, the scheduler and the simulated nodes: ``kubectl create job``
gets a pod that is scheduled, runs and exits 0 (the node agent's run-to-completion default), and
``kubectl wait --for=condition=Complete`` returns. ``kubectl get`` prints kube's columns.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("job")


def test_create_job_then_wait_for_complete(kubectl: Kubectl, ns: str) -> None:
    assert ok(kubectl, "-n", ns, "create", "job", "pi", "--image=busybox") == "job.batch/pi created\n"
    out = ok(kubectl, "-n", ns, "wait", "--for=condition=Complete", "job/pi", "--timeout=60s", timeout=90)
    assert out == "job.batch/pi condition met\n"
    job = json.loads(ok(kubectl, "-n", ns, "get", "job", "pi", "-o", "json"))
    assert job["status"]["succeeded"] == 1
    assert (
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]
    )
    table = ok(kubectl, "-n", ns, "get", "jobs")
    header, row = table.splitlines()[:2]
    assert header.split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row.split()[:3] == ["pi", "Complete", "1/1"]
    pods = json.loads(ok(kubectl, "-n", ns, "get", "pods", "-l", "job-name=pi", "-o", "json"))["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"]
    describe = ok(kubectl, "-n", ns, "describe", "job", "pi")
    assert "Created pod: pi-" in describe and "Job completed" in describe


def test_invalid_job_is_rejected_with_kubes_message(kubectl: Kubectl, ns: str) -> None:
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "bad"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox"}]}
            }
        },
    }
    proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=json.dumps(body))
    assert (
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"' in proc.stderr
    )


def test_create_cronjob_and_job_from_it(kubectl: Kubectl, ns: str) -> None:
    out = ok(kubectl, "-n", ns, "create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *")
    assert out == "cronjob.batch/tick created\n"
    header, row = ok(kubectl, "-n", ns, "get", "cronjobs").splitlines()[:2]
    assert header.split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert row.split()[:7] == ["tick", "*/5", "*", "*", "*", "*", "<none>"]
    assert (
        ok(kubectl, "-n", ns, "create", "job", "manual", "--from=cronjob/tick")
        == "job.batch/manual created\n"
    )
    ok(kubectl, "-n", ns, "wait", "--for=condition=Complete", "job/manual", "--timeout=60s", timeout=90)
    bad = fails(kubectl, "-n", ns, "create", "cronjob", "oops", "--image=busybox", "--schedule=61 * * * *")
    assert (
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' in bad.stderr
    )
