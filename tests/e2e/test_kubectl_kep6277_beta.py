"""KEP-6277's Beta proposals end to end: ``gangplane serve --feature-gates AllAlpha=true`` (which
turns gangplane's proposal gates on, as kube's AllAlpha does) and real kubectl 1.37.

* "Support user-configurable gang.minCount": replicas 5 / minCount 3 starts with 3 members
  scheduled (the node has room for 3), ``kubectl scale --replicas=7`` keeps minCount 3 on the
  Workload and the PodGroup, and a scale below it is refused with the field's message.
* "decide and implement rollingUpdate.partition support": a partitioned rollout of a gang set
  keeps one PodGroup and its placed pods.
* KEP-6413's ``PodGroupSatisfied``: False when a member is lost (its node cordoned, the pod
  deleted), True once the replacement is placed (node uncordoned).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import Background, fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

FLEET = """\
nodes:
- name: small
  labels: {beta: small}
  capacity: {cpu: "3", memory: 16Gi, pods: "110"}
- name: big
  labels: {beta: big}
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
"""
WAIT = "60s"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("beta")
    fleet = tmp / "fleet.yaml"
    fleet.write_text(FLEET)
    s = _start_server(
        tmp, ["--no-tls", "--anonymous", "--feature-gates", "AllAlpha=true", "--cluster", str(fleet)]
    )
    yield s
    _stop(s)


@pytest.fixture
def kubectl(server: Server, kubectl137: Path) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


ns = ns_fixture("beta")


def gang_set(name: str, replicas: int, node: str, *, min_count: int | None = None, partition: int = 0) -> str:
    gang = f"{{minCount: {min_count}}}" if min_count is not None else "{}"
    return f"""\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
spec:
  serviceName: {name}
  replicas: {replicas}
  podManagementPolicy: Parallel
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {{partition: {partition}}}
  selector: {{matchLabels: {{app: {name}}}}}
  scheduling:
    schedulingPolicy:
      gang: {gang}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      nodeSelector: {{beta: {node}}}
      containers:
      - name: main
        image: registry.k8s.io/nginx-slim:0.8
        resources: {{requests: {{cpu: "1"}}}}
