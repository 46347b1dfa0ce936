"""Validating and mutating admission webhooks over HTTPS (url + caBundle, or a Service mapped to the
host): AdmissionReview v1 fields, kube's denial and failure messages, failurePolicy Fail/Ignore with
the server stopped, JSONPatch, warnings, matching, reinvocation, dry run, and a slow webhook that
never holds up other clients."""

from __future__ import annotations

import asyncio
import threading

import pytest

from apiserver.client.interface import EVENTS, GVR, PODGROUPS, PODS, STATEFULSETS
from apiserver.errors import StatusError
from gangplane.testing.webhook import (
    MUTATING,
    VALIDATING,
    Webhooks,
    WebhookServer,
    allowed,
    denied,
    patched,
    rule,
    webhook_configuration,
)
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import (
    GANG,
    NS,
    start_statefulset_controller,
    sts_manifest,
    wait_single,
)
from tests.integration.scheduler_support import (
    create_nodes,
    node,
    node_name,
    start_node_agent,
    start_scheduler,
)

pytestmark = pytest.mark.anyio
CONFIGMAPS = GVR("", "v1", "configmaps")
SERVICES = GVR("", "v1", "services")
CM_RULE = rule("", "v1", "configmaps")


def cm(name: str, labels: dict | None = None, **data: str) -> dict:
    md: dict = {"name": name}
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}


@pytest.fixture
async def hooks(client):
    w = Webhooks(client)
    try:
        yield w
    finally:
        await w.close()


def deny_forbidden_key(review: dict) -> dict:
    data = (review["request"].get("object") or {}).get("data") or {}
    return denied("the key 'forbidden' is not allowed") if "forbidden" in data else allowed()


async def test_validating_webhook_denies_with_its_message(client, hooks) -> None:
    server = await hooks.validating(deny_forbidden_key, [CM_RULE], name="cm-check")
    await client.create(CONFIGMAPS, cm("fine", a="1"), NS)
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("bad", forbidden="1"), NS)
    assert e.value.code == 403 and e.value.reason == "Forbidden"
    assert e.value.message == (
        "admission webhook \"cm-check.gangplane.test\" denied the request: the key 'forbidden' is not allowed"
    )
    req = server.calls[0]["request"]
    assert server.calls[0]["apiVersion"] == "admission.k8s.io/v1"
    assert req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert req["requestKind"] == req["kind"] and req["requestResource"] == req["resource"]
    assert (req["name"], req["namespace"], req["operation"]) == ("fine", NS, "CREATE")
    assert req["userInfo"]["username"] == "system:apiserver"
    assert req["object"]["data"] == {"a": "1"} and req["oldObject"] is None
    assert req["dryRun"] is False
    assert req["options"]["kind"] == "CreateOptions"
    assert req["uid"]


async def test_update_and_delete_reviews_carry_old_object(client, hooks) -> None:
    server = await hooks.validating(
        lambda r: allowed(), [rule("", "v1", "configmaps", ("UPDATE", "DELETE"))], name="seen"
    )
    await client.create(CONFIGMAPS, cm("x", a="1"), NS)
    assert server.calls == []
    await client.patch(CONFIGMAPS, "x", {"data": {"a": "2"}}, NS)
    await client.delete(CONFIGMAPS, "x", NS)
    update, delete = (c["request"] for c in server.calls)
    assert update["operation"] == "UPDATE" and update["options"]["kind"] == "PatchOptions"
    assert update["oldObject"]["data"] == {"a": "1"} and update["object"]["data"] == {"a": "2"}
    assert delete["operation"] == "DELETE" and delete["object"] is None
    assert delete["oldObject"]["data"] == {"a": "2"} and delete["options"]["kind"] == "DeleteOptions"


