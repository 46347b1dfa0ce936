"""ValidatingAdmissionPolicy and MutatingAdmissionPolicy on every write: kube's denial text, Warn as
warnings, params, match conditions, failurePolicy, mutations by ApplyConfiguration and JSONPatch, and
a policy refusing a StatefulSet's pods (the set reports FailedCreate, the gang stays unbound until
the binding goes away)."""

from __future__ import annotations

import pytest

from apiserver.client.interface import EVENTS, GVR, PODGROUPS, PODS, STATEFULSETS
from apiserver.errors import StatusError
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import (
    GANG,
    NS,
    start_statefulset_controller,
    sts_manifest,
    wait_single,
)
from tests.integration.podgroup_support import RACK
from tests.integration.scheduler_support import (
    create_nodes,
    node,
    node_name,
    start_node_agent,
    start_scheduler,
)

pytestmark = pytest.mark.anyio
AR = "admissionregistration.k8s.io"
VAP = GVR(AR, "v1", "validatingadmissionpolicies")
VAPB = GVR(AR, "v1", "validatingadmissionpolicybindings")
MAP = GVR(AR, "v1", "mutatingadmissionpolicies")
MAPB = GVR(AR, "v1", "mutatingadmissionpolicybindings")
CONFIGMAPS = GVR("", "v1", "configmaps")

TOPOLOGY_RULE = {
    "expression": "!has(object.spec.scheduling) || has(object.spec.scheduling.schedulingConstraints)",
    "message": "a StatefulSet with spec.scheduling must name a topology key",
}


def rules(group: str, resource: str, ops: tuple[str, ...] = ("CREATE", "UPDATE")) -> dict:
    return {
        "resourceRules": [
            {"apiGroups": [group], "apiVersions": ["v1"], "operations": list(ops), "resources": [resource]}
        ]
    }


async def vap(client, name: str, validations: list[dict], constraints: dict, **spec: object) -> None:
    body = {"matchConstraints": constraints, "validations": validations, **spec}
    await client.create(
        VAP,
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": body,
        },
    )


async def bind(client, name: str, policy: str, actions: list[str], **spec: object) -> None:
    await client.create(
        VAPB,
        {
            "apiVersion": f"{AR}/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": policy, "validationActions": actions, **spec},
        },
    )


def cm(name: str, labels: dict | None = None, **data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": data,
    }


async def test_vap_denies_statefulset_with_scheduling_but_no_topology(client) -> None:
    await vap(client, "gang-topology", [TOPOLOGY_RULE], rules("apps", "statefulsets"))
    await bind(client, "gang-topology-binding", "gang-topology", ["Deny"])
    with pytest.raises(StatusError) as e:
        await client.create(STATEFULSETS, sts_manifest("web", 2, GANG), NS)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert e.value.message == (
        "statefulsets.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'gang-topology' with binding "
        "'gang-topology-binding' denied request: a StatefulSet with spec.scheduling must name a topology key"
    )
    ok = sts_manifest("web", 2, {**GANG, "schedulingConstraints": {"topology": [{"key": RACK}]}})
    assert (await client.create(STATEFULSETS, ok, NS))["metadata"]["name"] == "web"
    # objects the policy does not match pass
    await client.create(STATEFULSETS, sts_manifest("plain", 1), NS)


async def test_vap_warn_creates_and_warns(cp) -> None:
    client = cp.client("warn-test")
    await vap(client, "gang-topology", [TOPOLOGY_RULE], rules("apps", "statefulsets"))
    await bind(client, "warn-only", "gang-topology", ["Warn", "Audit"])
    rd = cp.api.registry.get("apps", "v1", "statefulsets")
    result = cp.api.create(rd, NS, sts_manifest("web", 2, GANG))
    assert result.code == 201 and result.obj["metadata"]["name"] == "web"
    assert result.warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'gang-topology' with binding 'warn-only': "
        "a StatefulSet with spec.scheduling must name a topology key"
    ]


async def test_vap_message_expression_reason_variables_and_match_conditions(client) -> None:
    await vap(
        client,
        "max-keys",
        [
            {
                "expression": "variables.keys <= 2",
                "messageExpression": "'too many keys: ' + string(variables.keys)",
                "reason": "Forbidden",
            }
        ],
        rules("", "configmaps"),
        variables=[{"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"}],
        matchConditions=[
            {
                "name": "not-exempt",
                "expression": "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)",
            }
        ],
    )
    await bind(client, "max-keys", "max-keys", ["Deny"])
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("big", a="1", b="2", c="3"), NS)
    assert e.value.code == 403 and e.value.reason == "Forbidden"
    assert e.value.message.endswith("denied request: too many keys: 3")
    await client.create(CONFIGMAPS, cm("exempt", {"exempt": "yes"}, a="1", b="2", c="3"), NS)
    await client.create(CONFIGMAPS, cm("small", a="1"), NS)


