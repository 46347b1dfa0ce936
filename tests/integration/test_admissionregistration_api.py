"""The admissionregistration.k8s.io/v1 API: kube's defaults, validation messages with field paths,
discovery, OpenAPI and Table columns of the webhook configurations and admission policies."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from apiserver.client.interface import GVR
from apiserver.errors import StatusError
from apiserver.openapi import documents
from apiserver.registry.builtin import builtin_resources
from apiserver.rest.resources import Registry
from apiserver.server.discovery import api_resource_list
from apiserver.server.tables import to_table
from featuregates import FeatureGate
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
AR = "admissionregistration.k8s.io"
VWC = GVR(AR, "v1", "validatingwebhookconfigurations")
MWC = GVR(AR, "v1", "mutatingwebhookconfigurations")
VAP = GVR(AR, "v1", "validatingadmissionpolicies")
VAPB = GVR(AR, "v1", "validatingadmissionpolicybindings")
MAP = GVR(AR, "v1", "mutatingadmissionpolicies")
MAPB = GVR(AR, "v1", "mutatingadmissionpolicybindings")


def webhook_config(kind: str = "ValidatingWebhookConfiguration", **hook: object) -> dict:
    base = {
        "name": "check.example.com",
        "clientConfig": {"url": "https://127.0.0.1:9443/validate"},
        "rules": [
            {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    base.update(hook)
    return {"apiVersion": f"{AR}/v1", "kind": kind, "metadata": {"name": "hooks"}, "webhooks": [base]}


def policy(**spec: object) -> dict:
    base: dict = {
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["statefulsets"],
                }
            ]
        },
        "validations": [{"expression": "object.spec.replicas <= 5"}],
    }
    base.update(spec)
    return {
        "apiVersion": f"{AR}/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"},
        "spec": base,
    }


async def test_webhook_configuration_defaults(client) -> None:
    cfg = await client.create(VWC, webhook_config())
    hook = cfg["webhooks"][0]
    assert hook["failurePolicy"] == "Fail"
    assert hook["matchPolicy"] == "Equivalent"
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["timeoutSeconds"] == 10
    assert hook["rules"][0]["scope"] == "*"
    assert "reinvocationPolicy" not in hook
    mcfg = await client.create(
        MWC,
        webhook_config(
            "MutatingWebhookConfiguration", clientConfig={"service": {"namespace": "default", "name": "svc"}}
        ),
    )
    mhook = mcfg["webhooks"][0]
    assert mhook["reinvocationPolicy"] == "Never"
    assert mhook["clientConfig"]["service"]["port"] == 443
    assert mcfg["metadata"]["generation"] == 1


async def test_webhook_configuration_validation_messages(client) -> None:
    bad = webhook_config(
        name="short",
        clientConfig={"url": "http://example.com/x?y=1"},
        sideEffects="Some",
        timeoutSeconds=31,
        admissionReviewVersions=["v2"],
        rules=[
            {
                "operations": ["CREATE", "*"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["*", "pods"],
            }
        ],
    )
    with pytest.raises(StatusError) as e:
        await client.create(VWC, bad)
    assert e.value.code == 422
    msg = e.value.message
    assert msg.startswith('ValidatingWebhookConfiguration.admissionregistration.k8s.io "hooks" is invalid: ')
    for part in (
        'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
        "webhooks[0].rules[0].operations: Invalid value: ",
        "if '*' is present, must not specify other operations",
        "if '*' is present, must not specify other resources without subresources",
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme",
        'webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
        "webhooks[0].admissionReviewVersions: Invalid value: ",
        "must include at least one of v1, v1beta1",
    ):
        assert part in msg, (part, msg)
    causes = {c["field"] for c in e.value.details["causes"]}
    assert "webhooks[0].sideEffects" in causes
    missing = webhook_config(clientConfig={})
    del missing["webhooks"][0]["sideEffects"]
    with pytest.raises(StatusError) as e:
        await client.create(VWC, missing)
    assert "webhooks[0].clientConfig: Required value: exactly one of url or service is required" in str(
        e.value
    )
    assert "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun" in str(e.value)


async def test_status_controller_writes_type_checking(cp, client) -> None:
    from controllers.admissionpolicystatus import NAME, new_admission_policy_status_controller

    cp.register(NAME, new_admission_policy_status_controller)
    await cp.start_component(NAME)
    body = policy(
        validations=[
            {"expression": "object.spec.replicass <= 5", "messageExpression": "'n: ' + object.metadata.name"},
            {"expression": "object.spec.replicas <= 5"},
        ]
    )
    await client.create(VAP, body)

    def checked(o: dict | None) -> bool:
        return bool(o) and (o.get("status") or {}).get("observedGeneration") == o["metadata"]["generation"]

    got = await wait_for_object(client, VAP, "p", cond=checked)
    assert got["status"]["typeChecking"] == {
        "expressionWarnings": [
            {
                "fieldRef": "spec.validations[0].expression",
                "warning": "apps/v1, Kind=StatefulSet: ERROR: <input>:1:12: undefined field 'replicass'\n"
                " | object.spec.replicass <= 5\n"
                " | ...........^",
            }
        ]
    }
    got["spec"]["validations"] = [{"expression": "object.spec.replicas <= 5"}]
    await client.update(VAP, got)
    fixed = await wait_for_object(
        client, VAP, "p", cond=lambda o: checked(o) and o["metadata"]["generation"] == 2
    )
    assert fixed["status"]["typeChecking"] == {}


async def test_policy_defaults_and_generation(client) -> None:
    p = await client.create(VAP, policy())
    assert p["spec"]["failurePolicy"] == "Fail"
    mc = p["spec"]["matchConstraints"]
    assert (mc["matchPolicy"], mc["namespaceSelector"], mc["objectSelector"]) == ("Equivalent", {}, {})
    assert mc["resourceRules"][0]["scope"] == "*"
    assert p["metadata"]["generation"] == 1
    p["spec"]["validations"].append({"expression": "true"})
    p2 = await client.update(VAP, p)
    assert p2["metadata"]["generation"] == 2


async def test_policy_validation_messages(client) -> None:
    bad = policy(
        validations=[
            {"expression": "nope.spec == 1", "reason": "Teapot", "message": "a\nb"},
            {"expression": " "},
        ],
        variables=[{"name": "not valid", "expression": "1"}],
        paramKind={"apiVersion": "a/b/c", "kind": "X"},
    )
    bad["spec"]["matchConstraints"]["resourceRules"] = []
    with pytest.raises(StatusError) as e:
        await client.create(VAP, bad)
    msg = e.value.message
    for part in (
        "spec.validations[0].expression: Invalid value: \"nope.spec == 1\": compilation failed: ERROR: undeclared reference to 'nope'",
        'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
        'spec.validations[0].message: Invalid value: "a\\nb": message must not contain line breaks',
        "spec.validations[1].expression: Required value: expression is not specified",
        'spec.variables[0].name: Invalid value: "not valid": name is not a valid CEL identifier',
        'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        "spec.matchConstraints.resourceRules: Required value",
    ):
        assert part in msg, (part, msg)
    empty = policy()
    del empty["spec"]["validations"]
    with pytest.raises(StatusError) as e:
        await client.create(VAP, empty)
    assert (
        "spec.validations: Required value: validations or auditAnnotations must contain at least one item"
        in str(e.value)
    )


async def test_binding_validation(client) -> None:
    b = {
        "apiVersion": f"{AR}/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "b"},
        "spec": {"policyName": "p", "validationActions": ["Deny", "Warn"], "paramRef": {"name": "x"}},
    }
    with pytest.raises(StatusError) as e:
        await client.create(VAPB, b)
    msg = str(e.value)
    assert "spec.validationActions: Invalid value: " in msg
    assert "must not contain both Deny and Warn" in msg
    assert "spec.paramRef.parameterNotFoundAction: Required value" in msg
    b["spec"]["validationActions"] = []
    b["spec"]["paramRef"]["parameterNotFoundAction"] = "Deny"
    with pytest.raises(StatusError) as e:
        await client.create(VAPB, b)
    assert "spec.validationActions: Required value: at least one validation action is required" in str(
        e.value
    )
    b["spec"]["validationActions"] = ["Warn", "Audit"]
    created = await client.create(VAPB, b)
    assert created["spec"]["validationActions"] == ["Warn", "Audit"]


async def test_mutating_policy_validation(client) -> None:
    m = {
        "apiVersion": f"{AR}/v1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": "m"},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ]
            },
            "mutations": [{"patchType": "ApplyConfiguration"}],
        },
    }
    with pytest.raises(StatusError) as e:
        await client.create(MAP, m)
    msg = str(e.value)
    assert "spec.reinvocationPolicy: Required value" in msg
    assert (
        "spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration"
        in msg
    )
    m["spec"]["reinvocationPolicy"] = "Never"
    m["spec"]["mutations"][0]["applyConfiguration"] = {
        "expression": 'Object{metadata: Object.metadata{labels: {"team": "gang"}}}'
    }
    created = await client.create(MAP, m)
    assert created["spec"]["failurePolicy"] == "Fail"


def test_discovery_and_openapi() -> None:
    registry = Registry(builtin_resources())
    listing = api_resource_list(registry, AR, "v1", FeatureGate())
    assert listing is not None
    by_name = {r["name"]: r for r in listing["resources"]}
    for plural, kind in (
        ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
        ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"),
        ("validatingadmissionpolicies", "ValidatingAdmissionPolicy"),
        ("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding"),
        ("mutatingadmissionpolicies", "MutatingAdmissionPolicy"),
        ("mutatingadmissionpolicybindings", "MutatingAdmissionPolicyBinding"),
    ):
        assert by_name[plural]["kind"] == kind
        assert by_name[plural]["namespaced"] is False
        assert by_name[plural]["categories"] == ["api-extensions"]
    assert "validatingadmissionpolicies/status" in by_name
    assert "mutatingadmissionpolicies/status" not in by_name  # none in kube's v1
    doc = orjson.loads(documents.openapi_v3_group_version(registry, AR, "v1"))
    assert "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy" in doc["components"]["schemas"]


def test_table_columns() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    meta = {"name": "x", "creationTimestamp": "2025-12-31T23:00:00Z"}
    vwc = {"metadata": meta, "webhooks": [{}, {}]}
    t = to_table(AR, "validatingwebhookconfigurations", [vwc], now, "1")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Webhooks", "Age"]
    assert t["rows"][0]["cells"] == ["x", 2, "60m"]
    vap = {
        "metadata": meta,
        "spec": {"validations": [{}], "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}},
    }
    t = to_table(AR, "validatingadmissionpolicies", [vap], now, "1")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Validations", "ParamKind", "Age"]
    assert t["rows"][0]["cells"] == ["x", 1, "v1/ConfigMap", "60m"]
    b = {"metadata": meta, "spec": {"policyName": "p", "paramRef": {"name": "cfg"}}}
    t = to_table(AR, "validatingadmissionpolicybindings", [b], now, "1")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "PolicyName", "ParamRef", "Age"]
    assert t["rows"][0]["cells"] == ["x", "p", "*/cfg", "60m"]
    t = to_table(AR, "mutatingadmissionpolicies", [{"metadata": meta, "spec": {"mutations": [{}]}}], now, "1")
    assert t["rows"][0]["cells"] == ["x", 1, "<unset>", "60m"]
