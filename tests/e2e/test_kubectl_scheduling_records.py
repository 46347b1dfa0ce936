"""Scheduling records from the outside: ``kubectl get schedulingrecords`` and ``gangplane explain``.

After a gang StatefulSet waits, ``gangplane explain podgroup/NAME`` shows each placement the
search considered, why it was dropped, and which plugin rejected which nodes; after a preemption,
``gangplane explain pod/NAME`` shows the candidates, the victims and why; the garbage collector
removes a record with its pod.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e
RACK = "topology.kubernetes.io/rack"
FLEET = {
    "nodes": [
        {
            "name": "{rack}-n{index}",
            "count": 2,
            "zones": ["zone-a"],
            "racksPerZone": 2,
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
        }
    ]
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("records")
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(FLEET))
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")])
    yield s
    _stop(s)


@pytest.fixture
def k(server: Server, kubectl137: Path) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


def explain(server: Server, target: str, *args: str) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "explain",
            target,
            "--kubeconfig",
            str(server.kubeconfig),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def record(k: Kubectl, name: str) -> dict:
    return json.loads(k.run("get", "schedulingrecord", name, "-o", "json").stdout)


def gang_sts(name: str, replicas: int, cpu: str) -> str:
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "serviceName": name,
                "replicas": replicas,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "scheduling": {
                    "schedulingPolicy": {"gang": {}},
                    "schedulingConstraints": {"topology": [{"key": RACK}]},
                },
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
                        ]
                    },
                },
            },
        }
    )


def test_a_waiting_gang_explains_every_placement(server: Server, k: Kubectl) -> None:
    k.run("apply", "-f", "-", input=gang_sts("train", 3, "3"))
    k.run(
        "wait",
        "--for=jsonpath={.status.conditions[?(@.type=='PodGroupInitiallyScheduled')].reason}=Unschedulable",
        "podgroups",
        "--all",
        "--timeout=60s",
    )
    pg = k.run("get", "podgroups", "-o", "jsonpath={.items[0].metadata.name}").stdout.strip()
    k.run(
        "wait",
        "--for=jsonpath={.attempts[0].result}=Unschedulable",
        f"schedulingrecord/podgroup.{pg}",
        "--timeout=60s",
    )
    out = explain(server, f"podgroup/{pg}")
    assert f"PodGroup default/{pg}:" in out
    assert "PLACEMENT" in out and "OUTCOME" in out
    # the first rack was searched pod by pod: dropped, with the plugin that rejected its nodes
    assert "zone-a-rack-0" in out and "Dropped" in out
    assert "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" in out
    assert "NodeResourcesFit" in out and "Insufficient cpu" in out
    assert "zone-a-rack-0-n0" in out and "zone-a-rack-0-n1" in out
    # the other rack cannot hold the gang by capacity: passed over, and the table says so
    assert "zone-a-rack-1" in out and "Skipped" in out
    rec = record(k, f"podgroup.{pg}")
    assert rec["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    k.run("delete", "statefulset", "train", "--wait=false")


def test_a_preemption_explains_its_victims(server: Server, k: Kubectl) -> None:
    for name, value in (("low", 10), ("high", 1000)):
        k.run(
            "apply",
            "-f",
            "-",
            input=json.dumps(
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                }
            ),
        )

    def pod(name: str, pc: str) -> str:
        spec = {
            "priorityClassName": pc,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "3"}}}],
        }
        return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})

    lows = [f"low-{i}" for i in range(4)]
    k.run("apply", "-f", "-", input="\n---\n".join(pod(n, "low") for n in lows))
    k.run("wait", "--for=condition=PodScheduled", "--timeout=60s", *[f"pod/{n}" for n in lows])
    k.run("apply", "-f", "-", input=pod("vip", "high"))
    k.run("wait", "--for=condition=PodScheduled", "--timeout=60s", "pod/vip")
    out = explain(server, "pod/vip")
    assert "Pod default/vip:" in out
    assert "Preemption: 4 candidate node(s) found" in out
    assert "VICTIM" in out and "priority 10 < preemptor's 1000; the pod does not fit with it" in out
    assert "nominated node:" in out
    assert "Result: Scheduled" in out  # the attempt after the victim was gone
    table = k.run("get", "schedulingrecords", "pod.vip").stdout.splitlines()
    assert table[0].split() == ["NAME", "SUBJECT", "ATTEMPTS", "RESULT", "NODE", "AGE"]
    assert table[1].split()[:4] == ["pod.vip", "Pod/vip", table[1].split()[2], "Scheduled"]
    rec = record(k, "pod.vip")
    (victim,) = next(a for a in rec["attempts"] if "preemption" in a)["preemption"]["victims"]
    assert victim["pod"] in {f"default/{n}" for n in lows}
    # the record goes with its pod (garbage collector, ownerReference)
    k.run("delete", "pod", "vip")
    k.run("wait", "--for=delete", "schedulingrecord/pod.vip", "--timeout=60s")


def test_explain_without_a_record(server: Server) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "explain",
            "pod/nobody",
            "--kubeconfig",
            str(server.kubeconfig),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "no scheduling record for pod/nobody in namespace default" in proc.stderr
