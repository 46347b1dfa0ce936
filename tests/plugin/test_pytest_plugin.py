"""The ``gangplane`` pytest plugin, run as a user would: in a separate pytest session (pytester).

Each test writes a small test module for an imaginary user project, runs it with ``runpytest``
in a subprocess-free inner session, and asserts on its outcome and report.
"""

from __future__ import annotations

# The webhook fixture generates certificates (cryptography, whose native half must not be loaded
# twice) and serves with uvicorn: imported here too, for the same reason.
import cryptography.hazmat.primitives.asymmetric.ec  # noqa: F401
import cryptography.hazmat.primitives.hashes  # noqa: F401
import cryptography.hazmat.primitives.serialization  # noqa: F401
import cryptography.x509  # noqa: F401
import cryptography.x509.oid  # noqa: F401

# httpx imports httpcore on its first client and maps httpcore's exceptions to its own from then on:
# a copy of httpcore imported (and then removed) inside an inner session would leave that map
# naming classes no later httpcore raises, and a webhook call's connection error would escape
# as httpcore's instead of httpx's.
import httpcore  # noqa: F401
import pytest
import uvicorn  # noqa: F401

# The inner sessions run in this process; pytester removes the modules they import when they end.
# The control plane is imported here first so every inner session shares it: the CEL library's
# native half may initialise its logger only once per process. apiserver.cel loads the library
# lazily (on the first compile), so it is loaded here too.
import apiserver.cel
import gangplane.controlplane  # noqa: F401
import gangplane.testing.webhook  # noqa: F401

apiserver.cel.compiler.runtime()

pytest_plugins = ["pytester"]

#: the inner sessions run the user's async tests with anyio, as a typical async project would
ANYIO = """
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"
"""


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makeconftest(ANYIO)
    pytester.makepyfile(test_user=source)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", *args)


def test_in_process_fixture_serves_the_api_and_runs_a_statefulset(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import CONFIGMAPS, STATEFULSETS

@pytest.mark.anyio
async def test_it(gangplane):
    client = gangplane.client()
    await client.create(CONFIGMAPS, {"metadata": {"name": "c"}, "data": {"k": "v"}}, "default")
    got = await gangplane.wait_for({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    assert got["data"] == {"k": "v"}
    sts = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "serviceName": "web",
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        },
    }
    await client.create(STATEFULSETS, sts, "default")
    pods = await gangplane.wait_pods_running("app=web", 2, namespace="default", timeout=20)
    assert sorted(p["metadata"]["name"] for p in pods) == ["web-0", "web-1"]
    assert "scheduler" in gangplane.components
""",
    )
    result.assert_outcomes(passed=1)


def test_component_stop_and_start_mid_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import PODS

POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}

@pytest.mark.anyio
async def test_it(gangplane):
    await gangplane.stop_component("scheduler")
    assert "scheduler" not in gangplane.components
    client = gangplane.client()
    await client.create(PODS, POD, "default")
    with pytest.raises(AssertionError, match="timed out after 0.3s"):
        await gangplane.wait_for({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}},
                                 lambda p: bool(p and p["spec"].get("nodeName")), timeout=0.3)
    await gangplane.start_component("scheduler")
    await gangplane.wait_pods_running("", 1, namespace="default", timeout=20)
""",
    )
    result.assert_outcomes(passed=1)


def test_http_fixture_kubectl_and_python_client(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import yaml
from kubernetes import client as k8s

def test_it(gangplane_server):
    out = gangplane_server.kubectl("get", "nodes", "-o", "name").stdout.split()
    assert len(out) == 22
    cfg = yaml.safe_load(gangplane_server.kubeconfig.read_text())
    assert cfg["clusters"][0]["cluster"]["server"] == gangplane_server.server
    core = k8s.CoreV1Api(gangplane_server.api_client)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="team-a")))
    names = [n.metadata.name for n in core.list_namespace().items]
    assert "team-a" in names
    gangplane_server.kubectl("create", "configmap", "cm", "-n", "team-a", "--from-literal=a=b")
    got = gangplane_server.wait_for({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "team-a"}})
    assert got["data"] == {"a": "b"}