async def test_failure_policy_with_the_server_stopped(client) -> None:
    fail = WebhookServer(lambda r: allowed()).start()
    ignore = WebhookServer(lambda r: allowed()).start()
    await client.create(
        VALIDATING, webhook_configuration("Validating", "strict", fail, [CM_RULE], failurePolicy="Fail")
    )
    await client.create(
        VALIDATING,
        webhook_configuration(
            "Validating", "lenient", ignore, [rule("", "v1", "secrets")], failurePolicy="Ignore"
        ),
    )
    url = fail.url
    fail.stop()
    ignore.stop()
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("x"), NS)
    assert e.value.code == 500 and e.value.reason == "InternalError"
    assert e.value.message == (
        'Internal error occurred: failed calling webhook "strict.gangplane.test": failed to call webhook: '
        f'Post "{url}?timeout=10s": dial tcp {fail.address}: connect: connection refused'
    )
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}}
    assert (await client.create(GVR("", "v1", "secrets"), secret, NS))["metadata"]["name"] == "s"


async def test_wrong_ca_bundle_is_a_failed_call(client) -> None:
    server = WebhookServer(lambda r: allowed()).start()
    other = WebhookServer(lambda r: allowed())
    try:
        cfg = webhook_configuration("Validating", "wrong-ca", server, [CM_RULE])
        cfg["webhooks"][0]["clientConfig"]["caBundle"] = other.ca_bundle
        await client.create(VALIDATING, cfg)
        with pytest.raises(StatusError) as e:
            await client.create(CONFIGMAPS, cm("x"), NS)
        assert "x509: certificate signed by unknown authority" in e.value.message
        assert server.calls == []
    finally:
        server.stop()
        other.stop()


async def test_mutating_webhook_patch_warnings_and_reinvocation(client, hooks) -> None:
    def add_label(review: dict) -> dict:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        if "stamped" in labels:
            return allowed()
        op = {"op": "add", "path": "/metadata/labels", "value": {**labels, "stamped": "yes"}}
        return patched([op], warnings=["stamped by the test webhook"])

    def add_data(review: dict) -> dict:
        return patched([{"op": "add", "path": "/data/extra", "value": "1"}])

    first = await hooks.mutating(add_label, [CM_RULE], name="a-label", reinvocationPolicy="IfNeeded")
    await hooks.mutating(add_data, [CM_RULE], name="b-data")
    out = await client.create(CONFIGMAPS, cm("m", x="1"), NS)
    assert out["metadata"]["labels"] == {"stamped": "yes"}
    assert out["data"] == {"x": "1", "extra": "1"}
    # b-data changed the object after a-label ran: a-label (IfNeeded) saw it once more
    assert len(first.calls) == 2
    assert first.calls[1]["request"]["object"]["data"]["extra"] == "1"
    assert first.calls[0]["request"]["uid"] == first.calls[1]["request"]["uid"]


async def test_match_conditions_selectors_and_dry_run(client, hooks) -> None:
    server = await hooks.validating(
        lambda r: denied("blocked"),
        [CM_RULE],
        name="guard",
        objectSelector={"matchLabels": {"guarded": "yes"}},
        matchConditions=[{"name": "not-system", "expression": "!request.name.startsWith('system-')"}],
        sideEffects="Some" if False else "None",
    )
    await client.create(CONFIGMAPS, cm("free"), NS)
    await client.create(CONFIGMAPS, cm("system-x", {"guarded": "yes"}), NS)
    with pytest.raises(StatusError):
        await client.create(CONFIGMAPS, cm("y", {"guarded": "yes"}), NS)
    assert len(server.calls) == 1
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("z", {"guarded": "yes"}), NS, dry_run=True)
    assert e.value.message.endswith("denied the request: blocked")
    assert server.calls[-1]["request"]["dryRun"] is True