async def test_vap_params_and_parameter_not_found_action(client) -> None:
    await vap(
        client,
        "allowed-env",
        [
            {
                "expression": "object.metadata.labels.env in params.data.allowed.split(',')",
                "message": "env not allowed",
            }
        ],
        rules("", "configmaps"),
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        matchConditions=[{"name": "has-env", "expression": "'env' in object.metadata.labels"}],
    )
    await bind(
        client,
        "allowed-env",
        "allowed-env",
        ["Deny"],
        paramRef={"name": "env-policy", "namespace": NS, "parameterNotFoundAction": "Deny"},
        matchResources={"objectSelector": {"matchExpressions": [{"key": "env", "operator": "Exists"}]}},
    )
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("a", {"env": "prod"}), NS)
    assert "no params found for policy binding with `Deny` parameterNotFoundAction" in e.value.message
    await client.create(CONFIGMAPS, cm("env-policy", allowed="dev,staging"), NS)
    await client.create(CONFIGMAPS, cm("b", {"env": "dev"}), NS)
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("c", {"env": "prod"}), NS)
    assert e.value.message.endswith("denied request: env not allowed")


async def test_vap_failure_policy_on_evaluation_error(client) -> None:
    await vap(client, "strict", [{"expression": "object.data.missing == 'x'"}], rules("", "configmaps"))
    await bind(client, "strict", "strict", ["Deny"])
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("x", a="1"), NS)
    assert (
        "expression 'object.data.missing == 'x'' resulted in error: no such key: missing" in e.value.message
    )
    await vap(
        client,
        "lenient",
        [{"expression": "object.data.other == 'x'"}],
        rules("", "secrets"),
        failurePolicy="Ignore",
    )
    await bind(client, "lenient", "lenient", ["Deny"])
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}}
    await client.create(GVR("", "v1", "secrets"), secret, NS)


async def test_binding_match_resources_narrow_the_policy(client) -> None:
    await vap(client, "no-cm", [{"expression": "false", "message": "no"}], rules("", "configmaps"))
    await bind(
        client,
        "only-labelled",
        "no-cm",
        ["Deny"],
        matchResources={"objectSelector": {"matchLabels": {"guarded": "true"}}},
    )
    await client.create(CONFIGMAPS, cm("free"), NS)
    with pytest.raises(StatusError):
        await client.create(CONFIGMAPS, cm("guarded", {"guarded": "true"}), NS)


async def test_policies_do_not_apply_to_admissionregistration_objects(client) -> None:
    await vap(
        client,
        "deny-all",
        [{"expression": "false"}],
        {
            "resourceRules": [
                {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
            ]
        },
    )
    await bind(client, "deny-all", "deny-all", ["Deny"])
    with pytest.raises(StatusError):
        await client.create(CONFIGMAPS, cm("x"), NS)
    # the policy can still be removed
    await client.delete(VAPB, "deny-all")
    await client.create(CONFIGMAPS, cm("x"), NS)


async def test_map_apply_configuration_and_json_patch(client) -> None:
    common = {"matchConstraints": rules("", "configmaps", ("CREATE",)), "reinvocationPolicy": "Never"}
    await client.create(
        MAP,
        {
            "apiVersion": f"{AR}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "team-label"},
            "spec": {
                **common,
                "mutations": [
                    {
                        "patchType": "ApplyConfiguration",
                        "applyConfiguration": {
                            "expression": 'Object{metadata: Object.metadata{labels: {"team": "gang"}}}'
                        },
                    }
                ],
            },
        },
    )
    await client.create(
        MAP,
        {
            "apiVersion": f"{AR}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": "stamp"},
            "spec": {
                **common,
                "mutations": [
                    {
                        "patchType": "JSONPatch",
                        "jsonPatch": {
                            "expression": '[JSONPatch{op: "add", path: "/data/stamped-by", value: object.metadata.name}]'
                        },
                    }
                ],
            },
        },
    )
    for name in ("team-label", "stamp"):
        await client.create(
            MAPB,
            {
                "apiVersion": f"{AR}/v1",
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": name},
                "spec": {"policyName": name},
            },
        )
    out = await client.create(CONFIGMAPS, cm("m", {"keep": "me"}, x="1"), NS)
    assert out["metadata"]["labels"] == {"keep": "me", "team": "gang"}
    assert out["data"] == {"x": "1", "stamped-by": "m"}


