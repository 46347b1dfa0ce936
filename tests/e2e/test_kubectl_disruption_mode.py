"""KEP-6277 with real kubectl (1.35 and 1.37) over HTTP: "disruptionMode: all: a higher-priority pod preempts
the whole StatefulSet rather than a subset", ``single`` preempts only as many pods as needed, and
"End-to-end gang preemption with disruptionMode: all" (a higher-priority gang StatefulSet as the
preemptor).

``gangplane serve`` runs on two 2-cpu nodes, filled by a 4-replica low-priority gang StatefulSet
of 1-cpu pods (``terminationGracePeriodSeconds: 0``, so a preempted pod goes at once). Which pods
were preempted is read off their UIDs: the StatefulSet controller recreates a preempted pod under
the same name, Pending, since a higher priority holds its room.
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
FLEET = """\
nodes:
- name: "small-{index}"
  count: 2
  zones: [zone-a]
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
"""
PRIORITY_CLASSES = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: serving-high}
value: 1000
"""


def sts(name: str, replicas: int, mode: str, priority_class: str, cpu: str = "1") -> str:
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
    disruptionMode:
      {mode}: {{}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      priorityClassName: {priority_class}
      terminationGracePeriodSeconds: 0
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {{cpu: "{cpu}"}}
"""


URGENT = """\
apiVersion: v1
kind: Pod
metadata:
  name: urgent
spec:
  priorityClassName: serving-high
  terminationGracePeriodSeconds: 0
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: "1"}
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("preempt")
    (tmp / "fleet.yaml").write_text(FLEET)
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")])
    yield s
    _stop(s)


@pytest.fixture(params=["1.35", "1.37"])
def k(request: pytest.FixtureRequest, small: Server) -> Iterator[tuple[Kubectl, str]]:
    binary: Path = request.getfixturevalue("kubectl135" if request.param == "1.35" else "kubectl137")
    ns = namespace(small, "dm")
    kc = Kubectl(binary, small, request.param)
    # cluster-scoped classes: created once per server (apply is idempotent)
    ok(kc, "apply", "-f", "-", input=PRIORITY_CLASSES)
    yield kc, ns
    ok(kc, "delete", "namespace", ns, "--wait=false")
    delete_namespace(small, ns)


def _json(kc: Kubectl, *args: str) -> Any:
    return json.loads(ok(kc, *args, "-o", "json"))


def _uids(kc: Kubectl, ns: str, app: str) -> dict[str, str]:
    items = _json(kc, "get", "-n", ns, "pods", "-l", f"app={app}")["items"]
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in items}


def _running_low(kc: Kubectl, ns: str, mode: str) -> dict[str, str]:
    ok(kc, "apply", "-n", ns, "-f", "-", input=sts("low", 4, mode, "batch-low"))
    ok(kc, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=4", "sts/low", f"--timeout={WAIT}")
    return _uids(kc, ns, "low")


def _disruption_targets(obj: Any) -> list[Any]:
    return [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "DisruptionTarget"]


def test_disruption_mode_all_a_higher_priority_pod_preempts_the_whole_statefulset_rather_than_a_subset(
    k: tuple[Kubectl, str],
) -> None:
    kc, ns = k
    before = _running_low(kc, ns, "all")
    ok(kc, "apply", "-n", ns, "-f", "-", input=URGENT)
    ok(kc, "wait", "-n", ns, "--for=condition=Ready", "pod/urgent", f"--timeout={WAIT}")
    after = _uids(kc, ns, "low")
    assert set(after) == set(before)
    assert all(after[n] != before[n] for n in before)  # every pod of the set was preempted
    (pg,) = _json(kc, "get", "-n", ns, "podgroups")["items"]
    (dt,) = _disruption_targets(pg)
    assert (dt["status"], dt["reason"]) == ("True", "PreemptionByScheduler")
    assert dt["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
    events = _json(kc, "get", "-n", ns, "events", "--field-selector", "reason=Preempted")["items"]
    assert sorted(e["involvedObject"]["name"] for e in events) == sorted(before)


def test_disruption_mode_single_a_higher_priority_pod_preempts_only_as_many_pods_as_needed(
    k: tuple[Kubectl, str],
) -> None:
    kc, ns = k
    before = _running_low(kc, ns, "single")
    ok(kc, "apply", "-n", ns, "-f", "-", input=URGENT)
    ok(kc, "wait", "-n", ns, "--for=condition=Ready", "pod/urgent", f"--timeout={WAIT}")
    after = _uids(kc, ns, "low")
    assert sum(1 for n in before if after.get(n) != before[n]) == 1
    (pg,) = _json(kc, "get", "-n", ns, "podgroups")["items"]
    assert _disruption_targets(pg) == []


def test_end_to_end_gang_preemption_with_disruption_mode_all(k: tuple[Kubectl, str]) -> None:
    kc, ns = k
    before = _running_low(kc, ns, "all")
    # one 2-cpu pod needs one node's worth; the low set is one unit, so all of it goes
    ok(kc, "apply", "-n", ns, "-f", "-", input=sts("high", 1, "all", "serving-high", cpu="2"))
    ok(kc, "wait", "-n", ns, "--for=jsonpath={.status.readyReplicas}=1", "sts/high", f"--timeout={WAIT}")
    after = _uids(kc, ns, "low")
    assert all(after.get(n) != before[n] for n in before)
    high = _json(kc, "get", "-n", ns, "pod/high-0")
    assert high["status"].get("nominatedNodeName") in (None, high["spec"]["nodeName"])
    pgs = {
        p["spec"]["workloadRef"]["templateName"]: p for p in _json(kc, "get", "-n", ns, "podgroups")["items"]
    }
    (dt,) = _disruption_targets(pgs["low"])
    assert dt["message"] == "default-scheduler: preempting to accommodate a higher priority pod group"
    scheduled = next(
        c for c in pgs["high"]["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled"
    )
    assert (scheduled["status"], scheduled["reason"]) == ("True", "Scheduled")
    uid = pgs["high"]["metadata"]["uid"]
    events = _json(kc, "get", "-n", ns, "events", "--field-selector", "reason=Preempted")["items"]
    assert sorted(e["involvedObject"]["name"] for e in events) == sorted(before)
    assert all(e["message"].startswith(f"Preempted by podgroup {uid} on node small-") for e in events)
    assert {(e.get("related") or {}).get("kind") for e in events} == {"PodGroup"}
    out = ok(kc, "get", "-n", ns, "podgroups")
    assert out.splitlines()[0].split()[:4] == ["NAME", "POLICY", "MIN-COUNT", "SCHEDULED"]