""",
    )
    result.assert_outcomes(passed=1)


def test_marker_sets_the_fleet_and_gates_per_component(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import NODES, STATEFULSETS, WORKLOADS

NODES_SPEC = [{"name": "n-{index}", "count": 3, "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}]
GANG = {
    "metadata": {"name": "db"},
    "spec": {
        "replicas": 2,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "serviceName": "db",
        "scheduling": {"schedulingPolicy": {"gang": {}}},
        "template": {"metadata": {"labels": {"app": "db"}},
                     "spec": {"containers": [{"name": "c", "image": "x"}]}},
    },
}

@pytest.mark.anyio
@pytest.mark.gangplane(nodes=NODES_SPEC, component_gates={"statefulset-controller": {"WorkloadWithStatefulSet": False}})
async def test_gate_off_in_the_controller_only(gangplane):
    client = gangplane.client()
    nodes = (await client.list(NODES))["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["n-0", "n-1", "n-2"]
    await client.create(STATEFULSETS, GANG, "default")   # the API server still accepts spec.scheduling
    await gangplane.wait_pods_running("app=db", 2, namespace="default", timeout=20)
    assert (await client.list(WORKLOADS, "default"))["items"] == []

@pytest.mark.anyio
async def test_gate_on_by_default(gangplane):
    client = gangplane.client()
    await client.create(STATEFULSETS, GANG, "default")
    await gangplane.wait_pods_running("app=db", 2, namespace="default", timeout=20)
    # the controller creates the Workload before any pod (KEP-6277)
    assert len((await client.list(WORKLOADS, "default"))["items"]) == 1
""",
    )
    result.assert_outcomes(passed=2)


