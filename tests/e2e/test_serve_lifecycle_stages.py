"""``gangplane serve --stages FILE`` with stages that drive the agent (beside the shipped
lifecycle.yaml): a user status template sets a custom pod condition and a node condition, seen
through kubectl."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import namespace, ok

pytestmark = pytest.mark.e2e

STAGES = """\
stages:
- name: web-warm
  resourceRef: {kind: Pod}
  selector:
    matchLabels: {app: web}
    matchExpressions:
    - {key: ".status.conditions[type=Ready].status", operator: In, values: ["True"]}
  delay: 1s
  next:
    statusTemplate:
      conditions: [{type: example.com/Warm, status: "True", reason: CacheLoaded}]
    event: {type: Normal, reason: Warmed, message: "cache of $(name) loaded on $(nodeName)"}
- name: gpu-checked
  resourceRef: {kind: Node}
  selector:
    matchExpressions:
    - {key: ".status.conditions[type=Ready].status", operator: In, values: ["True"]}
  next:
    statusTemplate:
      conditions: [{type: example.com/GPUHealthy, status: "True", reason: Probed}]
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: w, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx}]
"""


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("lifecycle-stages")
    (tmp / "stages.yaml").write_text(STAGES)
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--stages", str(tmp / "stages.yaml")])
    yield s
    _stop(s)


def test_a_user_status_template_sets_a_custom_pod_condition(staged: Server, kubectl137: Any) -> None:
    kc = Kubectl(kubectl137, staged, "1.37")
    ns = namespace(staged, "lcs")
    ok(kc, "-n", ns, "apply", "-f", "-", input=POD)
    ok(kc, "-n", ns, "wait", "--for=condition=example.com/Warm", "pod/w", "--timeout=30s", timeout=40)
    phase = ok(
        kc,
        "-n",
        ns,
        "get",
        "pod",
        "w",
        "-o",
        "jsonpath={.status.phase} {.status.conditions[?(@.type=='Ready')].status}",
    )
    assert phase == "Running True"
    events = ok(
        kc,
        "-n",
        ns,
        "get",
        "events",
        "--field-selector",
        "reason=Warmed",
        "-o",
        "jsonpath={.items[*].message}",
    )
    assert events.startswith("cache of w loaded on ")


def test_a_user_status_template_sets_a_node_condition(staged: Server, kubectl137: Any) -> None:
    kc = Kubectl(kubectl137, staged, "1.37")
    out = ok(
        kc, "wait", "--for=condition=example.com/GPUHealthy", "nodes", "--all", "--timeout=30s", timeout=40
    )
    assert "condition met" in out
    ready = ok(kc, "get", "nodes", "-o", "jsonpath={.items[*].status.conditions[?(@.type=='Ready')].status}")
    assert set(ready.split()) == {"True"}
