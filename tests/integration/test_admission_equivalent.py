"""``matchPolicy: Equivalent``: a request matched through another version of the same stored resource
sends the webhook (and gives a policy) the object converted to the matched version, with
``kind``/``resource`` naming the matched version and ``requestKind``/``requestResource`` the
request's own (kube's VersionedAttributes): ``autoscaling/v1`` HPAs seen as ``v2``, and a custom
resource converted by its CRD's conversion webhook."""

from __future__ import annotations

import pytest

from apiserver.client.interface import GVR
from apiserver.errors import StatusError
from gangplane.testing.webhook import Webhooks, WebhookServer, allowed, denied, patched, rule
from tests.helpers import wait_for_object
from tests.integration.test_crd_conversion_webhook import CRDS, V1, conversion_handler, crd, established

pytestmark = pytest.mark.anyio
NS = "default"
HPA_V1 = GVR("autoscaling", "v1", "horizontalpodautoscalers")
HPA_V2 = GVR("autoscaling", "v2", "horizontalpodautoscalers")
AR = "admissionregistration.k8s.io"


@pytest.fixture
async def hooks(client):
    w = Webhooks(client)
    try:
        yield w
    finally:
        await w.close()


def hpa_v1(name: str, cpu: int) -> dict:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 10,
            "targetCPUUtilizationPercentage": cpu,
        },
    }


def cpu_target(obj: dict) -> int:
    (metric,) = obj["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    return metric["resource"]["target"]["averageUtilization"]


async def test_hpa_v1_write_reaches_a_v2_webhook_as_v2(client, hooks) -> None:
    def check(review: dict) -> dict:
        return denied("cpu target above 80%") if cpu_target(review["request"]["object"]) > 80 else allowed()

    v2_rule = rule("autoscaling", "v2", "horizontalpodautoscalers")
    server = await hooks.validating(check, [v2_rule], name="hpa-v2")
    # an Exact webhook on v2 is not called for a v1 request
    exact = await hooks.validating(lambda r: allowed(), [v2_rule], name="hpa-exact", matchPolicy="Exact")
    await client.create(HPA_V1, hpa_v1("web", 50), NS)
    req = server.calls[0]["request"]
    assert req["kind"] == {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}
    assert req["resource"] == {
        "group": "autoscaling",
        "version": "v2",
        "resource": "horizontalpodautoscalers",
    }
    assert req["requestKind"] == {"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"}
    assert req["requestResource"] == {
        "group": "autoscaling",
        "version": "v1",
        "resource": "horizontalpodautoscalers",
    }
    assert req["object"]["apiVersion"] == "autoscaling/v2" and cpu_target(req["object"]) == 50
    assert "targetCPUUtilizationPercentage" not in req["object"]["spec"]
    assert exact.calls == []
    with pytest.raises(StatusError) as e:
        await client.create(HPA_V1, hpa_v1("hot", 95), NS)
    assert (
        e.value.message
        == 'admission webhook "hpa-v2.gangplane.test" denied the request: cpu target above 80%'
    )
    # an update: the old object is converted too
    await client.patch(HPA_V1, "web", {"spec": {"targetCPUUtilizationPercentage": 60}}, NS)
    req = server.calls[-1]["request"]
    assert cpu_target(req["oldObject"]) == 50 and cpu_target(req["object"]) == 60


async def test_mutating_webhook_patch_in_the_matched_version_is_stored(client, hooks) -> None:
    def lower(review: dict) -> dict:
        obj = review["request"]["object"]
        if cpu_target(obj) <= 70:
            return allowed()
        path = "/spec/metrics/0/resource/target/averageUtilization"
        return patched([{"op": "replace", "path": path, "value": 70}])

    await hooks.mutating(lower, [rule("autoscaling", "v2", "horizontalpodautoscalers")], name="cap")
    out = await client.create(HPA_V1, hpa_v1("web", 90), NS)
    assert out["apiVersion"] == "autoscaling/v1" and out["spec"]["targetCPUUtilizationPercentage"] == 70
    assert cpu_target(await client.get(HPA_V2, "web", NS)) == 70


async def test_policy_on_v2_sees_a_v1_write_as_v2(client) -> None:
    constraints = {
        "resourceRules": [
            {
                "apiGroups": ["autoscaling"],
                "apiVersions": ["v2"],
                "operations": ["CREATE"],
                "resources": ["horizontalpodautoscalers"],
            }
        ]
    }
    check = {
        "expression": "request.requestKind.version == 'v1' && request.kind.version == 'v2' && "
        "object.apiVersion == 'autoscaling/v2' && "
        "object.spec.metrics[0].resource.target.averageUtilization <= 80",
        "message": "cpu target above 80%",
    }
    await client.create(
        GVR(AR, "v1", "validatingadmissionpolicies"),
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "cpu"},
            "spec": {"matchConstraints": constraints, "validations": [check]},
        },
    )
    await client.create(
        GVR(AR, "v1", "validatingadmissionpolicybindings"),
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "cpu-binding"},
            "spec": {"policyName": "cpu", "validationActions": ["Deny"]},
        },
    )
    # a second policy matching the request's own version sees it in v1 (one request per matched version)
    v1_constraints = {"resourceRules": [{**constraints["resourceRules"][0], "apiVersions": ["v1"]}]}
    v1_check = {
        "expression": "object.apiVersion == 'autoscaling/v1' && request.kind.version == 'v1' && "
        "object.spec.targetCPUUtilizationPercentage > 0",
        "message": "not seen as v1",
    }
    await client.create(
        GVR(AR, "v1", "validatingadmissionpolicies"),
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "v1-view"},
            "spec": {"matchConstraints": v1_constraints, "validations": [v1_check]},
        },
    )
    await client.create(
        GVR(AR, "v1", "validatingadmissionpolicybindings"),
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "v1-view-binding"},
            "spec": {"policyName": "v1-view", "validationActions": ["Deny"]},
        },
    )
    await client.create(HPA_V1, hpa_v1("web", 50), NS)
    with pytest.raises(StatusError) as e:
        await client.create(HPA_V1, hpa_v1("hot", 90), NS)
    assert e.value.message.endswith("denied request: cpu target above 80%")


