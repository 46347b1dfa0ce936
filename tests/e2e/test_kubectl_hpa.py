"""An HPA (autoscaling/v2, applied with kubectl 1.35 and 1.37) scaling a gang StatefulSet on simulated
load: the pods use 150 % of their CPU request (``gangplane.dev/usage``), the target is 50 %, so the
controller asks for 3× the pods, capped at ``maxReplicas``; the StatefulSet controller then moves the
PodGroup's gang ``minCount`` with the scale (KEP-6277's scale lifecycle)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("hpa")

STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: busy
spec:
  serviceName: busy
  replicas: 2
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: busy}
  scheduling:
    schedulingPolicy:
      gang: {}
  template:
    metadata:
      labels: {app: busy}
      annotations: {gangplane.dev/usage: "150%"}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: 100m}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: busy
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: busy}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 50}
"""


def test_hpa_scales_a_gang_statefulset_and_min_count_follows(kubectl: Kubectl, ns: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=STS)
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.desiredReplicas}=5",
        "hpa/busy",
        "--timeout=60s",
        timeout=70,
    )
    ok(
        kubectl,
        "-n",
        ns,
        "wait",
        "--for=jsonpath={.status.readyReplicas}=5",
        "sts/busy",
        "--timeout=60s",
        timeout=70,
    )
    (pg,) = json.loads(ok(kubectl, "-n", ns, "get", "podgroups", "-o", "json"))["items"]
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 5
    hpa = json.loads(ok(kubectl, "-n", ns, "get", "hpa", "busy", "-o", "json"))
    conds = {c["type"]: (c["status"], c["reason"]) for c in hpa["status"]["conditions"]}
    assert conds["ScalingActive"] == ("True", "ValidMetricFound")
    assert conds["ScalingLimited"] == ("True", "TooManyReplicas")
    (metric,) = hpa["status"]["currentMetrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["current"]["averageUtilization"] == 150
    events = json.loads(
        ok(kubectl, "-n", ns, "get", "events", "--field-selector", "reason=SuccessfulRescale", "-o", "json")
    )["items"]
    assert (
        events[0]["message"]
        == "New size: 5; reason: cpu resource utilization (percentage of request) above target"
    )
    assert events[0]["source"]["component"] == "horizontal-pod-autoscaler"
    table = ok(kubectl, "-n", ns, "get", "hpa", "busy")
    assert "cpu: 150%/50%" in table