async def test_service_reference_resolved_through_the_address_annotation(client) -> None:
    server = WebhookServer(deny_forbidden_key, service=("webhooks", "cm-checker")).start()
    try:
        await client.create(GVR("", "v1", "namespaces"), {"metadata": {"name": "webhooks"}})
        svc = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "cm-checker",
                "annotations": {"webhook.gangplane.io/address": server.address},
            },
            "spec": {"ports": [{"port": 443, "targetPort": 9443}], "selector": {"app": "cm-checker"}},
        }
        await client.create(SERVICES, svc, "webhooks")
        await client.create(VALIDATING, webhook_configuration("Validating", "svc-check", server, [CM_RULE]))
        with pytest.raises(StatusError) as e:
            await client.create(CONFIGMAPS, cm("bad", forbidden="1"), NS)
        assert "the key 'forbidden' is not allowed" in e.value.message
        # the certificate names cm-checker.webhooks.svc, not 127.0.0.1: verified by service name
        assert len(server.calls) == 1
    finally:
        server.stop()


async def test_a_slow_webhook_does_not_block_other_clients(cp, client, hooks) -> None:
    release = threading.Event()

    def slow(review: dict) -> dict:
        release.wait(10)
        return allowed()

    await hooks.validating(slow, [rule("", "v1", "configmaps", ("CREATE",))], name="slow")
    held = asyncio.ensure_future(client.create(CONFIGMAPS, cm("held"), NS))
    other = cp.client("other")
    # another client reads and writes meanwhile
    node_obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-other"}}
    assert (await other.create(GVR("", "v1", "nodes"), node_obj))["metadata"]["name"] == "n-other"
    assert not held.done()
    release.set()
    assert (await held)["metadata"]["name"] == "held"


async def test_webhook_denying_statefulset_pods_then_removed(cp, client, hooks) -> None:
    await create_nodes(client, [node("n1", "8")])
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)

    def no_db(review: dict) -> dict:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        return denied("db pods are frozen") if labels.get("app") == "db" else allowed()

    await hooks.validating(no_db, [rule("", "v1", "pods", ("CREATE",))], name="freeze")
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)

    def failed_create(items: list) -> bool:
        return any(
            e.get("reason") == "FailedCreate"
            and 'admission webhook "freeze.gangplane.test" denied the request: db pods are frozen'
            in e.get("message", "")
            for e in items
        )

    await wait_for_list(client, EVENTS, NS, failed_create, 20)
    await wait_single(client, PODGROUPS)
    assert (await client.list(PODS, NS, label_selector="app=db"))["items"] == []
    await client.delete(VALIDATING, "freeze")

    def all_bound(items: list) -> bool:
        return len(items) == 3 and all(node_name(p) for p in items)

    await wait_for_list(client, PODS, NS, all_bound, 30, label_selector="app=db")


async def test_webhooks_skip_admissionregistration_objects(client, hooks) -> None:
    await hooks.validating(
        lambda r: denied("no"),
        [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]}],
        name="deny-all",
    )
    with pytest.raises(StatusError):
        await client.create(CONFIGMAPS, cm("x"), NS)
    # its own configuration can still be changed and removed
    await client.patch(VALIDATING, "deny-all", {"metadata": {"labels": {"a": "b"}}})
    await client.delete(VALIDATING, "deny-all")
    await client.create(CONFIGMAPS, cm("x"), NS)


async def test_mutating_configuration_defaults_reach_the_webhook(client, hooks) -> None:
    await hooks.mutating(lambda r: allowed(), [CM_RULE], name="noop")
    stored = await client.get(MUTATING, "noop")
    assert stored["webhooks"][0]["reinvocationPolicy"] == "Never"


async def test_timeout_seconds_bounds_a_call(client, hooks) -> None:
    release = threading.Event()

    def stuck(review: dict) -> dict:
        release.wait(10)
        return allowed()

    server = await hooks.validating(
        stuck, [rule("", "v1", "configmaps", ("CREATE",))], name="stuck", timeoutSeconds=1
    )
    try:
        with pytest.raises(StatusError) as e:
            await client.create(CONFIGMAPS, cm("late"), NS)
        assert e.value.message == (
            'Internal error occurred: failed calling webhook "stuck.gangplane.test": failed to call webhook: '
            f'Post "{server.url}?timeout=1s": context deadline exceeded'
        )
    finally:
        release.set()


