"""``--authorization-mode=RBAC`` over HTTP: decisions, escalation, impersonation, bound tokens.

An in-process control plane serves HTTP behind its front door (a static admin token plus bound
service-account tokens) and clients drive it as users would: each assertion is a status code
and body a kube-apiserver in RBAC mode would give.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from apiserver.api.users import ADMIN
from apiserver.client.interface import GVR
from apiserver.server.frontdoor import FrontDoorPolicy, static_tokens
from controllers.clusterroleaggregation import NAME as AGGREGATION
from controllers.clusterroleaggregation import new_clusterrole_aggregation_controller
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions, default_components
from tests.helpers import wait_for_object

pytestmark = pytest.mark.anyio
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ADMIN_TOKEN = "admin-token-for-tests-0123456789abcdef"
SA_X = "system:serviceaccount:default:x"


@dataclass
class Server:
    cp: ControlPlane
    http: httpx.AsyncClient

    async def call(self, method: str, path: str, token: str = ADMIN_TOKEN, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", **kw.pop("headers", {})}
        return await self.http.request(method, path, headers=headers, **kw)

    async def ok(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = await self.call(method, path, **kw)
        assert r.status_code < 300, r.text
        return r.json()

    async def token(self, sa: str, ns: str = "default", spec: dict[str, Any] | None = None) -> str:
        body = await self.ok(
            "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token", json={"spec": spec or {}}
        )
        return body["status"]["token"]

    async def service_account_with_role(
        self, name: str, rules: list[dict[str, Any]], ns: str = "default"
    ) -> str:
        await self.ok("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": name}})
        await self.ok(
            "POST", f"{RBAC}/namespaces/{ns}/roles", json={"metadata": {"name": name}, "rules": rules}
        )
        await self.ok(
            "POST",
            f"{RBAC}/namespaces/{ns}/rolebindings",
            json={
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name}],
            },
        )
        return await self.token(name, ns)


async def _serve(mode: str, anonymous: bool = False) -> AsyncIterator[Server]:
    cp = ControlPlane(
        ControlPlaneOptions(gates=FeatureGate(), authorization_mode=mode, bookmark_interval=0.5)
    )
    url = await cp.serve_http(
        "127.0.0.1", 0, front_door=FrontDoorPolicy([static_tokens({ADMIN_TOKEN: ADMIN})], anonymous=anonymous)
    )
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        try:
            yield Server(cp, http)
        finally:
            await cp.stop()


@pytest.fixture
async def rbac() -> AsyncIterator[Server]:
    async for s in _serve("RBAC"):
        yield s


POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
POD_READER = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]


async def test_a_service_account_may_do_what_its_role_allows_and_nothing_else(rbac: Server) -> None:
    token = await rbac.service_account_with_role("x", POD_READER)
    listed = await rbac.call("GET", "/api/v1/namespaces/default/pods", token)
    assert listed.status_code == 200 and listed.json()["kind"] == "PodList"
    created = await rbac.call("POST", "/api/v1/namespaces/default/pods", token, json=POD)
    assert created.status_code == 403
    assert created.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'pods is forbidden: User "{SA_X}" cannot create resource "pods" in API group "" in the namespace "default"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    other_ns = await rbac.call("GET", "/api/v1/namespaces/kube-system/pods", token)
    assert other_ns.status_code == 403
    nodes = await rbac.call("GET", "/api/v1/nodes", token)
    assert nodes.json()["message"] == (
        f'nodes is forbidden: User "{SA_X}" cannot list resource "nodes" in API group "" at the cluster scope'
    )
    log = await rbac.call("GET", "/api/v1/namespaces/default/pods/p/log", token)
    assert log.json()["message"] == (
        f'pods "p" is forbidden: User "{SA_X}" cannot get resource "pods/log" in API group "" in the namespace "default"'
    )
    # system:discovery and system:public-info-viewer hold for every authenticated user; /metrics does not
    assert (await rbac.call("GET", "/apis", token)).status_code == 200
    assert (await rbac.call("GET", "/version", token)).status_code == 200
    metrics = await rbac.call("GET", "/metrics", token)
    assert metrics.status_code == 403 and metrics.json()["message"] == (
        f'forbidden: User "{SA_X}" cannot get path "/metrics"'
    )
    assert (await rbac.call("GET", "/api/v1/nodes")).status_code == 200  # the kubeconfig user: cluster-admin


async def test_resource_names_restrict_gets_and_single_object_lists(rbac: Server) -> None:
    for name in ("a", "b"):
        await rbac.ok("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": name}})
    token = await rbac.service_account_with_role(
        "cm",
        [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "verbs": ["get", "list", "watch"],
                "resourceNames": ["a"],
            }
        ],
    )
    assert (await rbac.call("GET", "/api/v1/namespaces/default/configmaps/a", token)).status_code == 200
    assert (await rbac.call("GET", "/api/v1/namespaces/default/configmaps/b", token)).status_code == 403
    assert (await rbac.call("GET", "/api/v1/namespaces/default/configmaps", token)).status_code == 403
    one = await rbac.call(
        "GET", "/api/v1/namespaces/default/configmaps", token, params={"fieldSelector": "metadata.name=a"}
    )
    assert one.status_code == 200 and [i["metadata"]["name"] for i in one.json()["items"]] == ["a"]


async def test_subresource_rules(rbac: Server) -> None:
    await rbac.ok("POST", "/api/v1/namespaces/default/pods", json=POD)
    token = await rbac.service_account_with_role(
        "st", [{"apiGroups": [""], "resources": ["pods/status"], "verbs": ["get", "patch"]}]
    )
    assert (await rbac.call("GET", "/api/v1/namespaces/default/pods/p/status", token)).status_code == 200
    assert (await rbac.call("GET", "/api/v1/namespaces/default/pods/p", token)).status_code == 403


async def test_aggregated_cluster_roles_grant_their_gathered_rules(rbac: Server) -> None:
    rbac.cp.register(AGGREGATION, new_clusterrole_aggregation_controller)
    await rbac.cp.start_component(AGGREGATION)
    await wait_for_object(
        rbac.cp.client("test"),
        GVR("rbac.authorization.k8s.io", "v1", "clusterroles"),
        "view",
        cond=lambda o: bool(o and o.get("rules")),
    )
    await rbac.ok("POST", "/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "viewer"}})
    await rbac.ok(
        "POST",
        f"{RBAC}/namespaces/default/rolebindings",
        json={
            "metadata": {"name": "viewer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer"}],
        },
    )
    token = await rbac.token("viewer")
    assert (await rbac.call("GET", "/apis/apps/v1/namespaces/default/deployments", token)).status_code == 200
    assert (await rbac.call("GET", "/api/v1/namespaces/default/secrets", token)).status_code == 403


async def test_escalation_is_refused_unless_the_writer_holds_the_rules_or_escalate_bind(rbac: Server) -> None:
    writer = [
        *POD_READER,
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["roles", "rolebindings"],
            "verbs": ["create", "patch"],
        },
    ]
    token = await rbac.service_account_with_role("w", writer)
    held = {"metadata": {"name": "reader"}, "rules": POD_READER}
    assert (await rbac.call("POST", f"{RBAC}/namespaces/default/roles", token, json=held)).status_code == 201
    more = {
        "metadata": {"name": "creator"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}],
    }
    refused = await rbac.call("POST", f"{RBAC}/namespaces/default/roles", token, json=more)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'roles.rbac.authorization.k8s.io "creator" is forbidden: user "system:serviceaccount:default:w" '
        '(groups=["system:serviceaccounts" "system:serviceaccounts:default" "system:authenticated"]) is attempting '
        'to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["create"]}'
    )
    assert refused.json()["details"] == {
        "name": "creator",
        "group": "rbac.authorization.k8s.io",
        "kind": "roles",
    }
    # widening a held role by patch is the same escalation
    widened = await rbac.call(
        "PATCH",
        f"{RBAC}/namespaces/default/roles/reader",
        token,
        json={"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "delete"]}]},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert (
        widened.status_code == 403 and "is attempting to grant RBAC permissions" in widened.json()["message"]
    )
    # binding a role the writer does not hold is refused; binding one it holds is not
    await rbac.ok("POST", f"{RBAC}/namespaces/default/roles", json=more)
    binding = {
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "creator"},
        "subjects": [{"kind": "ServiceAccount", "name": "w"}],
    }
    refused = await rbac.call("POST", f"{RBAC}/namespaces/default/rolebindings", token, json=binding)
    assert refused.status_code == 403
    assert refused.json()["message"].startswith(
        'rolebindings.rbac.authorization.k8s.io "b" is forbidden: user '
    )
    held_binding = {
        **binding,
        "metadata": {"name": "ok"},
        "roleRef": {**binding["roleRef"], "name": "reader"},
    }
    assert (
        await rbac.call("POST", f"{RBAC}/namespaces/default/rolebindings", token, json=held_binding)
    ).status_code == 201
    # with the bind verb on that role, the binding goes through (and with escalate, the role)
    await rbac.ok(
        "POST",
        f"{RBAC}/namespaces/default/roles",
        json={
            "metadata": {"name": "binder"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["roles"],
                    "verbs": ["bind", "escalate"],
                }
            ],
        },
    )
    await rbac.ok(
        "POST",
        f"{RBAC}/namespaces/default/rolebindings",
        json={**binding, "metadata": {"name": "binder"}, "roleRef": {**binding["roleRef"], "name": "binder"}},
    )
    assert (
        await rbac.call("POST", f"{RBAC}/namespaces/default/rolebindings", token, json=binding)
    ).status_code == 201
    assert (
        await rbac.call(
            "POST", f"{RBAC}/namespaces/default/roles", token, json={**more, "metadata": {"name": "c2"}}
        )
    ).status_code == 201


async def test_impersonation_needs_permission(rbac: Server) -> None:
    token = await rbac.service_account_with_role("x", POD_READER)
    r = await rbac.call(
        "GET", "/api/v1/namespaces/default/pods", token, headers={"Impersonate-User": "kubernetes-admin"}
    )
    assert r.status_code == 403
    assert r.json()["message"] == (
        f'users "kubernetes-admin" is forbidden: User "{SA_X}" cannot impersonate resource "users" in API group "" '
        "at the cluster scope"
    )
    g = await rbac.call(
        "GET",
        "/api/v1/nodes",
        headers={"Impersonate-User": SA_X, "Impersonate-Group": "system:masters"},
    )
    assert g.status_code == 200  # the admin may impersonate anyone, groups included
    as_x = await rbac.call("GET", "/api/v1/nodes", headers={"Impersonate-User": SA_X})
    assert as_x.status_code == 403 and f'User "{SA_X}" cannot list resource "nodes"' in as_x.json()["message"]
    who = await rbac.ok(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={},
        headers={"Impersonate-User": SA_X},
    )
    assert who["status"]["userInfo"] == {
        "username": SA_X,
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    }
    bad = await rbac.call("GET", "/api/v1/pods", headers={"Impersonate-Group": "g"})
    assert bad.status_code == 400 and "without impersonating a user" in bad.json()["message"]


async def test_access_reviews_answer_for_the_caller_and_the_named_subject(rbac: Server) -> None:
    await rbac.service_account_with_role("x", POD_READER)

    async def can(verb: str, **headers: str) -> dict[str, Any]:
        body = {"spec": {"resourceAttributes": {"namespace": "default", "verb": verb, "resource": "pods"}}}
        out = await rbac.ok(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=body, headers=headers
        )
        return out["status"]

    assert await can("create", **{"Impersonate-User": SA_X}) == {"allowed": False}
    assert await can("list", **{"Impersonate-User": SA_X}) == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "x/default" of Role "x" to ServiceAccount "x/default"',
    }
    sar = await rbac.ok(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        json={
            "spec": {
                "user": SA_X,
                "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"},
            }
        },
    )
    # a SubjectAccessReview's groups are what it names: none here, so only the RoleBinding to the SA counts
    assert sar["status"]["allowed"] is True
    lsar = await rbac.ok(
        "POST",
        "/apis/authorization.k8s.io/v1/namespaces/kube-system/localsubjectaccessreviews",
        json={
            "metadata": {"namespace": "kube-system"},
            "spec": {
                "user": SA_X,
                "resourceAttributes": {"namespace": "kube-system", "verb": "get", "resource": "pods"},
            },
        },
    )
    assert lsar["status"] == {"allowed": False}
    rules = await rbac.ok(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        json={"spec": {"namespace": "default"}},
        headers={"Impersonate-User": SA_X},
    )
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]} in rules["status"][
        "resourceRules"
    ]
    assert rules["status"]["incomplete"] is False


async def test_tokens_stop_working_when_their_account_or_bound_secret_goes(rbac: Server) -> None:
    token = await rbac.service_account_with_role("x", POD_READER)
    await rbac.ok("POST", "/api/v1/namespaces/default/secrets", json={"metadata": {"name": "s"}})
    secret = await rbac.ok("GET", "/api/v1/namespaces/default/secrets/s")
    bound = await rbac.token(
        "x", spec={"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}}
    )
    assert (await rbac.call("GET", "/api/v1/namespaces/default/pods", bound)).status_code == 200
    await rbac.ok("DELETE", "/api/v1/namespaces/default/secrets/s")
    assert (await rbac.call("GET", "/api/v1/namespaces/default/pods", bound)).status_code == 401
    review = await rbac.ok(
        "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": bound}}
    )
    assert review["status"]["authenticated"] is False
    assert review["status"]["error"] == '[invalid bearer token, secrets "s" not found]'
    assert secret["metadata"]["uid"]
    good = await rbac.ok(
        "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}}
    )
    assert good["status"]["authenticated"] is True and good["status"]["user"]["username"] == SA_X
    assert good["status"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    await rbac.ok("DELETE", "/api/v1/namespaces/default/serviceaccounts/x")
    assert (await rbac.call("GET", "/api/v1/namespaces/default/pods", token)).status_code == 401


async def test_anonymous_requests_reach_only_public_info(rbac: Server) -> None:
    async for anon in _serve("RBAC", anonymous=True):
        assert (await anon.http.get("/healthz")).status_code == 200
        r = await anon.http.get("/api")
        assert (
            r.status_code == 403
            and r.json()["message"] == 'forbidden: User "system:anonymous" cannot get path "/api"'
        )
        r = await anon.http.get("/api/v1/namespaces/default/pods")
        assert r.json()["message"] == (
            'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"'
        )


async def test_always_allow_mode_allows_any_authenticated_caller_and_impersonation() -> None:
    async for s in _serve("AlwaysAllow"):
        await s.ok("POST", "/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "x"}})
        token = await s.token("x")
        assert (await s.call("POST", "/api/v1/namespaces/default/pods", token, json=POD)).status_code == 201
        r = await s.call("GET", "/api/v1/nodes", token, headers={"Impersonate-User": "anyone"})
        assert r.status_code == 200
        review = await s.ok(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            token=token,
            json={"spec": {"namespace": "default"}},
        )
        assert review["status"]["resourceRules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
        big = {
            "metadata": {"name": "big"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        }
        assert (await s.call("POST", f"{RBAC}/clusterroles", token, json=big)).status_code == 201


async def test_components_keep_working_under_rbac(rbac: Server) -> None:
    """Controllers, scheduler and node agent use the in-process loopback identity (system:masters)."""
    await rbac.cp.start(default_components(rbac.cp))
    await rbac.ok(
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        json={
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    )
    done = await wait_for_object(
        rbac.cp.client("test"),
        GVR("apps", "v1", "deployments"),
        "web",
        "default",
        cond=lambda o: bool(o and (o.get("status") or {}).get("availableReplicas") == 2),
        timeout=60,
    )
    assert done is not None


async def test_an_aggregation_rule_needs_cluster_admin_on_create_and_on_removal(rbac: Server) -> None:
    await rbac.ok("POST", "/api/v1/namespaces/default/serviceaccounts", json={"metadata": {"name": "cr"}})
    await rbac.ok(
        "POST",
        f"{RBAC}/clusterroles",
        json={
            "metadata": {"name": "cr-writer"},
            "rules": [
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["*"]}
            ],
        },
    )
    await rbac.ok(
        "POST",
        f"{RBAC}/clusterrolebindings",
        json={
            "metadata": {"name": "cr-writer"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr-writer"},
            "subjects": [{"kind": "ServiceAccount", "name": "cr", "namespace": "default"}],
        },
    )
    token = await rbac.token("cr")
    agg = {
        "metadata": {"name": "agg"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"team": "a"}}]},
    }
    # the writer may escalate clusterroles ("*" verbs), which lifts every check, as in kube
    assert (await rbac.call("POST", f"{RBAC}/clusterroles", token, json=agg)).status_code == 201
    await rbac.ok(
        "PUT",
        f"{RBAC}/clusterroles/cr-writer",
        json={
            "metadata": {"name": "cr-writer"},
            "rules": [
                {
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["clusterroles"],
                    "verbs": ["create", "update", "get"],
                }
            ],
        },
    )
    refused = await rbac.call(
        "POST", f"{RBAC}/clusterroles", token, json={**agg, "metadata": {"name": "agg2"}}
    )
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'clusterroles.rbac.authorization.k8s.io "agg2" is forbidden: must have cluster-admin privileges to use the '
        "aggregationRule"
    )
    current = await rbac.ok("GET", f"{RBAC}/clusterroles/agg", token=token)
    current.pop("aggregationRule")
    removed = await rbac.call("PUT", f"{RBAC}/clusterroles/agg", token, json=current)
    assert removed.status_code == 403 and "aggregationRule" in removed.json()["message"]
