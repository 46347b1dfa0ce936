"""apiserver.auth.authorizer and .impersonation: modes, kube's Forbidden wording, escalation, Impersonate-*."""

from __future__ import annotations

import pytest

from apiserver import errors
from apiserver.api.users import ANONYMOUS, LOOPBACK, UserInfo
from apiserver.auth.attributes import Attributes
from apiserver.auth.authorizer import Authorization, Decision, forbidden
from apiserver.auth.impersonation import impersonate, requests_from_headers
from tests.unit.apiserver.auth.test_auth_rbac import POD_READER, SA, DictSource, binding, role

BOB = UserInfo("bob", ("system:authenticated",))


def policy() -> DictSource:
    return DictSource(
        [
            role("pod-reader", POD_READER, ns="default"),
            binding("x", "Role", "pod-reader", [{"kind": "ServiceAccount", "name": "x"}], ns="default"),
            role(
                "impersonator",
                [
                    {
                        "verbs": ["impersonate"],
                        "apiGroups": [""],
                        "resources": ["users"],
                        "resourceNames": ["alice"],
                    }
                ],
            ),
            binding("bob-impersonates", "ClusterRole", "impersonator", [{"kind": "User", "name": "bob"}]),
            role(
                "role-writer",
                [
                    {
                        "verbs": ["create", "update"],
                        "apiGroups": ["rbac.authorization.k8s.io"],
                        "resources": ["roles", "rolebindings"],
                    }
                ],
                ns="default",
            ),
            binding(
                "x-writes", "Role", "role-writer", [{"kind": "ServiceAccount", "name": "x"}], ns="default"
            ),
        ]
    )


def test_always_allow_allows_everyone_and_lists_wildcard_rules() -> None:
    a = Authorization("AlwaysAllow", DictSource([]))
    assert a.authorize(Attributes(ANONYMOUS, "delete", True, resource="nodes")) == (Decision.ALLOW, "")
    assert a.rules_for(ANONYMOUS, "default").to_api() == {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        "incomplete": False,
    }


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match='"Node" is not a valid mode'):
        Authorization("Node", DictSource([]))


def test_rbac_mode_decides_from_policy_and_system_masters_is_super_user() -> None:
    a = Authorization("RBAC", policy())
    assert (
        a.authorize(Attributes(SA, "list", True, namespace="default", resource="pods"))[0] is Decision.ALLOW
    )
    assert a.authorize(Attributes(SA, "create", True, namespace="default", resource="pods")) == (
        Decision.NO_OPINION,
        "",
    )
    assert a.authorize(Attributes(LOOPBACK, "create", True, resource="nodes")) == (Decision.ALLOW, "")
    review = a.rules_for(SA, "default").to_api()
    assert review["resourceRules"][0] == {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}
    assert review["nonResourceRules"] == [] and review["incomplete"] is False


@pytest.mark.parametrize(
    ("attrs", "message", "details"),
    [
        (
            Attributes(SA, "create", True, namespace="default", resource="pods"),
            'pods is forbidden: User "system:serviceaccount:default:x" cannot create resource "pods" in API group "" '
            'in the namespace "default"',
            {"kind": "pods"},
        ),
        (
            Attributes(
                SA,
                "get",
                True,
                api_group="apps",
                resource="deployments",
                name="web",
                namespace="ns",
                subresource="scale",
            ),
            'deployments.apps "web" is forbidden: User "system:serviceaccount:default:x" cannot get resource '
            '"deployments/scale" in API group "apps" in the namespace "ns"',
            {"name": "web", "group": "apps", "kind": "deployments"},
        ),
        (
            Attributes(SA, "list", True, resource="nodes"),
            'nodes is forbidden: User "system:serviceaccount:default:x" cannot list resource "nodes" in API group "" '
            "at the cluster scope",
            {"kind": "nodes"},
        ),
        (
            Attributes(ANONYMOUS, "get", False, path="/metrics"),
            'forbidden: User "system:anonymous" cannot get path "/metrics"',
            {},
        ),
    ],
)
def test_forbidden_is_kubes_status(attrs: Attributes, message: str, details: dict[str, str]) -> None:
    e = forbidden(attrs, "")
    assert e.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }
    assert forbidden(attrs, "RBAC: x").message == message + ": RBAC: x"


# ---------------------------------------------------------------------------------- escalation


def test_a_role_may_grant_only_what_its_writer_holds() -> None:
    a = Authorization("RBAC", policy())
    a.confirm_role_write(SA, "roles", "default", "r", POD_READER, aggregation=False)
    with pytest.raises(errors.StatusError) as e:
        a.confirm_role_write(
            SA,
            "roles",
            "default",
            "r",
            [{"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]}],
            False,
        )
    assert (e.value.code, e.value.message) == (
        403,
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "system:serviceaccount:default:x" '
        '(groups=["system:serviceaccounts" "system:serviceaccounts:default"]) is attempting to grant RBAC '
        'permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["create"]}',
    )


def test_escalate_verb_lifts_the_role_check_and_bind_the_binding_check() -> None:
    src = policy()
    src.objs += [
        role(
            "escalator",
            [
                {
                    "verbs": ["escalate", "bind"],
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["roles"],
                }
            ],
            ns="default",
        ),
        binding("x-escalates", "Role", "escalator", [{"kind": "ServiceAccount", "name": "x"}], ns="default"),
        role("admin-ish", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], ns="default"),
    ]
    a = Authorization("RBAC", src)
    a.confirm_role_write(
        SA, "roles", "default", "big", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], False
    )
    a.confirm_binding_write(SA, "rolebindings", "default", "b", {"kind": "Role", "name": "admin-ish"})


