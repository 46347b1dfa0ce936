"""Real kubectl (1.35 and 1.37) against ``gangplane serve``: pods scheduled onto the simulated fleet.

``gangplane serve`` runs the scheduler and, when this build has it, the node agent that registers
the default fleet and plays kubelet; pods go Pending → bound → Running/Ready as on a real cluster.
"""

from __future__ import annotations

import re

import pytest
import yaml

from controllers.fleet import default_fleet
from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import Background, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("ks")

FLEET = default_fleet().names()
#: type, reason, age (``5s``, or ``3s (x2 over 5s)`` once kube's recorder has counted repeats), from, message
_EVENT_ROW = re.compile(r"^\s*(Normal|Warning)\s+(\S+)\s+\S+(?: \(x\d+ over \S+\))?\s+(\S+)\s+(.*)$")


def _events_section(describe: str) -> list[tuple[str, str, str, str]]:
    """The ``Events:`` table of ``kubectl describe`` as (type, reason, from, message) rows."""
    rows = []
    in_events = False
    for line in describe.splitlines():
        if line.startswith("Events:"):
            in_events = True
            continue
        if in_events:
            m = _EVENT_ROW.match(line)
            if m:
                rows.append((m.group(1), m.group(2), m.group(3), m.group(4).strip()))
    return rows


def _wait_event(kubectl: Kubectl, ns: str, pod: str, reason: str) -> None:
    """Until an Event of ``reason`` about ``pod`` exists (a watch, no polling)."""
    with Background(
        kubectl,
        "-n",
        ns,
        "get",
        "events",
        "-w",
        "--field-selector",
        f"involvedObject.name={pod},reason={reason}",
        "-o",
        "custom-columns=REASON:.reason",
        "--no-headers",
    ) as w:
        w.wait_line(lambda line: line.strip() == reason)


def test_get_nodes_shows_the_fleet_ready(kubectl: Kubectl) -> None:
    out = ok(kubectl, "wait", "--for=condition=Ready", "node", "--all", "--timeout=60s", timeout=90)
    waited = {line.split()[0] for line in out.splitlines()}
    assert {f"node/{n}" for n in FLEET} <= waited
    out = ok(kubectl, "get", "nodes")
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["NAME", "STATUS"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(FLEET) <= set(rows)
    for name in FLEET:
        assert rows[name][1] == "Ready", rows[name]


def test_run_pod_until_ready(kubectl: Kubectl, ns: str) -> None:
    assert ok(kubectl, "-n", ns, "run", "web", "--image=nginx") == "pod/web created\n"
    out = ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/web", "--timeout=60s", timeout=90)
    assert out == "pod/web condition met\n"
    pod = yaml.safe_load(ok(kubectl, "-n", ns, "get", "pod", "web", "-o", "yaml"))
    assert pod["spec"]["nodeName"] in FLEET
    assert pod["status"]["phase"] == "Running"
    wide = ok(kubectl, "-n", ns, "get", "pod", "web", "-o", "wide").splitlines()
    header = wide[0].split()
    row = wide[1].split()
    assert row[header.index("STATUS")] == "Running"
    assert row[header.index("NODE")] == pod["spec"]["nodeName"]

    _wait_event(kubectl, ns, "web", "Scheduled")
    rows = _events_section(ok(kubectl, "-n", ns, "describe", "pod", "web"))
    scheduled = [r for r in rows if r[1] == "Scheduled"]
    assert scheduled == [
        (
            "Normal",
            "Scheduled",
            "default-scheduler",
            f"Successfully assigned {ns}/web to {pod['spec']['nodeName']}",
        )
    ]


def test_apply_pod_until_ready(kubectl: Kubectl, ns: str) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "applied", "labels": {"app": "applied"}},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
                }
            ]
        },
    }
    assert (
        ok(kubectl, "-n", ns, "apply", "-f", "-", input=yaml.safe_dump(manifest)) == "pod/applied created\n"
    )
    out = ok(kubectl, "-n", ns, "wait", "--for=condition=Ready", "pod/applied", "--timeout=60s", timeout=90)
    assert out == "pod/applied condition met\n"
    node = ok(kubectl, "-n", ns, "get", "pod", "applied", "-o", "jsonpath={.spec.nodeName}")
    assert node in FLEET


def test_describe_unschedulable_pod_shows_failed_scheduling(kubectl: Kubectl, ns: str) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "huge"},
        "spec": {
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "5000"}}}]
        },
    }
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=yaml.safe_dump(manifest))
    out = ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=condition=PodScheduled=false",
        "pod/huge",
        "--timeout=60s",
        timeout=90,
    )
    assert out == "pod/huge condition met\n"
    _wait_event(kubectl, ns, "huge", "FailedScheduling")
    describe = ok(kubectl, "-n", ns, "describe", "pod", "huge")
    assert re.search(r"^Status:\s+Pending$", describe, re.M)
    assert re.search(r"^Node:\s+<none>$", describe, re.M)
    assert re.search(r"^\s+PodScheduled\s+False\s*$", describe, re.M)
    failed = [r for r in _events_section(describe) if r[1] == "FailedScheduling"]
    assert failed, describe
    kind, _, source, message = failed[0]
    assert (kind, source) == ("Warning", "default-scheduler")
    if FLEET:
        n = r"\d+"
        assert re.fullmatch(
            rf"0/{n} nodes are available: {n} Insufficient cpu\. "
            rf"preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling\.",
            message,
        ), message
    else:
        assert message == "no nodes available to schedule pods"
    reason = ok(
        kubectl,
        "-n",
        ns,
        "get",
        "pod",
        "huge",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}',
    )
    assert reason == "Unschedulable"
