"""Bring your own cluster: a kubectl dump of one gangplane server imported into a fresh one.

The source has 50 nodes in 3 zones (two of them tainted) and 100 running pods filling zones a
and b. ``kubectl get namespaces,priorityclasses,nodes,pods,secrets,configmaps -A -o yaml``
dumps it; ``gangplane import`` loads the dump into an empty server: same nodes, labels, taints
and pod placement, secrets and configmaps left out and reported. A gang StatefulSet with a zone
constraint then lands in the zone with room.
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
ZONE = "topology.kubernetes.io/zone"
CAP = {"cpu": "8", "memory": "32Gi", "pods": "110"}
FLEET = {
    "nodes": [
        {"name": "a-{index}", "count": 17, "zones": ["zone-a"], "capacity": CAP},
        {"name": "b-{index}", "count": 17, "zones": ["zone-b"], "capacity": CAP},
        {"name": "c-{index}", "count": 14, "zones": ["zone-c"], "capacity": CAP},
        {
            "name": "c-db-{index}",
            "count": 2,
            "zones": ["zone-c"],
            "capacity": CAP,
            "taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}],
        },
    ]
}
FILLER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "filler"},
    "spec": {
        "replicas": 100,
        "selector": {"matchLabels": {"app": "filler"}},
        "template": {
            "metadata": {"labels": {"app": "filler"}},
            "spec": {
                "priorityClassName": "batch",
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": ZONE, "operator": "In", "values": ["zone-a", "zone-b"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
                "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "2500m"}}}],
            },
        },
    },
}


def serve(tmp: Path, fleet: dict) -> Server:
    (tmp / "fleet.yaml").write_text(yaml.safe_dump(fleet))
    return _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")])


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = serve(tmp_path_factory.mktemp("source"), FLEET)
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def filled(source: Server, kubectl137: Path) -> Server:
    """The source with its PriorityClass, a Secret, a ConfigMap and 100 running pods in zones a and b."""
    src = Kubectl(kubectl137, source, "1.37")
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch"},
        "value": 100,
    }
    src.run("apply", "-f", "-", input=json.dumps(pc))
    src.run("create", "secret", "generic", "db-password", "--from-literal=p=hunter2")
    src.run("create", "configmap", "settings", "--from-literal=k=v")
    src.run("apply", "-f", "-", input=json.dumps(FILLER))
    src.run("rollout", "status", "deployment/filler", "--timeout=120s", timeout=150)
    return source


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = serve(tmp_path_factory.mktemp("target"), {"nodes": []})
    yield s
    _stop(s)


def nodes_of(k: Kubectl) -> dict[str, tuple[dict, list, dict]]:
    items = json.loads(k.run("get", "nodes", "-o", "json").stdout)["items"]
    return {
        n["metadata"]["name"]: (
            n["metadata"]["labels"],
            n["spec"].get("taints") or [],
            n["status"]["allocatable"],
        )
        for n in items
    }


def placement(k: Kubectl) -> dict[str, str]:
    items = json.loads(k.run("get", "pods", "-l", "app=filler", "-o", "json").stdout)["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in items}


def test_a_dumped_cluster_imports_with_the_same_shape_and_a_gang_lands_where_there_is_room(
    filled: Server, target: Server, kubectl137: Path, tmp_path: Path
) -> None:
    source = filled
    src, dst = Kubectl(kubectl137, source, "1.37"), Kubectl(kubectl137, target, "1.37")
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        src.run("get", "namespaces,priorityclasses,nodes,pods,secrets,configmaps", "-A", "-o", "yaml").stdout
    )

    proc = subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "import", str(dump), "--kubeconfig", str(target.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = proc.stdout
    lines = {line.split()[0]: line for line in report.splitlines()[2:] if line.strip()}
    assert lines["Node"].split()[1] == "50", report
    assert lines["Pod"].split()[1] == "100", report
    assert lines["PriorityClass"].split()[1] == "1", report
    assert "secrets are never imported" in lines["Secret"], report
    assert "not needed for scheduling" in lines["ConfigMap"], report

    # the live cluster itself, read-only, gives the same plan
    live = subprocess.run(
        [
            sys.executable,
            "-m",
            "gangplane.cli",
            "import",
            "--from-kubeconfig",
            str(source.kubeconfig),
            "--dry-run",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert live.returncode == 0, live.stderr
    assert "dry run: nothing created" in live.stdout
    live_lines = {line.split()[0]: line for line in live.stdout.splitlines()[2:] if line.strip()}
    assert live_lines["Node"].split()[1] == "50" and live_lines["Pod"].split()[1] == "100", live.stdout

    # same nodes, labels, taints and allocatable; same pod placement
    assert nodes_of(dst) == nodes_of(src)
    before = placement(src)
    assert len(before) == 100
    dst.run("wait", "--for=condition=Ready", "pods", "-l", "app=filler", "--timeout=120s", timeout=150)
    assert placement(dst) == before
    assert json.loads(dst.run("get", "secrets", "-o", "json").stdout)["items"] == []

    # a gang that needs a whole zone's room lands in zone-c, the only zone with it
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "replicas": 4,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "db"}},
            "scheduling": {
                "schedulingPolicy": {"gang": {}},
                "schedulingConstraints": {"topology": [{"key": ZONE}]},
            },
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "6"}}}]
                },
            },
        },
    }
    dst.run("apply", "-f", "-", input=json.dumps(sts))
    dst.run("rollout", "status", "statefulset/db", "--timeout=120s", timeout=150)
    pods = json.loads(dst.run("get", "pods", "-l", "app=db", "-o", "json").stdout)["items"]
    zones = {nodes_of(dst)[p["spec"]["nodeName"]][0][ZONE] for p in pods}
    assert zones == {"zone-c"}
    assert all(not p["spec"]["nodeName"].startswith("c-db-") for p in pods)  # the tainted ones stay free


def test_serve_import_loads_a_dump_at_start(source: Server, kubectl137: Path, tmp_path: Path) -> None:
    src = Kubectl(kubectl137, source, "1.37")
    dump = tmp_path / "nodes.yaml"
    dump.write_text(src.run("get", "nodes", "-o", "yaml").stdout)
    (tmp_path / "empty.yaml").write_text("nodes: []\n")
    s = _start_server(
        tmp_path,
        ["--no-tls", "--anonymous", "--cluster", str(tmp_path / "empty.yaml"), "--import", str(dump)],
    )
    try:
        log = (tmp_path / "serve.log").read_text()
        assert "gangplane import from" in log and "Node" in log
        assert nodes_of(Kubectl(kubectl137, s, "1.37")) == nodes_of(src)
    finally:
        _stop(s)


def test_workloads_import_with_their_owner_references_relinked(
    filled: Server, kubectl137: Path, tmp_path: Path
) -> None:
    src = Kubectl(kubectl137, filled, "1.37")
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        src.run("get", "priorityclasses,nodes,deployments,replicasets,pods", "-A", "-o", "yaml").stdout
    )
    (tmp_path / "empty.yaml").write_text("nodes: []\n")
    s = _start_server(tmp_path, ["--no-tls", "--anonymous", "--cluster", str(tmp_path / "empty.yaml")])
    try:
        dst = Kubectl(kubectl137, s, "1.37")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "gangplane.cli",
                "import",
                str(dump),
                "--workloads",
                "--kubeconfig",
                str(s.kubeconfig),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "owner reference(s) dropped" not in proc.stdout, proc.stdout
        assert "owner references re-linked: " in proc.stdout, proc.stdout
        deploy = json.loads(dst.run("get", "deployment", "filler", "-o", "json").stdout)
        (rs,) = json.loads(dst.run("get", "replicasets", "-l", "app=filler", "-o", "json").stdout)["items"]
        assert rs["metadata"]["ownerReferences"][0]["uid"] == deploy["metadata"]["uid"]
        pods = json.loads(dst.run("get", "pods", "-l", "app=filler", "-o", "json").stdout)["items"]
        assert len(pods) == 100
        assert {p["metadata"]["ownerReferences"][0]["uid"] for p in pods} == {rs["metadata"]["uid"]}
        # the controllers adopt what is there: the rollout is complete and nothing moved
        dst.run("rollout", "status", "deployment/filler", "--timeout=120s", timeout=150)
        assert placement(dst) == placement(src)
        assert len(json.loads(dst.run("get", "replicasets", "-o", "json").stdout)["items"]) == 1
    finally:
        _stop(s)


def test_serve_import_workloads_loads_the_dump_s_workloads_at_start(
    filled: Server, kubectl137: Path, tmp_path: Path
) -> None:
    """``serve --import DUMP --import-workloads`` is ``gangplane import --workloads`` before serving."""
    src = Kubectl(kubectl137, filled, "1.37")
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        src.run("get", "priorityclasses,nodes,deployments,replicasets,pods", "-A", "-o", "yaml").stdout
    )
    (tmp_path / "empty.yaml").write_text("nodes: []\n")
    s = _start_server(
        tmp_path,
        [
            "--no-tls",
            "--anonymous",
            "--cluster",
            str(tmp_path / "empty.yaml"),
            "--import",
            str(dump),
            "--import-workloads",
        ],
    )
    try:
        log = (tmp_path / "serve.log").read_text()
        assert "owner references re-linked: " in log, log
        dst = Kubectl(kubectl137, s, "1.37")
        deploy = json.loads(dst.run("get", "deployment", "filler", "-o", "json").stdout)
        (rs,) = json.loads(dst.run("get", "replicasets", "-l", "app=filler", "-o", "json").stdout)["items"]
        assert rs["metadata"]["ownerReferences"][0]["uid"] == deploy["metadata"]["uid"]
        dst.run("rollout", "status", "deployment/filler", "--timeout=120s", timeout=150)
        assert placement(dst) == placement(src)
    finally:
        _stop(s)
