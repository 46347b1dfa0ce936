"""Writes through ``/scale`` (kubectl scale, the HPA controller) reach admission as kube sends them:
the parent resource with subResource ``scale``, kind ``autoscaling/v1`` Scale, and the Scale
objects as ``object``/``oldObject``; rules must name ``statefulsets/scale`` (``statefulsets``
alone does not match), for webhooks and admission policies alike."""

from __future__ import annotations

import pytest

from apiserver.client.interface import GVR, STATEFULSETS
from apiserver.errors import StatusError
from gangplane.testing.webhook import Webhooks, allowed, denied, patched, rule
from tests.integration.kep6277_support import NS, sts_manifest

pytestmark = pytest.mark.anyio
AR = "admissionregistration.k8s.io"
VAP = GVR(AR, "v1", "validatingadmissionpolicies")
VAPB = GVR(AR, "v1", "validatingadmissionpolicybindings")
MAP = GVR(AR, "v1", "mutatingadmissionpolicies")
MAPB = GVR(AR, "v1", "mutatingadmissionpolicybindings")
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
STS_RESOURCE = {"group": "apps", "version": "v1", "resource": "statefulsets"}


@pytest.fixture
async def hooks(client):
    w = Webhooks(client)
    try:
        yield w
    finally:
        await w.close()


def scale_body(replicas: int) -> dict:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": replicas},
    }


def at_most_five(review: dict) -> dict:
    replicas = review["request"]["object"]["spec"].get("replicas", 0)
    return denied("at most 5 replicas") if replicas > 5 else allowed()


async def test_scale_write_reaches_webhooks_as_the_scale_subresource(client, hooks) -> None:
    await client.create(STATEFULSETS, sts_manifest("web", 2), NS)
    scale_hook = await hooks.validating(
        at_most_five, [rule("apps", "v1", "statefulsets/scale", ("UPDATE",))], name="scale-check"
    )
    main_hook = await hooks.validating(
        lambda r: allowed(), [rule("apps", "v1", "statefulsets", ("UPDATE",))], name="main-only"
    )
    out = await client.update_subresource(STATEFULSETS, "web", "scale", scale_body(4), NS)
    assert out["kind"] == "Scale" and out["spec"]["replicas"] == 4
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["replicas"] == 4
    # a rule on the main resource alone does not match a write through /scale
    assert main_hook.calls == []
    req = scale_hook.calls[0]["request"]
    assert req["kind"] == SCALE_KIND and req["requestKind"] == SCALE_KIND
    assert req["resource"] == STS_RESOURCE and req["requestResource"] == STS_RESOURCE
    assert req["subResource"] == "scale" and req["requestSubResource"] == "scale"
    assert (req["name"], req["namespace"], req["operation"]) == ("web", NS, "UPDATE")
    assert req["object"]["kind"] == "Scale" and req["object"]["spec"] == {"replicas": 4}
    assert req["oldObject"]["kind"] == "Scale" and req["oldObject"]["spec"] == {"replicas": 2}
    assert req["oldObject"]["status"]["selector"] == "app=web"
    assert req["options"]["kind"] == "UpdateOptions"

    # kubectl scale sends a merge patch: the webhook sees the patched Scale and can deny it
    with pytest.raises(StatusError) as e:
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 9}}, NS, subresource="scale")
    assert e.value.code == 403
    assert e.value.message == (
        'admission webhook "scale-check.gangplane.test" denied the request: at most 5 replicas'
    )
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["replicas"] == 4
    req = scale_hook.calls[-1]["request"]
    assert req["options"]["kind"] == "PatchOptions" and req["object"]["spec"] == {"replicas": 9}
    # a write of the StatefulSet itself is not a scale write
    calls = len(scale_hook.calls)
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 7}}, NS)
    assert len(scale_hook.calls) == calls and len(main_hook.calls) == 1


async def test_mutating_webhook_patches_the_scale(client, hooks) -> None:
    await client.create(STATEFULSETS, sts_manifest("web", 1), NS)

    def cap(review: dict) -> dict:
        # ``statefulsets/*`` matches the StatefulSet too (as kube's rule matcher): patch Scales only
        if review["request"]["object"]["kind"] != "Scale":
            return allowed()
        if review["request"]["object"]["spec"].get("replicas", 0) > 3:
            return patched([{"op": "replace", "path": "/spec/replicas", "value": 3}])
        return allowed()

    await hooks.mutating(cap, [rule("apps", "v1", "statefulsets/*", ("UPDATE",))], name="cap")
    out = await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 8}}, NS, subresource="scale")
    assert out["spec"]["replicas"] == 3
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["replicas"] == 3
    # the same webhook on the StatefulSet itself leaves it alone
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 8}}, NS)
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["replicas"] == 8


async def _policy(client, kind: str, name: str, resources: list[str], body: dict) -> None:
    gvr, bgvr = (VAP, VAPB) if kind == "Validating" else (MAP, MAPB)
    constraints = {
        "resourceRules": [
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": resources}
        ]
    }
    await client.create(
        gvr,
        {
            "apiVersion": f"{AR}/v1",
            "kind": f"{kind}AdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": constraints, **body},
        },
    )
    bspec: dict = {"policyName": name}
    if kind == "Validating":
        bspec["validationActions"] = ["Deny"]
    await client.create(
        bgvr,
        {
            "apiVersion": f"{AR}/v1",
            "kind": f"{kind}AdmissionPolicyBinding",
            "metadata": {"name": f"{name}-binding"},
            "spec": bspec,
        },
    )


async def test_admission_policies_match_statefulsets_scale(client) -> None:
    await client.create(STATEFULSETS, sts_manifest("web", 2), NS)
    check = {
        "expression": "request.subResource == 'scale' && object.kind == 'Scale' && "
        "object.spec.replicas <= oldObject.spec.replicas + 2",
        "message": "grow by at most 2",
    }
    await _policy(client, "Validating", "scale-step", ["statefulsets/scale"], {"validations": [check]})
    # a policy on the main resource only would deny every update: it never sees scale writes
    never = {"expression": "false", "message": "main resource updates are frozen"}
    await _policy(client, "Validating", "frozen", ["statefulsets"], {"validations": [never]})
    await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 4}}, NS, subresource="scale")
    with pytest.raises(StatusError) as e:
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 7}}, NS, subresource="scale")
    assert e.value.code == 422
    assert e.value.message == (
        "statefulsets.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'scale-step' with binding "
        "'scale-step-binding' denied request: grow by at most 2"
    )
    with pytest.raises(StatusError) as e:
        await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 5}}, NS)
    assert "main resource updates are frozen" in e.value.message
    # a MutatingAdmissionPolicy on statefulsets/scale edits the Scale (a JSON patch on its spec)
    mutation = {
        "patchType": "JSONPatch",
        "jsonPatch": {
            "expression": 'object.spec.replicas % 2 == 1 ? [JSONPatch{op: "replace", path: "/spec/replicas", '
            "value: object.spec.replicas + 1}] : []"
        },
    }
    await _policy(
        client,
        "Mutating",
        "even",
        ["statefulsets/scale"],
        {"mutations": [mutation], "reinvocationPolicy": "Never"},
    )
    out = await client.patch(STATEFULSETS, "web", {"spec": {"replicas": 5}}, NS, subresource="scale")
    assert out["spec"]["replicas"] == 6
    assert (await client.get(STATEFULSETS, "web", NS))["spec"]["replicas"] == 6