"""


def pods(kubectl: Kubectl, ns: str, app: str) -> list[dict]:
    return json.loads(ok(kubectl, "get", "pods", "-n", ns, "-l", f"app={app}", "-o", "json"))["items"]


def only(kubectl: Kubectl, ns: str, kind: str) -> dict:
    (item,) = json.loads(ok(kubectl, "get", kind, "-n", ns, "-o", "json"))["items"]
    return item


def min_count(obj: dict) -> int:
    holder = obj["spec"]["podGroupTemplates"][0] if obj["kind"] == "Workload" else obj["spec"]
    return holder["schedulingPolicy"]["gang"]["minCount"]


def test_user_min_count_partial_gang_and_scale(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "apply", "-n", ns, "-f", "-", input=gang_set("db", 5, "small", min_count=3))
    ok(kubectl, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=3", "sts/db", f"--timeout={WAIT}")
    items = pods(kubectl, ns, "db")
    waiting = [p["metadata"]["name"] for p in items if not p["spec"].get("nodeName")]
    assert len(items) == 5 and len(waiting) == 2
    ok(
        kubectl,
        "wait",
        "-n",
        ns,
        "--for=condition=PodScheduled=false",
        *[f"pod/{n}" for n in waiting],
        f"--timeout={WAIT}",
    )
    assert min_count(only(kubectl, ns, "workloads")) == 3 and min_count(only(kubectl, ns, "podgroups")) == 3

    ok(kubectl, "scale", "-n", ns, "sts/db", "--replicas=7")
    ok(kubectl, "wait", "-n", ns, "--for=jsonpath={.status.replicas}=7", "sts/db", f"--timeout={WAIT}")
    assert min_count(only(kubectl, ns, "workloads")) == 3 and min_count(only(kubectl, ns, "podgroups")) == 3
    out = ok(
        kubectl, "get", "sts/db", "-n", ns, "-o", "jsonpath={.spec.scheduling.schedulingPolicy.gang.minCount}"
    )
    assert out == "3"

    proc = fails(kubectl, "scale", "-n", ns, "sts/db", "--replicas=2")
    assert (
        'The StatefulSet "db" is invalid: spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: '
        "must be less than or equal to spec.replicas (2)"
    ) in proc.stderr
    ok(kubectl, "delete", "-n", ns, "sts/db", "--wait=false")


def test_partitioned_rollout_keeps_one_pod_group_and_its_placed_pods(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "apply", "-n", ns, "-f", "-", input=gang_set("web", 4, "big", partition=2))
    ok(kubectl, "rollout", "status", "-n", ns, "sts/web", f"--timeout={WAIT}")
    before = {p["metadata"]["name"]: p for p in pods(kubectl, ns, "web")}
    pg = only(kubectl, ns, "podgroups")
    ok(kubectl, "set", "image", "-n", ns, "sts/web", "main=registry.k8s.io/nginx-slim:0.9")
    ok(
        kubectl,
        "wait",
        "-n",
        ns,
        "--for=jsonpath={.status.updatedReplicas}=2",
        "sts/web",
        f"--timeout={WAIT}",
    )
    ok(kubectl, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=4", "sts/web", f"--timeout={WAIT}")
    after = {p["metadata"]["name"]: p for p in pods(kubectl, ns, "web")}
    for n in ("web-0", "web-1"):
        assert after[n]["metadata"]["uid"] == before[n]["metadata"]["uid"]
        assert after[n]["spec"]["nodeName"] == before[n]["spec"]["nodeName"]
    for n in ("web-2", "web-3"):
        assert after[n]["metadata"]["uid"] != before[n]["metadata"]["uid"]
        assert after[n]["spec"]["containers"][0]["image"].endswith(":0.9")
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in after.values()} == {pg["metadata"]["name"]}
    assert only(kubectl, ns, "podgroups")["metadata"]["uid"] == pg["metadata"]["uid"]
    ok(kubectl, "delete", "-n", ns, "sts/web", "--wait=false")


def test_pod_group_satisfied_flips_with_a_lost_and_replaced_member(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "apply", "-n", ns, "-f", "-", input=gang_set("q", 3, "big"))
    ok(kubectl, "rollout", "status", "-n", ns, "sts/q", f"--timeout={WAIT}")
    name = only(kubectl, ns, "podgroups")["metadata"]["name"]
    ok(
        kubectl,
        "wait",
        "-n",
        ns,
        "--for=condition=PodGroupSatisfied",
        f"podgroup/{name}",
        f"--timeout={WAIT}",
    )
    jp = '{.status.conditions[?(@.type=="PodGroupSatisfied")].status}{"\\n"}'
    with Background(
        kubectl, "get", "podgroup", name, "-n", ns, "-w", "-o", f"jsonpath={jp}", "-v=6"
    ) as watch:
        watch.wait_request("watch=true")
        ok(kubectl, "cordon", "big")
        try:
            ok(kubectl, "delete", "pod", "q-1", "-n", ns, "--wait=false")
            watch.wait_line(lambda line: line == "False")
            ok(
                kubectl,
                "wait",
                "-n",
                ns,
                "--for=condition=PodGroupSatisfied=false",
                f"podgroup/{name}",
                "--timeout=5s",
            )
        finally:
            ok(kubectl, "uncordon", "big")
        watch.wait_line(lambda line: line == "True" and "False" in watch.lines)
    ok(
        kubectl,
        "wait",
        "-n",
        ns,
        "--for=condition=PodGroupSatisfied",
        f"podgroup/{name}",
        f"--timeout={WAIT}",
    )
    ok(kubectl, "delete", "-n", ns, "sts/q", "--wait=false")
