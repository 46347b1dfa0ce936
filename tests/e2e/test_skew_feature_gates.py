"""KEP-6277 "Version Skew Strategy" and "Feature Enablement and Rollback", run from outside with the
per-component flags of ``gangplane serve`` and real kubectl 1.37.

* ``--controller-manager-feature-gates WorkloadWithStatefulSet=false`` (kube-controller-manager
  without the gate, API server with it): ``spec.scheduling`` is stored, but the StatefulSet
  controller compiles no Workload or PodGroup and its pods carry no ``schedulingGroup``.
* ``--scheduler-feature-gates GenericWorkload=false`` (kube-scheduler without GenericWorkload): the
  controller creates the Workload and PodGroup, pods reference the group, and the scheduler places
  a gang's pods one by one — "degraded-but-safe": on room for 4 of 5, 4 are bound and the group is
  never written to. The same manifest against a scheduler with the gate (the control) binds none
  and the PodGroup reads ``False/Unschedulable``.

Each case gets its own server (the flags are start-up options); namespaces are per test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import delete_namespace, namespace, ok

pytestmark = pytest.mark.e2e

WAIT = "60s"
#: two nodes with room for two 1-cpu pods each: 4 pods fit, a gang of 5 does not
SMALL_FLEET = """\
nodes:
- name: "small-{index}"
  count: 2
  zones: [zone-a]
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
"""


def gang_sts(name: str, replicas: int) -> str:
    return f"""\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
spec:
  serviceName: {name}
  replicas: {replicas}
  podManagementPolicy: Parallel
  selector:
    matchLabels: {{app: {name}}}
  scheduling:
    schedulingPolicy:
      gang: {{}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {{cpu: "1", memory: 1Gi}}
"""


def _server(tmp_path_factory: pytest.TempPathFactory, *extra: str) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("skew")
    fleet = tmp / "fleet.yaml"
    fleet.write_text(SMALL_FLEET)
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(fleet), *extra])
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def kcm_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _server(
        tmp_path_factory, "--controller-manager-feature-gates", "WorkloadWithStatefulSet=false"
    )


@pytest.fixture(scope="module")
def defaults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _server(tmp_path_factory)


@pytest.fixture(scope="module")
def scheduler_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _server(tmp_path_factory, "--scheduler-feature-gates", "GenericWorkload=false")


def _kubectl(kubectl137: Path, server: Server) -> Iterator[tuple[Kubectl, str]]:
    ns = namespace(server, "skew")
    yield Kubectl(kubectl137, server, "1.37"), ns
    delete_namespace(server, ns)


def _json(k: Kubectl, *args: str) -> Any:
    return json.loads(ok(k, *args, "-o", "json"))


def test_controller_manager_without_workload_with_statefulset_compiles_nothing(
    kubectl137: Path, kcm_off: Server
) -> None:
    for k, ns in _kubectl(kubectl137, kcm_off):
        ok(k, "apply", "-n", ns, "-f", "-", input=gang_sts("db", 3))
        ok(k, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=3", "sts/db", f"--timeout={WAIT}")
        # the API server has the gate: the field is stored as written
        assert json.loads(ok(k, "get", "-n", ns, "sts/db", "-o", "jsonpath={.spec.scheduling}")) == {
            "schedulingPolicy": {"gang": {}}
        }
        out = k.run("get", "-n", ns, "workloads,podgroups")
        assert out.returncode == 0 and out.stdout == ""
        assert f"No resources found in {ns} namespace." in out.stderr
        pods = _json(k, "get", "-n", ns, "pods", "-l", "app=db")["items"]
        assert len(pods) == 3
        assert all("schedulingGroup" not in p["spec"] for p in pods)
        assert all(len(p["metadata"]["ownerReferences"]) == 1 for p in pods)


def test_scheduler_without_generic_workload_places_a_gang_pod_by_pod(
    kubectl137: Path, scheduler_off: Server
) -> None:
    for k, ns in _kubectl(kubectl137, scheduler_off):
        ok(k, "apply", "-n", ns, "-f", "-", input=gang_sts("shards", 5))
        # room for 4 of the 5: the gang is not enforced, so 4 pods run and one waits alone
        ok(k, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=4", "sts/shards", f"--timeout={WAIT}")
        pods = _json(k, "get", "-n", ns, "pods", "-l", "app=shards")["items"]
        pg = _json(k, "get", "-n", ns, "podgroups")["items"]
        assert len(pg) == 1 and pg[0]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 5}}
        group = pg[0]["metadata"]["name"]
        assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {group}
        bound = [p for p in pods if p["spec"].get("nodeName")]
        assert len(bound) == 4
        (pending,) = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
        ok(k, "wait", "-n", ns, "--for=condition=PodScheduled=false", f"pod/{pending}", f"--timeout={WAIT}")
        cond = next(
            c
            for c in _json(k, "get", "-n", ns, f"pod/{pending}")["status"]["conditions"]
            if c["type"] == "PodScheduled"
        )
        assert cond["reason"] == "Unschedulable"
        assert cond["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
        # a scheduler without GenericWorkload never writes the PodGroup's status
        assert not (_json(k, "get", "-n", ns, f"podgroup/{group}").get("status") or {}).get("conditions")


def test_control_a_scheduler_with_generic_workload_binds_none_of_the_gang(
    kubectl137: Path, defaults: Server
) -> None:
    for k, ns in _kubectl(kubectl137, defaults):
        ok(k, "apply", "-n", ns, "-f", "-", input=gang_sts("shards", 5))
        # the controller creates the PodGroup before any pod
        ok(k, "wait", "-n", ns, "--for=jsonpath={.status.replicas}=5", "sts/shards", f"--timeout={WAIT}")
        (group,) = [p["metadata"]["name"] for p in _json(k, "get", "-n", ns, "podgroups")["items"]]
        ok(
            k,
            "wait",
            "-n",
            ns,
            "--for=condition=PodGroupInitiallyScheduled=false",
            f"podgroup/{group}",
            f"--timeout={WAIT}",
        )
        pods = _json(k, "get", "-n", ns, "pods", "-l", "app=shards")["items"]
        assert len(pods) == 5 and not [p for p in pods if p["spec"].get("nodeName")]
        cond = next(
            c
            for c in _json(k, "get", "-n", ns, f"podgroup/{group}")["status"]["conditions"]
            if c["type"] == "PodGroupInitiallyScheduled"
        )
        assert cond["reason"] == "Unschedulable"
        assert cond["message"].startswith("minCount (5) cannot be satisfied: 4 scheduled, 0 remaining")