async def test_policy_denying_statefulset_pods_gives_failed_create_and_unbound_gang(cp, client) -> None:
    await create_nodes(client, [node("n1", "8")])
    await start_node_agent(cp)
    await start_statefulset_controller(cp)
    await start_scheduler(cp)
    await vap(
        client,
        "no-db-pods",
        [{"expression": "object.metadata.labels.app != 'db'", "message": "db pods are frozen"}],
        rules("", "pods", ("CREATE",)),
    )
    await bind(client, "no-db-pods", "no-db-pods", ["Deny"])
    await client.create(STATEFULSETS, sts_manifest("db", 3, GANG), NS)

    def failed_create(items: list) -> bool:
        return any(
            e.get("reason") == "FailedCreate"
            and e["involvedObject"].get("name") == "db"
            and "ValidatingAdmissionPolicy 'no-db-pods' with binding 'no-db-pods' denied request: db pods are frozen"
            in e.get("message", "")
            for e in items
        )

    events = await wait_for_list(client, EVENTS, NS, failed_create, 20)
    assert failed_create(events)
    pg = await wait_single(client, PODGROUPS)
    assert (await client.list(PODS, NS, label_selector="app=db"))["items"] == []
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3

    await client.delete(VAPB, "no-db-pods")

    def all_bound(items: list) -> bool:
        return len(items) == 3 and all(node_name(p) for p in items)

    await wait_for_list(client, PODS, NS, all_bound, 30, label_selector="app=db")


async def test_map_mutation_errors_follow_failure_policy(client) -> None:
    def policy(name: str, expression: str, failure: str) -> dict:
        return {
            "apiVersion": f"{AR}/v1",
            "kind": "MutatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "matchConstraints": rules("", "configmaps", ("CREATE",)),
                "reinvocationPolicy": "Never",
                "failurePolicy": failure,
                "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}],
            },
        }

    # removing a path that is not there fails the patch
    await client.create(MAP, policy("broken", '[JSONPatch{op: "remove", path: "/data/missing"}]', "Fail"))
    await client.create(
        MAPB,
        {
            "apiVersion": f"{AR}/v1",
            "kind": "MutatingAdmissionPolicyBinding",
            "metadata": {"name": "broken"},
            "spec": {"policyName": "broken"},
        },
    )
    with pytest.raises(StatusError) as e:
        await client.create(CONFIGMAPS, cm("x", a="1"), NS)
    assert e.value.code == 422
    assert "MutatingAdmissionPolicy 'broken' with binding 'broken' denied request: " in e.value.message
    await client.patch(MAP, "broken", {"spec": {"failurePolicy": "Ignore"}})
    assert (await client.create(CONFIGMAPS, cm("x", a="1"), NS))["data"] == {"a": "1"}


async def test_vap_authorizer_checks_the_requesting_user() -> None:
    from apiserver.api.users import UserInfo
    from apiserver.registry.generic import WriteOptions
    from gangplane.controlplane import ControlPlane, ControlPlaneOptions

    cp = ControlPlane(ControlPlaneOptions(authorization_mode="RBAC"))
    try:
        client = cp.client("test")
        await vap(
            client,
            "big-needs-scale",
            [
                {
                    "expression": "object.data.size() <= 1 || authorizer.group('').resource('configmaps')"
                    ".namespace(request.namespace).check('delete').allowed()",
                    "message": "only who may delete ConfigMaps may create big ones",
                    "reason": "Forbidden",
                }
            ],
            rules("", "configmaps", ("CREATE",)),
        )
        await bind(client, "big-needs-scale", "big-needs-scale", ["Deny"])
        rd = cp.api.registry.get("", "v1", "configmaps")
        alice = UserInfo("alice", ("system:authenticated",))
        cp.api.create(rd, NS, cm("small", a="1"), WriteOptions(user=alice))
        with pytest.raises(StatusError) as e:
            cp.api.create(rd, NS, cm("big", a="1", b="2"), WriteOptions(user=alice))
        assert e.value.code == 403 and e.value.message.endswith(
            "only who may delete ConfigMaps may create big ones"
        )
        # the loopback user (system:masters) may
        assert cp.api.create(rd, NS, cm("big", a="1", b="2")).code == 201
    finally:
        await cp.stop()