async def test_custom_resource_converted_by_the_conversion_webhook(client, hooks) -> None:
    conv = WebhookServer(conversion_handler).start()
    try:
        await client.create(CRDS, crd({"url": conv.url, "caBundle": conv.ca_bundle}))
        await established(client)
        v2_rule = rule("example.com", "v2", "widgets")
        seen = await hooks.validating(lambda r: allowed(), [v2_rule], name="widgets-v2")

        def double(review: dict) -> dict:
            replicas = review["request"]["object"]["spec"]["replicas"]
            return patched([{"op": "replace", "path": "/spec/replicas", "value": replicas * 2}])

        await hooks.mutating(double, [v2_rule], name="double")
        w = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "a"},
            "spec": {"size": "3"},
        }
        out = await client.create(V1, w, NS)
        # the mutating webhook saw replicas 3 (v2), doubled it; stored back in v1 as size "6"
        assert out["apiVersion"] == "example.com/v1" and out["spec"] == {"size": "6"}
        req = seen.calls[0]["request"]
        assert req["kind"] == {"group": "example.com", "version": "v2", "kind": "Widget"}
        assert req["requestKind"] == {"group": "example.com", "version": "v1", "kind": "Widget"}
        assert req["resource"]["version"] == "v2" and req["requestResource"]["version"] == "v1"
        assert req["object"]["apiVersion"] == "example.com/v2" and req["object"]["spec"] == {"replicas": 6}
        assert any(c["request"]["desiredAPIVersion"] == "example.com/v2" for c in conv.calls)
    finally:
        conv.stop()


def none_strategy_crd() -> dict:
    versions = [
        {
            "name": v,
            "served": True,
            "storage": v == "v1",
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
                }
            },
        }
        for v in ("v1", "v2")
    ]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "scope": "Namespaced",
            "versions": versions,
        },
    }


async def test_custom_resource_with_none_conversion_seen_in_the_matched_version(client, hooks) -> None:
    await client.create(CRDS, none_strategy_crd())

    def ok(o: dict | None) -> bool:
        conds = ((o or {}).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conds)

    await wait_for_object(client, CRDS, "gadgets.example.com", cond=ok)
    seen = await hooks.validating(
        lambda r: allowed(), [rule("example.com", "v2", "gadgets")], name="gadgets-v2"
    )
    g = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 2}}
    await client.create(GVR("example.com", "v1", "gadgets"), g, NS)
    req = seen.calls[0]["request"]
    assert req["object"]["apiVersion"] == "example.com/v2" and req["object"]["spec"] == {"size": 2}
    assert req["kind"]["version"] == "v2" and req["requestKind"]["version"] == "v1"