def test_failing_test_report_carries_log_tail_and_events(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import PODS

@pytest.mark.anyio
@pytest.mark.gangplane(nodes=[{"name": "tiny", "capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}])
async def test_unschedulable(gangplane):
    pod = {"metadata": {"name": "big"}, "spec": {"containers": [{"name": "c", "image": "x",
           "resources": {"requests": {"cpu": "64"}}}]}}
    await gangplane.client().create(PODS, pod, "default")
    await gangplane.wait_pods_running("", 1, namespace="default", timeout=0.5)
""",
    )
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "gangplane log (tail)" in out
    assert "gangplane events" in out
    assert "FailedScheduling" in out
    assert "Insufficient cpu" in out
    assert "timed out after 0.5s waiting for 1 pod(s) Running and Ready" in out


@pytest.mark.parametrize("scope", ["module", "session"])
def test_shared_plane_isolates_tests(pytester: pytest.Pytester, scope: str) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import CONFIGMAPS, NAMESPACES, NODES

SEEN = {}

@pytest.mark.anyio
async def test_a(gangplane):
    client = gangplane.client()
    SEEN["plane"] = id(gangplane.control_plane)
    await client.create(NAMESPACES, {"metadata": {"name": "scratch"}})
    await client.create(CONFIGMAPS, {"metadata": {"name": "left-behind"}}, "default")
    await client.create(NODES, {"metadata": {"name": "extra-node"}})

@pytest.mark.anyio
async def test_b(gangplane):
    client = gangplane.client()
    assert SEEN["plane"] == id(gangplane.control_plane)   # the same plane, reused
    names = {n["metadata"]["name"] for n in (await client.list(NAMESPACES))["items"]}
    assert "scratch" not in names
    cms = {c["metadata"]["name"] for c in (await client.list(CONFIGMAPS, "default"))["items"]}
    assert "left-behind" not in cms
""",
        f"--gangplane-scope={scope}",
    )
    result.assert_outcomes(passed=2)


def test_a_user_test_asserts_why_a_pod_went_where_it_went(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import PODS

NODES = [
    {"name": "roomy", "capacity": {"cpu": "8", "memory": "8Gi", "pods": "10"}},
    {"name": "tiny", "capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
]

def pod(name, cpu):
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}}

@pytest.mark.anyio
@pytest.mark.gangplane(nodes=NODES, scheduling_records=True)
async def test_why(gangplane):
    await gangplane.client().create(PODS, pod("web", "2"), "default")
    rec = await gangplane.scheduling_record(
        "pod/web", condition=lambda r: bool(r and r["attempts"][-1].get("result") == "Scheduled")
    )
    attempt = rec["attempts"][-1]
    assert attempt["selectedNode"] == "roomy"
    assert attempt["nodes"]["total"] == 2 and attempt["nodes"]["feasible"] == 1
    await gangplane.client().create(PODS, pod("huge", "16"), "default")
    rec = await gangplane.scheduling_record(
        "pod/huge", condition=lambda r: bool(r and r["attempts"][-1].get("result") == "Unschedulable")
    )
    (rejection,) = rec["attempts"][-1]["filter"]
    assert rejection["plugin"] == "NodeResourcesFit"
    assert rejection["reasons"][0] == {"reason": "Insufficient cpu", "nodes": 2, "examples": ["roomy", "tiny"]}
""",
    )
    result.assert_outcomes(passed=1)


def test_a_user_stage_file_changes_pod_and_node_lifecycles(pytester: pytest.Pytester) -> None:
    """``@pytest.mark.gangplane(stages=FILE)``: pods labelled app=slow become Ready 3 s (simulated)
    after they start and fail at 20 s; the nodes of one rack go NotReady 10 s after they register."""
    pytester.makefile(
        ".yaml",
        stages="""
stages:
- name: slow-ready
  resourceRef: {kind: Pod}
  selector: {matchLabels: {app: slow}}
  delay: 3s
  next: {ready: true}
- name: slow-dies
  resourceRef: {kind: Pod}
  selector: {matchLabels: {app: slow}}
  delay: 20s
  next: {phase: Failed}
- name: rack-1-down
  resourceRef: {kind: Node}
  selector: {matchLabels: {topology.kubernetes.io/rack: r1}}
  delay: 10s
  next: {fault: not-ready}
""",
    )
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import NODES as NODE_RESOURCE, PODS

NODES = [{"name": "n-{rack}-{index}", "count": 1, "zones": ["z"], "racksPerZone": 2, "rackName": "r{r}",
          "capacity": {"cpu": "4", "memory": "8Gi", "pods": "10"}}]

def cond(o, t):
    return next((c["status"] for c in (o or {}).get("status", {}).get("conditions", []) if c["type"] == t), None)

@pytest.mark.gangplane(stages="stages.yaml", nodes=NODES)
@pytest.mark.anyio
async def test_it(gangplane):
    client = gangplane.client()
    pod = {"metadata": {"name": "s", "labels": {"app": "slow"}},
           "spec": {"restartPolicy": "Never", "nodeName": "n-r0-0",
                    "containers": [{"name": "c", "image": "x"}]}}
    await client.create(PODS, pod, "default")
    ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "s", "namespace": "default"}}
    running = await gangplane.wait_for(ref, lambda o: o and o["status"].get("phase") == "Running", timeout=20)
    assert cond(running, "Ready") == "False"
    await gangplane.wait_for(ref, lambda o: cond(o, "Ready") == "True", timeout=20)
    failed = await gangplane.wait_for(ref, lambda o: o["status"].get("phase") == "Failed", timeout=20)
    assert failed["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-r1-0"}}
    down = await gangplane.wait_for(node, lambda o: cond(o, "Ready") == "False", timeout=20)
    assert next(c for c in down["status"]["conditions"] if c["type"] == "Ready")["reason"] == "KubeletNotReady"
    other = await client.get(NODE_RESOURCE, "n-r0-0")
    assert cond(other, "Ready") == "True"
""",
    )
    result.assert_outcomes(passed=1)


def test_a_bad_stage_file_is_reported(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", stages="stages: [{resourceRef: {kind: Pod}, next: {explode: true}}]\n")
    result = run(
        pytester,
        """
import pytest

@pytest.mark.gangplane(stages="stages.yaml", nodes=[])
@pytest.mark.anyio
async def test_it(gangplane):
    pass
""",
    )
    result.assert_outcomes(errors=1)
    assert "stages[0].next: a Pod stage's next is one of crash, phase, ready" in result.stdout.str()


def test_webhook_fixture_serves_and_registers_a_handler(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest
from apiserver.client.interface import CONFIGMAPS, GVR
from apiserver.errors import StatusError
from gangplane.testing import allowed, denied, patched, rule

VWC = GVR("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")

def check(review):
    data = review["request"]["object"].get("data") or {}
    return denied("no secrets in ConfigMaps") if "password" in data else allowed()

def stamp(review):
    return patched([{"op": "add", "path": "/data/stamped", "value": "yes"}])

@pytest.mark.anyio
async def test_it(gangplane, gangplane_webhooks):
    server = await gangplane_webhooks.validating(check, rules=[rule("", "v1", "configmaps")], name="check")
    await gangplane_webhooks.mutating(stamp, rules=[rule("", "v1", "configmaps")], name="stamp")
    client = gangplane.client()
    out = await client.create(CONFIGMAPS, {"metadata": {"name": "ok"}, "data": {"a": "b"}}, "default")
    assert out["data"] == {"a": "b", "stamped": "yes"}
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, {"metadata": {"name": "bad"}, "data": {"password": "x"}}, "default")
    assert 'admission webhook "check.gangplane.test" denied the request: no secrets in ConfigMaps' in e.value.message
    assert server.calls[0]["request"]["object"]["data"]["stamped"] == "yes"
    assert (await client.get(VWC, "check"))["webhooks"][0]["clientConfig"]["caBundle"]

@pytest.mark.anyio
async def test_removed_at_teardown(gangplane):
    items = (await gangplane.client().list(VWC))["items"]
    assert items == []
""",
        "--gangplane-scope=module",
    )
    result.assert_outcomes(passed=2)
