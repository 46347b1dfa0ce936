"""Real kubectl (1.35 and 1.37) against CRDs: apply a CRD then a custom resource, get (printer
columns, short names, categories), explain, scale, patch (merge, SMP refused, status), server-side
apply, validation errors with field paths, CEL rule messages, and deletion of the CRD."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml

from tests.crd_support import crontab_crd
from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import Background, fails, http_get, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("kcrd")


def crd_yaml(group: str) -> str:
    crd = crontab_crd()
    crd["spec"]["group"] = group
    crd["metadata"]["name"] = f"crontabs.{group}"
    return yaml.safe_dump(crd)


def cr_yaml(group: str, name: str, **spec: object) -> str:
    body = {"cronSpec": "*/5 * * * *", "image": "cron:1", **spec}
    return yaml.safe_dump(
        {"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": body}
    )


@pytest.fixture
def group(kubectl: Kubectl, server: Server) -> str:
    """A CRD of its own per test (CRDs are cluster-wide), applied with kubectl and Established."""
    g = f"k{uuid.uuid4().hex[:8]}.example.com"
    assert ok(kubectl, "apply", "-f", "-", input=crd_yaml(g)) == (
        f"customresourcedefinition.apiextensions.k8s.io/crontabs.{g} created\n"
    )
    yield g
    kubectl.run("delete", "crd", f"crontabs.{g}", "--wait=false", check=False)


def test_apply_crd_then_custom_resource_and_get(kubectl: Kubectl, ns: str, group: str) -> None:
    out = ok(kubectl, "wait", "--for=condition=Established", f"crd/crontabs.{group}", "--timeout=10s")
    assert out == f"customresourcedefinition.apiextensions.k8s.io/crontabs.{group} condition met\n"
    assert ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "nightly", replicas=2)) == (
        f"crontab.{group}/nightly created\n"
    )
    table = ok(kubectl, "-n", ns, "get", f"crontabs.{group}")
    assert table.splitlines()[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert table.splitlines()[1].split()[:7] == ["nightly", "*/5", "*", "*", "*", "*", "2"]
    wide = ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "-o", "wide")
    assert wide.splitlines()[0].split() == ["NAME", "SPEC", "REPLICAS", "IMAGE", "AGE"]
    obj = json.loads(ok(kubectl, "-n", ns, "get", f"crontab.{group}", "nightly", "-o", "json"))
    assert obj["spec"]["maxReplicas"] == 10  # defaulted by the schema
    assert ok(kubectl, "-n", ns, "get", "all", "-o", "name").splitlines() == [f"crontab.{group}/nightly"]


def test_explain_custom_resource(kubectl: Kubectl, group: str) -> None:
    # explain reads "resource.field.path": the group goes into --api-version
    out = ok(kubectl, "explain", "crontabs.spec.cronSpec", f"--api-version={group}/v1")
    assert f"GROUP:      {group}" in out and "KIND:       CronTab" in out
    assert "FIELD: cronSpec <string>" in out and "When to run." in out
    top = ok(kubectl, "explain", "crontabs", f"--api-version={group}/v1")
    assert "CronTab runs an image on a schedule." in top


def test_scale_and_status_subresources(kubectl: Kubectl, ns: str, group: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "c"))
    assert (
        ok(kubectl, "-n", ns, "scale", f"crontabs.{group}/c", "--replicas=4") == f"crontab.{group}/c scaled\n"
    )
    assert ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "c", "-o", "jsonpath={.spec.replicas}") == "4"
    ok(
        kubectl,
        "-n",
        ns,
        "patch",
        f"crontabs.{group}",
        "c",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"replicas":4,"selector":"app=c"}}',
    )
    scale = json.loads(
        ok(kubectl, "-n", ns, "get", "--raw", f"/apis/{group}/v1/namespaces/{ns}/crontabs/c/scale")
    )
    assert scale["status"] == {"replicas": 4, "selector": "app=c"}
    proc = fails(kubectl, "-n", ns, "scale", f"crontabs.{group}/c", "--replicas=11")
    assert 'spec: Invalid value: "object": replicas must not exceed maxReplicas' in proc.stderr


def test_patch_types(kubectl: Kubectl, ns: str, group: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "p"))
    proc = fails(kubectl, "-n", ns, "patch", f"crontabs.{group}", "p", "-p", '{"spec":{"image":"cron:2"}}')
    assert proc.stderr.startswith(
        f"error: application/strategic-merge-patch+json is not supported by {group}/v1, Kind=CronTab: "
    )
    assert ok(
        kubectl,
        "-n",
        ns,
        "patch",
        f"crontabs.{group}",
        "p",
        "--type=merge",
        "-p",
        '{"spec":{"image":"cron:2"}}',
    ) == (f"crontab.{group}/p patched\n")
    ok(
        kubectl,
        "-n",
        ns,
        "patch",
        f"crontabs.{group}",
        "p",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":3}]',
    )
    spec = json.loads(ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "p", "-o", "jsonpath={.spec}"))
    assert spec["image"] == "cron:2" and spec["replicas"] == 3
    # client-side apply of a change goes through a merge patch (no SMP for custom resources)
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "p", image="cron:3"))
    assert ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "p", "-o", "jsonpath={.spec.image}") == "cron:3"


def test_server_side_apply_merges_list_maps(kubectl: Kubectl, ns: str, group: str) -> None:
    ok(
        kubectl,
        "-n",
        ns,
        "apply",
        "--server-side",
        "-f",
        "-",
        input=cr_yaml(group, "s", ports=[{"name": "http", "port": 80}]),
    )
    body = yaml.safe_dump(
        {
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": "s"},
            "spec": {"ports": [{"name": "grpc", "port": 90}]},
        }
    )
    ok(kubectl, "-n", ns, "apply", "--server-side", "--field-manager=other", "-f", "-", input=body)
    ports = json.loads(ok(kubectl, "-n", ns, "get", f"crontabs.{group}", "s", "-o", "jsonpath={.spec.ports}"))
    assert ports == [{"name": "http", "port": 80}, {"name": "grpc", "port": 90}]


def test_validation_errors_with_field_paths_and_cel_messages(kubectl: Kubectl, ns: str, group: str) -> None:
    proc = fails(
        kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "bad", cronSpec="soon", replicas=-1)
    )
    assert proc.stderr.splitlines() == [
        'The CronTab "bad" is invalid: ',
        "* spec.cronSpec: Invalid value: \"soon\": spec.cronSpec in body should match '^[0-9*/ ,-]+$'",
        "* spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
    ]
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "big", replicas=12))
    assert (
        proc.stderr.strip()
        == 'The CronTab "big" is invalid: spec: Invalid value: "object": replicas must not exceed maxReplicas'
    )
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "down", replicas=5, allowScaleDown=False))
    proc = fails(
        kubectl,
        "-n",
        ns,
        "patch",
        f"crontabs.{group}",
        "down",
        "--type=merge",
        "-p",
        '{"spec":{"replicas":2}}',
    )
    assert (
        proc.stderr.strip()
        == 'The CronTab "down" is invalid: spec: Invalid value: "object": cannot scale down from 5 to 2'
    )
    proc = fails(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "unknown", bogus=1))
    assert (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus"'
        in proc.stderr
    )


def test_invalid_crd_is_rejected_with_paths(kubectl: Kubectl) -> None:
    crd = crontab_crd()
    g = f"k{uuid.uuid4().hex[:8]}.example.com"
    crd["spec"]["group"] = g
    crd["metadata"]["name"] = f"crontabs.{g}"
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["image"] = {
        "maxLength": 3
    }
    proc = fails(kubectl, "apply", "-f", "-", input=yaml.safe_dump(crd))
    assert proc.stderr == (
        f'The CustomResourceDefinition "crontabs.{g}" is invalid: '
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].type: Required value: "
        "must not be empty for specified object fields\n"
    )


def test_deleting_the_crd_deletes_its_objects(kubectl: Kubectl, ns: str, group: str, server: Server) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "x"))
    assert ok(kubectl, "delete", "crd", f"crontabs.{group}") == (
        f'customresourcedefinition.apiextensions.k8s.io "crontabs.{group}" deleted\n'
    )
    assert http_get(server, f"/apis/{group}/v1/namespaces/{ns}/crontabs").status_code == 404
    assert (
        http_get(
            server, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{group}"
        ).status_code
        == 404
    )


def test_deprecated_version_warns_on_every_request(kubectl: Kubectl, ns: str, group: str) -> None:
    ok(
        kubectl,
        "patch",
        "crd",
        f"crontabs.{group}",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/spec/versions/0/deprecated","value":true}]',
    )
    proc = kubectl.run("-n", ns, "apply", "-f", "-", input=cr_yaml(group, "old"), check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"Warning: {group}/v1 CronTab is deprecated\n"
    proc = kubectl.run("-n", ns, "get", f"crontabs.{group}", "old", "-o", "name", check=False)
    assert (proc.stdout, proc.stderr) == (
        f"crontab.{group}/old\n",
        f"Warning: {group}/v1 CronTab is deprecated\n",
    )


def test_api_resources_and_get_crd(kubectl: Kubectl, group: str) -> None:
    out = ok(kubectl, "api-resources", f"--api-group={group}")
    assert out.splitlines()[1].split() == ["crontabs", "ct", f"{group}/v1", "true", "CronTab"]
    table = ok(kubectl, "get", "crd", f"crontabs.{group}").splitlines()
    assert table[0].split() == ["NAME", "CREATED", "AT"] and table[1].split()[0] == f"crontabs.{group}"
    crd = json.loads(ok(kubectl, "get", "crd", f"crontabs.{group}", "-o", "json"))
    assert [(c["type"], c["status"]) for c in crd["status"]["conditions"]] == [
        ("NamesAccepted", "True"),
        ("Established", "True"),
    ]


def test_get_watch_prints_printer_columns(kubectl: Kubectl, ns: str, group: str) -> None:
    ok(kubectl, "-n", ns, "apply", "-f", "-", input=cr_yaml(group, "first", replicas=1))
    with Background(kubectl, "-n", ns, "get", f"crontabs.{group}", "-w") as w:
        assert w.wait_line(lambda line: line.startswith("NAME")).split() == [
            "NAME",
            "SPEC",
            "REPLICAS",
            "AGE",
        ]
        assert w.wait_line(lambda line: line.startswith("first ")).split()[6] == "1"  # the spec has 5 fields
        ok(kubectl, "-n", ns, "scale", f"crontabs.{group}/first", "--replicas=3")
        w.wait_line(lambda line: line.startswith("first ") and line.split()[6] == "3")
        assert w.proc.poll() is None
