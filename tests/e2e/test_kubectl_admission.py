"""Admission extension points with real kubectl against ``gangplane serve``: a ValidatingAdmissionPolicy
denying a gang StatefulSet without a topology constraint (kube's denial text), the same policy in Warn
mode (kubectl prints the warning), MutatingAdmissionPolicies adding a label (ApplyConfiguration) and a
field (JSONPatch), a validating webhook served from the test process over HTTPS (url + caBundle)
denying a ConfigMap, and failurePolicy Fail / Ignore once that server is stopped.

Every policy and webhook is scoped to the test's namespace (the server is shared by the session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gangplane.testing.webhook import WebhookServer, allowed, denied, rule, webhook_configuration
from tests.e2e.conftest import Kubectl, Server
from tests.e2e.kubectl_util import fails, ns_fixture, ok

pytestmark = pytest.mark.e2e

ns = ns_fixture("adm")


@pytest.fixture
def kubectl(kubectl137: Path, server: Server) -> Kubectl:
    return Kubectl(kubectl137, server, "1.37")


def in_ns(namespace: str) -> dict:
    return {"matchLabels": {"kubernetes.io/metadata.name": namespace}}


def gang_sts(name: str, topology: bool) -> str:
    scheduling: dict = {"schedulingPolicy": {"gang": {}}}
    if topology:
        scheduling["schedulingConstraints"] = {"topology": [{"key": "topology.kubernetes.io/rack"}]}
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "replicas": 2,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "serviceName": name,
                "scheduling": scheduling,
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
                },
            },
        }
    )


@pytest.fixture
def cleanup(kubectl: Kubectl) -> Iterator[list[str]]:
    """Cluster-scoped objects (``kind/name``) the test created, deleted at the end."""
    made: list[str] = []
    yield made
    for ref in reversed(made):
        kubectl.run("delete", ref, "--ignore-not-found", check=False)


def topology_policy(namespace: str, actions: list[str]) -> str:
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": f"gang-topology-{namespace}"},
        "spec": {
            "matchConstraints": {
                "namespaceSelector": in_ns(namespace),
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["statefulsets"],
                    }
                ],
            },
            "validations": [
                {
                    "expression": "!has(object.spec.scheduling) || has(object.spec.scheduling.schedulingConstraints)",
                    "message": "a StatefulSet with spec.scheduling must name a topology key",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": f"gang-topology-{namespace}"},
        "spec": {"policyName": f"gang-topology-{namespace}", "validationActions": actions},
    }
    return yaml.safe_dump_all([policy, binding])


def test_vap_deny_prints_kubes_denial(kubectl: Kubectl, ns: str, cleanup: list[str]) -> None:
    cleanup += [
        f"validatingadmissionpolicy/gang-topology-{ns}",
        f"validatingadmissionpolicybinding/gang-topology-{ns}",
    ]
    ok(kubectl, "apply", "-f", "-", input=topology_policy(ns, ["Deny"]))
    table = ok(kubectl, "get", "validatingadmissionpolicy", f"gang-topology-{ns}")
    assert table.split("\n")[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert table.split("\n")[1].split()[:3] == [f"gang-topology-{ns}", "1", "<unset>"]
    proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=gang_sts("web", topology=False))
    assert (
        # what kubectl prints for kube's 422 with a message-only cause (as in kube's VAP docs)
        'The statefulsets "web" is invalid: : '
        f"ValidatingAdmissionPolicy 'gang-topology-{ns}' with binding 'gang-topology-{ns}' denied request: "
        "a StatefulSet with spec.scheduling must name a topology key"
    ) in proc.stderr
    ok(kubectl, "-n", ns, "create", "-f", "-", input=gang_sts("web", topology=True))
    explained = ok(kubectl, "explain", "validatingadmissionpolicy.spec.validations.messageExpression")
    assert "GROUP:      admissionregistration.k8s.io" in explained and "FIELD: messageExpression" in explained


def test_vap_warn_creates_and_kubectl_prints_the_warning(
    kubectl: Kubectl, ns: str, cleanup: list[str]
) -> None:
    cleanup += [
        f"validatingadmissionpolicy/gang-topology-{ns}",
        f"validatingadmissionpolicybinding/gang-topology-{ns}",
    ]
    ok(kubectl, "apply", "-f", "-", input=topology_policy(ns, ["Warn"]))
    proc = kubectl.run("-n", ns, "create", "-f", "-", input=gang_sts("web", topology=False))
    assert proc.returncode == 0, proc.stderr
    assert (
        f"Warning: Validation failed for ValidatingAdmissionPolicy 'gang-topology-{ns}' with binding "
        f"'gang-topology-{ns}': a StatefulSet with spec.scheduling must name a topology key"
    ) in proc.stderr
    assert "statefulset.apps/web created" in proc.stdout


def test_map_label_and_json_patch(kubectl: Kubectl, ns: str, cleanup: list[str]) -> None:
    docs = []
    for name, patch_type, body in (
        ("team-label", "ApplyConfiguration", 'Object{metadata: Object.metadata{labels: {"team": "gang"}}}'),
        ("disruption", "JSONPatch", '[JSONPatch{op: "add", path: "/data/disruptionMode", value: "Gang"}]'),
    ):
        key = "applyConfiguration" if patch_type == "ApplyConfiguration" else "jsonPatch"
        docs += [
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingAdmissionPolicy",
                "metadata": {"name": f"{name}-{ns}"},
                "spec": {
                    "matchConstraints": {
                        "namespaceSelector": in_ns(ns),
                        "resourceRules": [
                            {
                                "apiGroups": [""],
                                "apiVersions": ["v1"],
                                "operations": ["CREATE"],
                                "resources": ["configmaps"],
                            }
                        ],
                    },
                    "reinvocationPolicy": "Never",
                    "mutations": [{"patchType": patch_type, key: {"expression": body}}],
                },
            },
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": f"{name}-{ns}"},
                "spec": {"policyName": f"{name}-{ns}"},
            },
        ]
        cleanup += [f"mutatingadmissionpolicy/{name}-{ns}", f"mutatingadmissionpolicybinding/{name}-{ns}"]
    ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump_all(docs))
    ok(kubectl, "-n", ns, "create", "configmap", "settings", "--from-literal=a=1")
    got = yaml.safe_load(ok(kubectl, "-n", ns, "get", "configmap", "settings", "-o", "yaml"))
    assert got["metadata"]["labels"] == {"team": "gang"}
    assert got["data"] == {"a": "1", "disruptionMode": "Gang"}


def test_validating_webhook_url_and_ca_bundle(kubectl: Kubectl, ns: str, cleanup: list[str]) -> None:
    def check(review: dict) -> dict:
        data = review["request"]["object"].get("data") or {}
        return denied("ConfigMaps may not hold a 'password' key") if "password" in data else allowed()

    strict = WebhookServer(check).start()
    lenient = WebhookServer(check).start()
    try:
        docs = [
            webhook_configuration(
                "Validating",
                f"strict-{ns}",
                strict,
                [rule("", "v1", "configmaps", ("CREATE",))],
                namespaceSelector=in_ns(ns),
                objectSelector={"matchLabels": {"policy": "strict"}},
            ),
            webhook_configuration(
                "Validating",
                f"lenient-{ns}",
                lenient,
                [rule("", "v1", "configmaps", ("CREATE",))],
                namespaceSelector=in_ns(ns),
                objectSelector={"matchLabels": {"policy": "lenient"}},
                failurePolicy="Ignore",
            ),
        ]
        cleanup += [
            f"validatingwebhookconfiguration/strict-{ns}",
            f"validatingwebhookconfiguration/lenient-{ns}",
        ]
        ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump_all(docs))
        table = ok(kubectl, "get", "validatingwebhookconfiguration", f"strict-{ns}")
        assert table.split("\n")[1].split()[:2] == [f"strict-{ns}", "1"]

        def cm(name: str, policy: str, key: str) -> str:
            return yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "labels": {"policy": policy}},
                    "data": {key: "x"},
                }
            )

        proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=cm("secret-ish", "strict", "password"))
        assert (
            f'Error from server (Forbidden): error when creating "STDIN": admission webhook '
            f"\"strict-{ns}.gangplane.test\" denied the request: ConfigMaps may not hold a 'password' key"
        ) in proc.stderr
        ok(kubectl, "-n", ns, "create", "-f", "-", input=cm("fine", "strict", "user"))
        assert len(strict.calls) == 2

        strict.stop()
        lenient.stop()
        proc = fails(kubectl, "-n", ns, "create", "-f", "-", input=cm("down", "strict", "user"))
        assert "Error from server (InternalError)" in proc.stderr
        assert (
            f'failed calling webhook "strict-{ns}.gangplane.test": failed to call webhook: Post'
            in proc.stderr
        )
        assert "connect: connection refused" in proc.stderr
        ok(kubectl, "-n", ns, "create", "-f", "-", input=cm("through", "lenient", "user"))
    finally:
        strict.stop()
        lenient.stop()


def test_two_version_crd_with_a_conversion_webhook(kubectl: Kubectl, ns: str, cleanup: list[str]) -> None:
    group = f"conv{ns.split('-')[-1]}.example.com"

    def convert(obj: dict, desired: str) -> dict:
        spec = dict(obj.get("spec") or {})
        if desired.endswith("/v2") and "size" in spec:
            spec["replicas"] = int(spec.pop("size"))
        if desired.endswith("/v1") and "replicas" in spec:
            spec["size"] = str(spec.pop("replicas"))
        return {**obj, "apiVersion": desired, "spec": spec}

    def handler(review: dict) -> dict:
        req = review["request"]
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "response": {
                "uid": req["uid"],
                "result": {"status": "Success"},
                "convertedObjects": [convert(o, req["desiredAPIVersion"]) for o in req["objects"]],
            },
        }

    server = WebhookServer(handler).start()
    try:

        def version(name: str, storage: bool, props: dict) -> dict:
            schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}
            return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}}

        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "scope": "Namespaced",
                "conversion": {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"url": server.url, "caBundle": server.ca_bundle},
                        "conversionReviewVersions": ["v1"],
                    },
                },
                "versions": [
                    version("v1", True, {"size": {"type": "string"}}),
                    version("v2", False, {"replicas": {"type": "integer"}}),
                ],
            },
        }
        cleanup.append(f"crd/widgets.{group}")
        ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump(crd))
        ok(kubectl, "wait", "--for=condition=Established", f"crd/widgets.{group}", "--timeout=10s")
        w = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"size": "3"}}
        ok(kubectl, "-n", ns, "create", "-f", "-", input=yaml.safe_dump(w))
        as_v2 = yaml.safe_load(ok(kubectl, "-n", ns, "get", f"widgets.v2.{group}", "a", "-o", "yaml"))
        assert as_v2["apiVersion"] == f"{group}/v2" and as_v2["spec"] == {"replicas": 3}
        as_v1 = yaml.safe_load(ok(kubectl, "-n", ns, "get", f"widgets.v1.{group}", "a", "-o", "yaml"))
        assert as_v1["spec"] == {"size": "3"}
        assert server.calls and server.calls[0]["request"]["desiredAPIVersion"] == f"{group}/v2"
        # deleting the CRD deletes its objects (through the storage version: no conversion needed)
        ok(kubectl, "delete", f"crd/widgets.{group}", "--timeout=30s", timeout=40)
    finally:
        server.stop()


def test_kubectl_scale_meets_a_policy_on_statefulsets_scale(
    kubectl: Kubectl, ns: str, cleanup: list[str]
) -> None:
    name = f"scale-cap-{ns}"
    cleanup += [f"validatingadmissionpolicy/{name}", f"validatingadmissionpolicybinding/{name}"]
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "namespaceSelector": in_ns(ns),
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["UPDATE"],
                        "resources": ["statefulsets/scale"],
                    }
                ],
            },
            "validations": [
                {
                    "expression": "object.kind == 'Scale' && object.spec.replicas <= 3",
                    "message": "at most 3 replicas",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    ok(kubectl, "apply", "-f", "-", input=yaml.safe_dump_all([policy, binding]))
    ok(kubectl, "-n", ns, "create", "-f", "-", input=gang_sts("web", topology=True))
    assert "statefulset.apps/web scaled" in ok(
        kubectl, "-n", ns, "scale", "statefulset", "web", "--replicas=3"
    )
    proc = fails(kubectl, "-n", ns, "scale", "statefulset", "web", "--replicas=5")
    assert (
        f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: at most 3 replicas"
        in proc.stderr
    )
    # the policy names the scale subresource only: an edit of the StatefulSet itself is not checked
    ok(kubectl, "-n", ns, "patch", "statefulset", "web", "-p", '{"spec":{"replicas":5}}')
    assert (
        ok(kubectl, "-n", ns, "get", "statefulset", "web", "-o", "jsonpath={.spec.replicas}").strip() == "5"
    )
