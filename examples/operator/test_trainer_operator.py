"""Tests of the example operator, written as its author would, with gangplane's pytest fixtures."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import trainer_operator

HERE = Path(__file__).parent

RUN = """
apiVersion: training.example.com/v1
kind: TrainingRun
metadata: {name: llama}
spec: {workers: 4}
"""


def test_desired_statefulset_is_a_rack_local_gang() -> None:
    run = {
        "metadata": {"name": "r", "namespace": "ns", "uid": "u-1"},
        "spec": {"workers": 3, "gpusPerWorker": 2},
    }
    sts = trainer_operator.desired_statefulset(run)
    assert sts["spec"]["replicas"] == 3
    assert sts["spec"]["scheduling"]["schedulingPolicy"] == {"gang": {}}
    assert sts["spec"]["scheduling"]["schedulingConstraints"]["topology"] == [{"key": trainer_operator.RACK}]
    assert sts["metadata"]["ownerReferences"][0]["uid"] == "u-1"


@pytest.mark.gangplane(crds=[HERE / "crd.yaml"])
def test_trainingrun_becomes_a_running_gang_in_one_rack_and_deletes_with_its_run(gangplane_server) -> None:
    stop = threading.Event()
    worker = threading.Thread(
        target=trainer_operator.run, args=(gangplane_server.api_client, "default", stop), daemon=True
    )
    worker.start()
    try:
        gangplane_server.kubectl("apply", "-f", "-", input=RUN)
        pods = gangplane_server.wait_pods_running(
            "training.example.com/run=llama", 4, namespace="default", timeout=30
        )
        racks = {
            gangplane_server.kubectl(
                "get",
                "node",
                p["spec"]["nodeName"],
                "-o",
                "jsonpath={.metadata.labels.topology\\.kubernetes\\.io/rack}",
            ).stdout
            for p in pods
        }
        assert len(racks) == 1, racks
        gangplane_server.wait_for(
            {
                "apiVersion": "training.example.com/v1",
                "kind": "TrainingRun",
                "metadata": {"name": "llama", "namespace": "default"},
            },
            lambda r: bool(r and (r.get("status") or {}).get("phase") == "Running"),
            timeout=30,
        )
        table = gangplane_server.kubectl("get", "trainingruns").stdout
        assert "llama" in table and "Running" in table
        gangplane_server.kubectl("delete", "trainingrun", "llama", "--wait=true")
        gangplane_server.wait_deleted(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "llama", "namespace": "default"},
            },
            timeout=30,
        )
    finally:
        stop.set()
        worker.join(5)
