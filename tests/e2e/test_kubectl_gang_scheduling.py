"""Workload-aware scheduling end to end with real kubectl (1.35 and 1.37) against ``gangplane serve``.

* The KEP's user stories and its opt-in example, applied with ``kubectl apply -f`` to the default
  fleet: every pod Running, the PodGroup's ``PodGroupInitiallyScheduled`` True (the ``SCHEDULED``
  column of ``kubectl get podgroups``), Story 3 inside one rack, the opt-in example inside one zone.
* KEP-6277 e2e "End-to-end all-or-nothing scheduling of a Parallel StatefulSet" and "Failure
  scenario: insufficient resources prevent gang formation; no pod of the group is bound": a gang
  pinned to a private node pool binds nothing while the pool is too small, the PodGroup reads
  ``False/Unschedulable`` with upstream's message and ``kubectl describe podgroup`` shows the
  ``GangUnschedulable`` event; once a node joins the pool every pod binds.
"""

from __future__ import annotations

import json

import pytest
import yaml

from apiserver.api.types import Obj
from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import ns_fixture, ok
from tests.e2e.test_kubectl_kep6277 import STORIES, dump, get_json, manifest, scale_down_and_delete

pytestmark = pytest.mark.e2e

ns = ns_fixture("gang")
WAIT = "90s"
RACK = "topology.kubernetes.io/rack"
ZONE = "topology.kubernetes.io/zone"


#: story -> the node label every pod must share (None: no co-location asked)
CO_LOCATED = {
    "story1-quorum-database": None,
    "story2-disruption-all": None,
    "story3-rack-topology": RACK,
    "story4-shared-claim": None,
    "opting-in-example": ZONE,
}


def node_labels(kubectl: Kubectl) -> dict[str, dict[str, str]]:
    nodes = json.loads(ok(kubectl, "get", "nodes", "-o", "json"))["items"]
    return {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}


@pytest.mark.parametrize("story", list(STORIES))
def test_kep_story_runs_on_the_default_fleet(kubectl: Kubectl, ns: str, story: str) -> None:
    claim_template, text, _ = STORIES[story]
    if claim_template is not None:
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=claim_template)
    sts = manifest(text)
    name, replicas = sts["metadata"]["name"], sts["spec"]["replicas"]
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=dump(sts))
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        f"statefulset/{name}",
        f"--for=jsonpath={{.status.readyReplicas}}={replicas}",
        f"--timeout={WAIT}",
        timeout=120,
    )
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    pg_name = pg["metadata"]["name"]
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        f"podgroup/{pg_name}",
        "--for=condition=PodGroupInitiallyScheduled",
        f"--timeout={WAIT}",
        timeout=120,
    )
    row = next(
        line for line in ok(kubectl, "-n", ns, "get", "podgroups").splitlines() if line.startswith(pg_name)
    )
    assert row.split()[3] == "True"
    pods = get_json(kubectl, ns, "pods", "-l", f"app={name}")["items"]
    assert len(pods) == replicas
    assert all(p["status"]["phase"] == "Running" for p in pods)
    label = CO_LOCATED[story]
    if label is not None:
        labels = node_labels(kubectl)
        assert len({labels[p["spec"]["nodeName"]][label] for p in pods}) == 1
    scale_down_and_delete(kubectl, ns, name)


def pool_node(name: str, pool: str, cpu: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "gangplane.test/pool": pool},
            },
            "status": {
                "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            },
        }
    )


def gang_sts(name: str, pool: str, replicas: int, cpu: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "serviceName": name,
                "replicas": replicas,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "scheduling": {"schedulingPolicy": {"gang": {}}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "nodeSelector": {"gangplane.test/pool": pool},
                        "terminationGracePeriodSeconds": 0,
                        "containers": [
                            {"name": "db", "image": "db:1", "resources": {"requests": {"cpu": cpu}}}
                        ],
                    },
                },
            },
        }
    )


def test_gang_binds_nothing_until_the_whole_group_fits(kubectl: Kubectl, ns: str) -> None:
    nodes = [f"{ns}-a", f"{ns}-b"]
    ok(kubectl, "apply", "-f", "-", input=pool_node(nodes[0], ns, "3"))
    try:
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=gang_sts("db", ns, 3, "1500m"))
        ok(
            kubectl,
            "-n",
            ns,
            "wait",
            "statefulset/db",
            "--for=jsonpath={.status.replicas}=3",
            f"--timeout={WAIT}",
            timeout=120,
        )
        (pg,) = get_json(kubectl, ns, "podgroups")["items"]
        pg_name = pg["metadata"]["name"]
        ok(
            kubectl,
            "-n",
            ns,
            "wait",
            f"podgroup/{pg_name}",
            "--for=condition=PodGroupInitiallyScheduled=False",
            f"--timeout={WAIT}",
            timeout=120,
        )
        pg = get_json(kubectl, ns, "podgroup", pg_name)
        cond = next(c for c in pg["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")
        assert cond["reason"] == "Unschedulable"
        assert cond["message"] == (
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
            ", pod group preemption: No preemption victims found for incoming preemptor"
        )
        pods = get_json(kubectl, ns, "pods", "-l", "app=db")["items"]
        assert [p["spec"].get("nodeName") for p in pods] == [None, None, None]
        row = next(
            line
            for line in ok(kubectl, "-n", ns, "get", "podgroups").splitlines()
            if line.startswith(pg_name)
        )
        assert row.split()[3] == "False"
        described = ok(kubectl, "-n", ns, "describe", "podgroup", pg_name)
        assert "GangUnschedulable" in described
        assert "the cluster fits 2 of 3; the other 1:" in described
        ok(kubectl, "apply", "-f", "-", input=pool_node(nodes[1], ns, "3"))
        ok(
            kubectl,
            "-n",
            ns,
            "wait",
            "statefulset/db",
            "--for=jsonpath={.status.readyReplicas}=3",
            f"--timeout={WAIT}",
            timeout=120,
        )
        ok(
            kubectl,
            "-n",
            ns,
            "wait",
            f"podgroup/{pg_name}",
            "--for=condition=PodGroupInitiallyScheduled",
            f"--timeout={WAIT}",
            timeout=120,
        )
        pods = get_json(kubectl, ns, "pods", "-l", "app=db")["items"]
        assert len(pods) == 3 and {p["spec"]["nodeName"] for p in pods} == set(nodes)
        scale_down_and_delete(kubectl, ns, "db")
    finally:
        kubectl.run("delete", "node", *nodes, "--ignore-not-found", check=False)


def sts(
    name: str, replicas: int, scheduling: Obj, *, policy: str = "Parallel", gpu: int = 0, cpu: str = ""
) -> str:
    requests: Obj = {}
    limits: Obj = {}
    if gpu:
        requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpu)
    if cpu:
        requests["cpu"] = cpu
    resources: Obj = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "serviceName": name,
                "replicas": replicas,
                "podManagementPolicy": policy,
                "selector": {"matchLabels": {"app": name}},
                "scheduling": scheduling,
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "c", "image": "app:1", "resources": resources}],
                    },
                },
            },
        }
    )


