"""KEP-6277 "Composition by Higher-Level Controllers", end to end against ``gangplane serve``: a
LeaderWorkerSet-like parent controller on a CRD kind (tests/e2e/lws_controller.py) owns a Workload
with a CompositePodGroupTemplate and one CompositePodGroup per group, and creates StatefulSets with
the KEP-6089 annotations and a parent ownerReference. The StatefulSet controller then creates no
Workload of its own and attaches each StatefulSet's PodGroup to its group's CompositePodGroup; the
pods are scheduled and become Ready; ``kubectl delete`` of the parent cascades to everything."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from apiserver.api.types import Obj
from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import ns_fixture, ok
from tests.e2e.lws_controller import ParentController, crd

pytestmark = pytest.mark.e2e

ns = ns_fixture("lws")
WAIT = "60s"


@pytest.fixture
def kubectl(kubectl137: Path, server: Server) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


@pytest.fixture
def group(kubectl: Kubectl) -> Iterator[str]:
    g = f"lws{uuid.uuid4().hex[:8]}.x-k8s.io"
    ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump(crd(g)))
    ok(kubectl, "wait", "--for=condition=Established", f"crd/leaderworkersets.{g}", "--timeout=10s")
    yield g
    kubectl.run("delete", "crd", f"leaderworkersets.{g}", "--wait=false", check=False)


@pytest.fixture
def controller(server: Server, ns: str, group: str) -> Iterator[ParentController]:
    c = ParentController(str(server.kubeconfig), ns, group)
    c.start()
    yield c
    c.stop()
    assert c.errors == []


def get_json(kubectl: Kubectl, ns: str, what: str) -> Obj:
    return json.loads(ok(kubectl, "-n", ns, "get", what, "-o", "json"))


def test_parent_controller_composes_statefulsets_and_delete_cascades(
    kubectl: Kubectl, ns: str, group: str, controller: ParentController
) -> None:
    lws = {
        "apiVersion": f"{group}/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "infer"},
        "spec": {"replicas": 2, "size": 2},
    }
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=yaml.safe_dump(lws))
        == f"leaderworkerset.{group}/infer created\n"
    )
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.readyGroups}=2",
        f"leaderworkersets.{group}/infer",
        f"--timeout={WAIT}",
        timeout=90,
    )
    table = ok(kubectl, "-n", ns, "get", "lws").splitlines()
    assert table[0].split() == ["NAME", "GROUPS", "SIZE", "READY"] and table[1].split() == [
        "infer",
        "2",
        "2",
        "2",
    ]
    parent = get_json(kubectl, ns, f"leaderworkersets.{group}/infer")
    parent_uid = parent["metadata"]["uid"]

    # the only Workload is the parent's: the StatefulSet controller created none
    (wl,) = get_json(kubectl, ns, "workloads")["items"]
    assert wl["metadata"]["name"] == "infer"
    assert [r["uid"] for r in wl["metadata"]["ownerReferences"]] == [parent_uid]
    composites = {c["metadata"]["name"] for c in get_json(kubectl, ns, "compositepodgroups")["items"]}
    assert composites == {"infer-0", "infer-1"}

    # each StatefulSet's PodGroup instantiates the parent's template and hangs below its group
    sets = {s["metadata"]["name"]: s for s in get_json(kubectl, ns, "statefulsets")["items"]}
    assert set(sets) == {"infer-0", "infer-1"}
    groups = get_json(kubectl, ns, "podgroups")["items"]
    assert len(groups) == 2
    by_parent = {g["spec"]["parentCompositePodGroupName"]: g for g in groups}
    assert set(by_parent) == {"infer-0", "infer-1"}
    for name, sts in sets.items():
        pg = by_parent[name]
        assert pg["spec"]["workloadRef"] == {"workloadName": "infer", "templateName": "workers"}
        assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
        assert [(r["kind"], r["uid"]) for r in pg["metadata"]["ownerReferences"]] == [
            ("StatefulSet", sts["metadata"]["uid"])
        ]
        assert sts["metadata"]["ownerReferences"][0]["uid"] == parent_uid

    pods = get_json(kubectl, ns, "pods")["items"]
    assert len(pods) == 4
    for pod in pods:
        owner_set = pod["metadata"]["labels"]["app"]
        assert pod["spec"]["schedulingGroup"]["podGroupName"] == by_parent[owner_set]["metadata"]["name"]
        assert pod["spec"]["nodeName"] and pod["status"]["phase"] == "Running"

    # kubectl delete of the parent cascades through the garbage collector
    out = ok(kubectl, "-n", ns, "delete", f"leaderworkersets.{group}", "infer", timeout=60)
    assert out.startswith(f'leaderworkerset.{group} "infer" deleted')
    for kind in ("statefulsets", "pods", "podgroups", "compositepodgroups", "workloads"):
        if get_json(kubectl, ns, kind)["items"]:
            ok(kubectl, "-n", ns, "wait", kind, "--all", "--for=delete", f"--timeout={WAIT}", timeout=90)
    assert get_json(kubectl, ns, "statefulsets,pods,podgroups,compositepodgroups,workloads")["items"] == []
