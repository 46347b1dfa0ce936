"""KEP-6277 Story 4 and the "Opting into Workload-Aware Scheduling" example, end to end with real
kubectl against ``gangplane serve`` and its default fleet (issue 9 acceptance; KEP e2e bullet
"End-to-end ResourceClaim sharing: StatefulSet with resourceClaims creates PodGroup with shared
claim; all pods reference same allocated ResourceClaim").

The manifests are the KEP's, completed only as ``test_kubectl_kep6277`` completes them (selector,
template labels) plus the ResourceClaimTemplate they reference. The default fleet ships the
DeviceClass ``shared-accelerator.example.com`` and one such accelerator per rack, so the gang gets
one claim, allocated once, reserved for its PodGroup, and every pod runs in that device's rack.
"""

from __future__ import annotations

import json

import pytest

from apiserver.api.types import Obj
from tests.e2e.conftest import Kubectl
from tests.e2e.kubectl_util import fails, ns_fixture, ok
from tests.e2e.test_kubectl_kep6277 import (
    OPT_IN,
    OPT_IN_CLAIM_TEMPLATE,
    STORY4,
    STORY4_CLAIM_TEMPLATE,
    dump,
    manifest,
    scale_down_and_delete,
)

pytestmark = pytest.mark.e2e

ns = ns_fixture("dra")
WAIT = "60s"
RACK = "topology.kubernetes.io/rack"


def get_json(kubectl: Kubectl, ns: str, *what: str) -> Obj:
    return json.loads(ok(kubectl, "-n", ns, "get", *what, "-o", "json"))


@pytest.mark.parametrize(
    ("template", "sts_text"),
    [(STORY4_CLAIM_TEMPLATE, STORY4), (OPT_IN_CLAIM_TEMPLATE, OPT_IN)],
    ids=["story4-shared-claim", "opting-in-example"],
)
def test_one_claim_every_pod_running_on_a_node_with_the_device(
    kubectl: Kubectl, ns: str, template: str, sts_text: str
) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=template)
    sts = manifest(sts_text)
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
        timeout=90,
    )
    (pg,) = get_json(kubectl, ns, "podgroups")["items"]
    (claim,) = get_json(kubectl, ns, "resourceclaims")["items"]
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert claim["status"]["reservedFor"] == [
        {
            "apiGroup": "scheduling.k8s.io",
            "resource": "podgroups",
            "name": pg["metadata"]["name"],
            "uid": pg["metadata"]["uid"],
        }
    ]
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert result["driver"] == "shared-accelerator.example.com"
    table = ok(kubectl, "-n", ns, "get", "resourceclaims")
    assert table.splitlines()[0].split() == ["NAME", "STATE", "AGE"]
    assert table.splitlines()[1].split()[:2] == [claim["metadata"]["name"], "allocated,reserved"]

    pods = get_json(kubectl, ns, "pods", "-l", f"app={name}")["items"]
    assert len(pods) == replicas
    nodes = {n["metadata"]["name"]: n for n in json.loads(ok(kubectl, "get", "nodes", "-o", "json"))["items"]}
    for p in pods:
        assert p["status"]["phase"] == "Running"
        assert p["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == claim["metadata"]["name"]
        # the device's pool is its rack; every pod sits on a node of that rack
        assert nodes[p["spec"]["nodeName"]]["metadata"]["labels"][RACK] == result["pool"]
    scale_down_and_delete(kubectl, ns, name)
    ok(kubectl, "-n", ns, "wait", "resourceclaims", "--all", "--for=delete", f"--timeout={WAIT}", timeout=90)


def test_default_fleet_publishes_device_classes_and_slices(kubectl: Kubectl) -> None:
    classes = ok(kubectl, "get", "deviceclasses", "-o", "name").split()
    assert classes == [
        "deviceclass.resource.k8s.io/gpu.example.com",
        "deviceclass.resource.k8s.io/shared-accelerator.example.com",
    ]
    table = ok(kubectl, "get", "resourceslices").splitlines()
    assert table[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    rows = [line.split() for line in table[1:]]
    assert len([r for r in rows if r[2] == "gpu.example.com"]) == 16
    shared = [r for r in rows if "shared-accelerator.example.com" in r]
    assert len(shared) == 4  # one per rack, no node: reachable from every node of its rack


def test_an_invalid_cel_selector_is_rejected_naming_the_field(kubectl: Kubectl, ns: str) -> None:
    bad = STORY4_CLAIM_TEMPLATE.replace(
        "          deviceClassName: shared-accelerator.example.com\n",
        "          deviceClassName: shared-accelerator.example.com\n"
        "          selectors:\n"
        "          - cel:\n"
        "              expression: device.driver ==\n",
    )
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=bad)
    assert 'The ResourceClaimTemplate "shared-accelerator" is invalid' in proc.stderr
    assert "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value" in proc.stderr