def only_pod_group(kubectl: Kubectl, ns: str) -> Obj:
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    return pg


def wait_ready(kubectl: Kubectl, ns: str, name: str, n: int) -> None:
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        f"statefulset/{name}",
        f"--for=jsonpath={{.status.readyReplicas}}={n}",
        f"--timeout={WAIT}",
        timeout=120,
    )


def test_scale_up_joins_and_scale_to_zero_and_back_reforms_the_gang(kubectl: Kubectl, ns: str) -> None:
    gang = {"schedulingPolicy": {"gang": {}}}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=sts("db", 3, gang, cpu="1"))
    wait_ready(kubectl, ns, "db", 3)
    pg = only_pod_group(kubectl, ns)
    ok(kubectl, "-n", ns, "scale", "statefulset", "db", "--replicas=5")
    wait_ready(kubectl, ns, "db", 5)
    pods = get_json(kubectl, ns, "pods", "-l", "app=db")["items"]
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}
    ok(kubectl, "-n", ns, "scale", "statefulset", "db", "--replicas=0")
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "statefulset/db",
        "--for=jsonpath={.status.replicas}=0",
        f"--timeout={WAIT}",
        timeout=120,
    )
    ok(kubectl, "-n", ns, "scale", "statefulset", "db", "--replicas=3")
    wait_ready(kubectl, ns, "db", 3)
    again = only_pod_group(kubectl, ns)
    assert again["metadata"]["uid"] == pg["metadata"]["uid"]
    assert again["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3
    cond = next(c for c in again["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")
    assert cond["status"] == "True" and cond["reason"] == "Scheduled"
    scale_down_and_delete(kubectl, ns, "db")


def test_a_gang_bigger_than_any_rack_binds_nothing_and_says_so(kubectl: Kubectl, ns: str) -> None:
    # the default fleet's racks hold 4 hosts of 8 GPUs: 5 pods of 8 GPUs fit no rack (but the fleet)
    rack_gang = {"schedulingPolicy": {"gang": {}}, "schedulingConstraints": {"topology": [{"key": RACK}]}}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=sts("wide", 5, rack_gang, gpu=8))
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "statefulset/wide",
        "--for=jsonpath={.status.replicas}=5",
        f"--timeout={WAIT}",
        timeout=120,
    )
    name = only_pod_group(kubectl, ns)["metadata"]["name"]
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        f"podgroup/{name}",
        "--for=condition=PodGroupInitiallyScheduled=False",
        f"--timeout={WAIT}",
        timeout=120,
    )
    pg = get_json(kubectl, ns, "podgroup", name)
    cond = next(c for c in pg["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled")
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith(
        "0/4 placements are available, first placement status: minCount (5) cannot be satisfied: "
    )
    pods = get_json(kubectl, ns, "pods", "-l", "app=wide")["items"]
    assert [p["spec"].get("nodeName") for p in pods] == [None] * 5
    assert "best placement" in ok(kubectl, "-n", ns, "describe", "podgroup", name)
    scale_down_and_delete(kubectl, ns, "wide")


def test_ordered_ready_basic_topology_is_sequential_and_co_located(kubectl: Kubectl, ns: str) -> None:
    basic_rack = {"schedulingPolicy": {"basic": {}}, "schedulingConstraints": {"topology": [{"key": RACK}]}}
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=sts("seq", 3, basic_rack, policy="OrderedReady", gpu=1))
    ok(kubectl, "-n", ns, "rollout", "status", "statefulset/seq", f"--timeout={WAIT}", timeout=120)
    pods = get_json(kubectl, ns, "pods", "-l", "app=seq")["items"]
    labels = node_labels(kubectl)
    assert len(pods) == 3
    assert len({labels[p["spec"]["nodeName"]][RACK] for p in pods}) == 1
    # OrderedReady: each pod was created after the one before it became Ready
    by_name = {p["metadata"]["name"]: p for p in pods}
    for i in (1, 2):
        ready = next(c for c in by_name[f"seq-{i - 1}"]["status"]["conditions"] if c["type"] == "Ready")
        assert ready["lastTransitionTime"] <= by_name[f"seq-{i}"]["metadata"]["creationTimestamp"]
    scale_down_and_delete(kubectl, ns, "seq")