def test_a_binding_may_bind_only_a_role_its_writer_holds() -> None:
    src = policy()
    src.objs.append(
        role("pod-writer", [{"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]}], ns="default")
    )
    a = Authorization("RBAC", src)
    a.confirm_binding_write(SA, "rolebindings", "default", "ok", {"kind": "Role", "name": "pod-reader"})
    with pytest.raises(errors.StatusError) as e:
        a.confirm_binding_write(SA, "rolebindings", "default", "b", {"kind": "Role", "name": "pod-writer"})
    assert e.value.code == 403 and e.value.message.startswith(
        'rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "system:serviceaccount:default:x"'
    )
    with pytest.raises(errors.StatusError) as e:
        a.confirm_binding_write(SA, "rolebindings", "default", "b", {"kind": "ClusterRole", "name": "nope"})
    assert (e.value.code, e.value.message) == (404, 'clusterroles.rbac.authorization.k8s.io "nope" not found')


def test_an_aggregation_rule_needs_full_authority() -> None:
    src = policy()
    src.objs += [
        role(
            "cr-writer",
            [
                {
                    "verbs": ["create", "escalate"],
                    "apiGroups": ["rbac.authorization.k8s.io"],
                    "resources": ["clusterroles"],
                }
            ],
        ),
        binding("w", "ClusterRole", "cr-writer", [{"kind": "User", "name": "bob"}]),
    ]
    a = Authorization("RBAC", src)
    # escalate lifts the aggregation check too, as in kube
    a.confirm_role_write(BOB, "clusterroles", "", "agg", [], aggregation=True)
    no_escalate = Authorization("RBAC", policy())
    with pytest.raises(errors.StatusError) as e:
        no_escalate.confirm_role_write(BOB, "clusterroles", "", "agg", [], aggregation=True)
    assert e.value.message == (
        'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the '
        "aggregationRule"
    )


def test_always_allow_never_refuses_a_role_write() -> None:
    a = Authorization("AlwaysAllow", DictSource([]))
    a.confirm_role_write(
        BOB, "clusterroles", "", "big", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], True
    )
    a.confirm_binding_write(BOB, "clusterrolebindings", "", "b", {"kind": "ClusterRole", "name": "missing"})


# ------------------------------------------------------------------------------- impersonation


def test_impersonation_requests_from_headers() -> None:
    reqs = requests_from_headers(
        [
            ("impersonate-user", "system:serviceaccount:ns:sa"),
            ("impersonate-group", "g1"),
            ("impersonate-group", "g2"),
            ("impersonate-extra-scopes%2fa", "v"),
            ("impersonate-uid", "u-1"),
        ]
    )
    assert [(r.kind, r.name, r.namespace, r.extra_key) for r in reqs] == [
        ("ServiceAccount", "sa", "ns", ""),
        ("Group", "g1", "", ""),
        ("Group", "g2", "", ""),
        ("UserExtra", "v", "", "scopes/a"),
        ("UID", "u-1", "", ""),
    ]
    assert requests_from_headers([("authorization", "x")]) == []
    with pytest.raises(errors.StatusError) as e:
        requests_from_headers([("impersonate-group", "g")])
    assert e.value.code == 400 and "without impersonating a user" in e.value.message


def test_impersonation_needs_the_impersonate_verb() -> None:
    a = Authorization("RBAC", policy())
    got = impersonate(BOB, [("impersonate-user", "alice")], a.authorize)
    assert got == UserInfo("alice", ("system:authenticated",))
    with pytest.raises(errors.StatusError) as e:
        impersonate(BOB, [("impersonate-user", "carol")], a.authorize)
    assert (e.value.code, e.value.message) == (
        403,
        'users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    )
    with pytest.raises(errors.StatusError) as e:
        impersonate(
            BOB, [("impersonate-user", "alice"), ("impersonate-group", "system:masters")], a.authorize
        )
    assert e.value.message.startswith(
        'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups"'
    )
    with pytest.raises(errors.StatusError) as e:
        impersonate(BOB, [("impersonate-user", "system:serviceaccount:default:x")], a.authorize)
    assert e.value.message == (
        'serviceaccounts "x" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" '
        'in the namespace "default"'
    )


def test_impersonated_identities_get_kubes_implicit_groups() -> None:
    allow = Authorization("AlwaysAllow", DictSource([])).authorize
    sa = impersonate(BOB, [("impersonate-user", "system:serviceaccount:ns:sa")], allow)
    assert sa == UserInfo(
        "system:serviceaccount:ns:sa",
        ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"),
    )
    # groups given are the authority: a service account then gets only those (and authenticated)
    sa2 = impersonate(
        BOB, [("impersonate-user", "system:serviceaccount:ns:sa"), ("impersonate-group", "g")], allow
    )
    assert sa2 is not None and sa2.groups == ("g", "system:authenticated")
    anon = impersonate(BOB, [("impersonate-user", "system:anonymous")], allow)
    assert anon is not None and anon.groups == ("system:unauthenticated",)
    full = impersonate(
        BOB,
        [
            ("impersonate-user", "u"),
            ("impersonate-uid", "1234"),
            ("impersonate-extra-team", "a"),
            ("impersonate-extra-team", "b"),
        ],
        allow,
    )
    assert full == UserInfo("u", ("system:authenticated",), "1234", {"team": ["a", "b"]})