async def test_mutating_webhook_can_deny_a_delete(client, hooks) -> None:
    def keep(review: dict) -> dict:
        req = review["request"]
        if req["operation"] == "DELETE" and (req["oldObject"]["metadata"].get("labels") or {}).get("keep"):
            return denied("this ConfigMap is kept")
        return allowed()

    await hooks.mutating(keep, [rule("", "v1", "configmaps", ("DELETE",))], name="keeper")
    await client.create(CONFIGMAPS, cm("kept", {"keep": "yes"}), NS)
    await client.create(CONFIGMAPS, cm("gone"), NS)
    with pytest.raises(StatusError) as e:
        await client.delete(CONFIGMAPS, "kept", NS)
    assert e.value.message.endswith("denied the request: this ConfigMap is kept")
    await client.delete(CONFIGMAPS, "gone", NS)
    assert (await client.get(CONFIGMAPS, "kept", NS))["metadata"]["name"] == "kept"


async def test_an_asgi_app_serves_the_webhook(client, hooks) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def validate(request: Request) -> JSONResponse:
        review = await request.json()
        uid = review["request"]["uid"]
        ok = review["request"]["object"]["metadata"]["name"] != "nope"
        response = {"uid": uid, "allowed": ok}
        if not ok:
            response["status"] = {"code": 422, "reason": "Invalid", "message": "that name is taken"}
        return JSONResponse(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        )

    app = Starlette(routes=[Route("/validate", validate, methods=["POST"])])
    await hooks.validating(
        app, [rule("", "v1", "configmaps", ("CREATE",))], name="asgi", asgi=True, path="/validate"
    )
    await client.create(CONFIGMAPS, cm("fine"), NS)
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("nope"), NS)
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert e.value.message == 'admission webhook "asgi.gangplane.test" denied the request: that name is taken'


async def test_policy_reinvoked_after_a_webhook_changed_the_object(client, hooks) -> None:
    ar = "admissionregistration.k8s.io"
    await client.create(
        GVR(ar, "v1", "mutatingadmissionpolicies"),
        {
            "apiVersion": f"{ar}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "count-keys"},
            "spec": {
                "matchConstraints": {"resourceRules": [CM_RULE]},
                "reinvocationPolicy": "IfNeeded",
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": 'Object{metadata: Object.metadata{labels: {"keys": string(size(object.data))}}}'
                        },
                    }
                ],
            },
        },
    )
    await client.create(
        GVR(ar, "v1", "mutatingadmissionpolicybindings"),
        {
            "apiVersion": f"{ar}/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "count-keys"},
            "spec": {"policyName": "count-keys"},
        },
    )
    # the policy runs before webhooks; the webhook adds a key after it, so it is reinvoked
    await hooks.mutating(
        lambda r: patched([{"op": "add", "path": "/data/added", "value": "1"}]), [CM_RULE], name="add"
    )
    out = await client.create(CONFIGMAPS, cm("r", a="1"), NS)
    assert out["data"] == {"a": "1", "added": "1"}
    assert out["metadata"]["labels"] == {"keys": "2"}


async def test_service_reference_resolved_through_the_server_option() -> None:
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    server = WebhookServer(deny_forbidden_key, service=("ops", "checker"), path="/check").start()
    cp = ControlPlane(ControlPlaneOptions(webhook_service_addresses={"ops/checker": server.address}))
    try:
        client = cp.client("test")
        cfg = webhook_configuration("Validating", "by-option", server, [CM_RULE])
        assert cfg["webhooks"][0]["clientConfig"]["service"] == {
            "namespace": "ops",
            "name": "checker",
            "port": 443,
            "path": "/check",
        }
        await client.create(VALIDATING, cfg)  # no Service object needed: the option names the address
        with pytest.raises(StatusError) as e:
            await client.create(CONFIGMAPS, cm("bad", forbidden="1"), NS)
        assert "the key 'forbidden' is not allowed" in e.value.message
        assert server.calls[0]["request"]["name"] == "bad"
    finally:
        await cp.stop()
        server.stop()
