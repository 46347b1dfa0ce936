"""A rack fails under a gang StatefulSet (``gangplane cluster fail --rack``), with real kubectl 1.37.

``gangplane serve`` runs on 3 racks of 2 two-cpu nodes; a 4-replica gang StatefulSet of 2-cpu
pods fills 4 of them. Upstream 1.37's rule is that losing a node is not preemption: whatever
the ``disruptionMode`` (``single`` or ``all``), only the pods on the failed rack are evicted — by
the taint-eviction controller once their ``tolerationSeconds`` for the ``not-ready`` NoExecute
taint have run out (30 simulated seconds here, 3 s at serve's time scale), with
``DisruptionTarget``/``DeletionByTaintManager`` — and the StatefulSet recreates them on the
healthy racks while the rest of the gang keeps running. Recovering the rack removes the taints.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop
from tests.e2e.kubectl_util import Background, delete_namespace, namespace, ok

pytestmark = pytest.mark.e2e

WAIT = "60s"
FLEET = """\
nodes:
- name: "h-{rack}-{index}"
  count: 2
  zones: [zone-a]
  racksPerZone: 3
  capacity: {cpu: "2", memory: 8Gi, pods: "110"}
"""


def sts(mode: str) -> str:
    return f"""\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: gang
spec:
  serviceName: gang
  replicas: 4
  podManagementPolicy: Parallel
  selector:
    matchLabels: {{app: gang}}
  scheduling:
    schedulingPolicy:
      gang: {{}}
    disruptionMode:
      {mode}: {{}}
  template:
    metadata:
      labels: {{app: gang}}
    spec:
      terminationGracePeriodSeconds: 0
      tolerations:
      - {{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 30}}
      - {{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}}
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {{cpu: "2"}}
"""


@pytest.fixture(scope="module")
def racks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("racks")
    (tmp / "fleet.yaml").write_text(FLEET)
    s = _start_server(tmp, ["--no-tls", "--anonymous", "--cluster", str(tmp / "fleet.yaml")])
    yield s
    _stop(s)


@pytest.fixture
def k(racks: Server, kubectl137: Any) -> Iterator[tuple[Kubectl, str]]:
    ns = namespace(racks, "rack")
    yield Kubectl(kubectl137, racks, "1.37"), ns
    delete_namespace(racks, ns)


def cluster(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "cluster", *args, "--kubeconfig", str(server.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _json(kc: Kubectl, *args: str) -> Any:
    return json.loads(ok(kc, *args, "-o", "json"))


def _pods(kc: Kubectl, ns: str) -> dict[str, Any]:
    return {p["metadata"]["name"]: p for p in _json(kc, "get", "-n", ns, "pods", "-l", "app=gang")["items"]}


def _rack(kc: Kubectl, node: str) -> str:
    return _json(kc, "get", "node", node)["metadata"]["labels"]["topology.kubernetes.io/rack"]


@pytest.mark.parametrize("mode", ["single", "all"])
def test_rack_failure_evicts_the_gang_pods_on_it_after_their_tolerations_and_the_statefulset_converges_elsewhere(
    k: tuple[Kubectl, str], racks: Server, mode: str
) -> None:
    kc, ns = k
    ok(kc, "apply", "-n", ns, "-f", "-", input=sts(mode))
    ok(
        kc,
        "wait",
        "-n",
        ns,
        "--for=jsonpath={.status.readyReplicas}=4",
        "sts/gang",
        f"--timeout={WAIT}",
        timeout=70,
    )
    before = _pods(kc, ns)
    rack_of = {name: _rack(kc, p["spec"]["nodeName"]) for name, p in before.items()}
    failed = rack_of["gang-0"]
    hit = sorted(n for n, r in rack_of.items() if r == failed)
    spared = sorted(set(before) - set(hit))

    nodes = _json(kc, "get", "nodes")["items"]
    healthy = {
        n["metadata"]["name"]
        for n in nodes
        if n["metadata"]["labels"]["topology.kubernetes.io/rack"] != failed
    }
    columns = (
        "custom-columns=NAME:.metadata.name,UID:.metadata.uid,NODE:.spec.nodeName,"
        'READY:.status.conditions[?(@.type=="Ready")].status'
    )
    try:
        with Background(kc, "get", "pods", "-n", ns, "-l", "app=gang", "-w", "-o", columns) as watch:
            proc = cluster(racks, "fail", "--rack", failed, "--mode", "not-ready")
            assert proc.returncode == 0, proc.stderr
            assert sorted(proc.stdout.splitlines()) == sorted(
                f"node/{n['metadata']['name']} failed (not-ready)"
                for n in nodes
                if n["metadata"]["name"] not in healthy
            )
            # the evicted pods come back under the same names, Ready on the healthy racks
            back: set[str] = set()

            def replaced(line: str) -> bool:
                cols = line.split()
                if len(cols) == 4 and cols[0] in hit:
                    name, uid, node, ready = cols
                    if uid != before[name]["metadata"]["uid"] and node in healthy and ready == "True":
                        back.add(name)
                return back == set(hit)

            watch.wait_line(replaced, timeout=60)
        for node in _json(kc, "get", "nodes", "-l", f"topology.kubernetes.io/rack={failed}")["items"]:
            cond = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
            assert (cond["status"], cond["reason"]) == ("False", "KubeletNotReady")
            assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
                ("node.kubernetes.io/not-ready", "NoSchedule"),
                ("node.kubernetes.io/not-ready", "NoExecute"),
            }
        after = _pods(kc, ns)
        # node loss is not preemption: the rest of the gang was not touched, whatever the mode
        for n in spared:
            assert after[n]["metadata"]["uid"] == before[n]["metadata"]["uid"]
        events = _json(kc, "get", "-n", ns, "events", "--field-selector", "reason=TaintManagerEviction")[
            "items"
        ]
        assert sorted({e["involvedObject"]["name"] for e in events}) == hit
        assert all(
            e["message"] == f"Marking for deletion Pod {ns}/{e['involvedObject']['name']}" for e in events
        )
        (pg,) = _json(kc, "get", "-n", ns, "podgroups")["items"]
        assert not [c for c in pg["status"].get("conditions") or [] if c["type"] == "DisruptionTarget"]
    finally:
        proc = cluster(racks, "recover", "--rack", failed)
        assert proc.returncode == 0, proc.stderr
    ok(
        kc,
        "wait",
        "node",
        "-l",
        f"topology.kubernetes.io/rack={failed}",
        "--for=condition=Ready",
        f"--timeout={WAIT}",
        timeout=70,
    )
    for node in _json(kc, "get", "nodes", "-l", f"topology.kubernetes.io/rack={failed}")["items"]:
        assert not node["spec"].get("taints")


def test_cluster_command_errors(racks: Server) -> None:
    proc = cluster(racks, "fail", "--rack", "nope")
    assert proc.returncode == 1
    assert proc.stderr == "gangplane: no nodes match topology.kubernetes.io/rack=nope\n"
    proc = cluster(racks, "fail", "--node", "ghost")
    assert proc.returncode == 1
    assert proc.stderr == 'gangplane: Error from server (404): nodes "ghost" not found\n'


def test_an_unreachable_node_goes_unknown_after_the_grace_period_and_recovers(
    k: tuple[Kubectl, str], racks: Server
) -> None:
    """``--mode unreachable``: no heartbeat; after the scaled grace period (50 s × 0.1) the node
    lifecycle controller sets Ready=Unknown and taints ``unreachable``; ``recover`` undoes both."""
    kc, _ = k
    node = "h-zone-a-rack-2-1"
    if node not in ok(kc, "get", "nodes", "-o", "name"):
        node = _json(kc, "get", "nodes")["items"][-1]["metadata"]["name"]
    proc = cluster(racks, "fail", "--node", node)
    assert (proc.returncode, proc.stdout) == (0, f"node/{node} failed (unreachable)\n"), proc.stderr
    try:
        ok(kc, "wait", f"node/{node}", "--for=condition=Ready=Unknown", f"--timeout={WAIT}", timeout=70)
        ok(
            kc,
            "wait",
            f"node/{node}",
            "--for=jsonpath={.spec.taints[?(@.effect=='NoExecute')].key}=node.kubernetes.io/unreachable",
            f"--timeout={WAIT}",
            timeout=70,
        )
        got = _json(kc, "get", f"node/{node}")
        ready = next(c for c in got["status"]["conditions"] if c["type"] == "Ready")
        assert (ready["reason"], ready["message"]) == (
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
        )
        assert "node.kubernetes.io/unreachable:NoSchedule" in ok(kc, "describe", f"node/{node}")
        scrape = ok(kc, "get", "--raw", "/metrics")
        assert "node_collector_zone_size{" in scrape and "node_collector_evictions_total{" in scrape
    finally:
        proc = cluster(racks, "recover", "--all")
        assert (proc.returncode, proc.stdout) == (0, f"node/{node} recovered\n"), proc.stderr
    ok(kc, "wait", f"node/{node}", "--for=condition=Ready", f"--timeout={WAIT}", timeout=70)
    columns = "custom-columns=NAME:.metadata.name,TAINTS:.spec.taints"
    with Background(kc, "get", f"node/{node}", "-w", "-o", columns) as watch:
        watch.wait_line(lambda line: line.split() == [node, "<none>"], timeout=60)
