"""Bring your own cluster, with its Jobs and pending pods: "where would my pending pods go here?"

The source has two 4-CPU nodes. Its Job ``train`` wants three 3-CPU pods at once: two run, one
per node, and the third is pending; a standalone 6-CPU pod ``big`` is pending too; the Job
``done`` has finished. ``kubectl get … -o yaml`` dumps it, and ``gangplane import --workloads``
loads the dump into a server that has one roomy node of its own. There ``train`` takes over its
two running pods (owner references pointing at the new Job's UID, nothing moved), its controller
creates the missing third pod (the pending one is left to it, not duplicated), and both pending
pods are scheduled on the node with room; the finished Job and its pod are left out. The suspended
CronJob ``nightly`` and the Job made from it come along, that Job with a selector generated from
its new UID and owned by the new CronJob.
"""

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


def job(name: str, parallelism: int, cpu: str, annotations: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {
                "metadata": {"annotations": annotations or {}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
                },
            },
        },
    }


NIGHTLY = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "nightly"},
    "spec": {
        "schedule": "0 3 * * *",
        "suspend": True,
        "jobTemplate": {
            "spec": {
                "suspend": True,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}
                },
            }
        },
    },
}
BIG = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "big", "labels": {"app": "big"}},
    "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "6"}}}]},
}


def serve(tmp: Path, fleet: dict) -> Server:
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(fleet))
    return _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")])


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, kubectl137: Path) -> Iterator[Server]:
    s = serve(
        tmp_path_factory.mktemp("source"),
        {"nodes": [{"name": "small-{index}", "count": 2, "capacity": {"cpu": "4", "pods": "110"}}]},
    )
    try:
        k = Kubectl(kubectl137, s, "1.37")
        k.run(
            "apply",
            "-f",
            "-",
            input=json.dumps(job("done", 1, "100m", {"gangplane.dev/complete-after": "0s"})),
        )
        k.run("wait", "--for=condition=Complete", "job/done", "--timeout=60s", timeout=90)
        k.run(
            "apply", "-f", "-", input=json.dumps(job("train", 3, "3", {"gangplane.dev/complete-after": "1h"}))
        )
        k.run("apply", "-f", "-", input=json.dumps(BIG))
        k.run("apply", "-f", "-", input=json.dumps(NIGHTLY))
        k.run("create", "job", "nightly-manual", "--from=cronjob/nightly")
        k.run("wait", "--for=jsonpath={.status.ready}=2", "job/train", "--timeout=60s", timeout=90)
        k.run("wait", "--for=condition=PodScheduled=false", "pod/big", "--timeout=60s", timeout=90)
        yield s
    finally:
        _stop(s)


def pods(k: Kubectl, selector: str) -> list[dict]:
    return json.loads(k.run("get", "pods", "-l", selector, "-o", "json").stdout)["items"]


def import_(dump: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "import", *([str(dump)] if dump.name else []), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def rows(report: str) -> dict[str, str]:
    return {
        line.split()[0]: line for line in report.splitlines()[2:] if line.startswith("  ") and line.split()
    }


def test_jobs_and_pending_pods_import_and_the_pending_ones_land_where_there_is_room(
    source: Server, kubectl137: Path, tmp_path: Path
) -> None:
    src = Kubectl(kubectl137, source, "1.37")
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        src.run("get", "namespaces,priorityclasses,nodes,cronjobs,jobs,pods", "-A", "-o", "yaml").stdout
    )
    src_job = json.loads(src.run("get", "job", "train", "-o", "json").stdout)
    placed_before = {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods(src, "job-name=train")
        if p["spec"].get("nodeName")
    }
    assert len(placed_before) == 2

    (tmp_path / "target").mkdir()
    target = serve(
        tmp_path / "target",
        {"nodes": [{"name": "roomy-{index}", "count": 1, "capacity": {"cpu": "10", "pods": "110"}}]},
    )
    try:
        dst = Kubectl(kubectl137, target, "1.37")
        (roomy,) = [
            n["metadata"]["name"] for n in json.loads(dst.run("get", "nodes", "-o", "json").stdout)["items"]
        ]
        proc = import_(dump, "--workloads", "--kubeconfig", str(target.kubeconfig))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = rows(proc.stdout)
        assert report["Job"].split()[1] == "2", proc.stdout  # train and nightly-manual
        assert report["CronJob"].split()[1] == "1", proc.stdout
        assert "1 finished (created anew, it would run again)" in report["Job"], proc.stdout
        assert report["Pod"].split()[1] == "3", proc.stdout  # train's two running pods and big
        assert "1 finished" in report["Pod"], proc.stdout
        assert "1 pending, left to its imported Job's controller" in report["Pod"], proc.stdout
        assert "1 of the pods are pending: created unbound, for the scheduler to place" in proc.stdout
        assert "owner reference(s) dropped" not in proc.stdout, proc.stdout
        # train's two pods adopted by its controller; nightly-manual linked at once (a CronJob adopts nothing)
        assert "re-linked: 2 adopted by the controllers, 1 written by the importer" in proc.stdout, (
            proc.stdout
        )

        # the Job takes its running pods over: the new UID owns them and they did not move
        new_job = json.loads(dst.run("get", "job", "train", "-o", "json").stdout)
        assert new_job["metadata"]["uid"] != src_job["metadata"]["uid"]
        assert new_job["spec"]["manualSelector"] is True
        assert new_job["spec"]["selector"] == src_job["spec"]["selector"]
        dst.run("wait", "--for=jsonpath={.status.ready}=3", "job/train", "--timeout=60s", timeout=90)
        train = pods(dst, "job-name=train")
        assert len(train) == 3, [p["metadata"]["name"] for p in train]  # one created, none duplicated
        assert {p["metadata"]["ownerReferences"][0]["uid"] for p in train} == {new_job["metadata"]["uid"]}
        placed_after = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in train}
        assert {n: placed_after[n] for n in placed_before} == placed_before
        # and it will count them when they finish: they carry the Job's tracking finalizer again
        assert all("batch.kubernetes.io/job-tracking" in p["metadata"].get("finalizers", []) for p in train)
        (created,) = set(placed_after) - set(placed_before)
        assert placed_after[created] == roomy

        # the pending pod lands on the node with room
        dst.run("wait", "--for=condition=Ready", "pod/big", "--timeout=60s", timeout=90)
        (big,) = pods(dst, "app=big")
        assert big["spec"]["nodeName"] == roomy
        assert dst.run("get", "job", "done", check=False).returncode != 0

        # a Job without pods to take over gets its selector generated anew, from its new UID
        cron = json.loads(dst.run("get", "cronjob", "nightly", "-o", "json").stdout)
        manual = json.loads(dst.run("get", "job", "nightly-manual", "-o", "json").stdout)
        uid = manual["metadata"]["uid"]
        assert manual["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        assert manual["spec"]["template"]["metadata"]["labels"]["controller-uid"] == uid
        assert "manualSelector" not in manual["spec"]
        (owner,) = manual["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("CronJob", cron["metadata"]["uid"])
    finally:
        _stop(target)


def test_a_live_cluster_is_read_with_its_jobs(source: Server, tmp_path: Path) -> None:
    live = import_(Path(""), "--from-kubeconfig", str(source.kubeconfig), "--workloads", "--dry-run")
    assert live.returncode == 0, live.stderr
    report = rows(live.stdout)
    assert report["Job"].split()[1] == "2" and "1 finished" in report["Job"], live.stdout
    assert report["CronJob"].split()[1] == "1", live.stdout
    # the live read asks for unfinished pods only: train's two running ones and big
    assert report["Pod"].split()[1] == "3", live.stdout
    assert "1 pending, left to its imported Job's controller" in report["Pod"], live.stdout
