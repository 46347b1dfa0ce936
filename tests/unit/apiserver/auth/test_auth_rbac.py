"""RBAC's pure parts (apiserver.auth.rbac): rule and subject matching, resolution, Covers, messages.

Cases follow kube's ``rbac_test.go`` / ``rule_test.go`` / ``escalation_check_test.go`` shapes.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from apiserver.api.types import Obj
from apiserver.api.users import UserInfo
from apiserver.auth import rbac
from apiserver.auth.attributes import Attributes

ALICE = UserInfo("alice", ("devs", "system:authenticated"))
SA = UserInfo("system:serviceaccount:default:x", ("system:serviceaccounts", "system:serviceaccounts:default"))


def res(
    verb: str, resource: str, *, group: str = "", ns: str = "default", name: str = "", sub: str = ""
) -> Attributes:
    return Attributes(
        ALICE, verb, True, namespace=ns, api_group=group, resource=resource, subresource=sub, name=name
    )


def url(verb: str, path: str) -> Attributes:
    return Attributes(ALICE, verb, False, path=path)


@pytest.mark.parametrize(
    ("rule", "attrs", "allowed"),
    [
        ({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}, res("list", "pods"), True),
        ({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}, res("create", "pods"), False),
        ({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}, res("deletecollection", "pods"), True),
        ({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, res("get", "pods"), False),
        (
            {"verbs": ["get"], "apiGroups": ["*"], "resources": ["deployments"]},
            res("get", "deployments", group="apps"),
            True,
        ),
        # subresources are named resource/subresource; a bare resource does not grant them
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            res("get", "pods", name="p", sub="log"),
            False,
        ),
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]},
            res("get", "pods", name="p", sub="log"),
            True,
        ),
        (
            {"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]},
            res("update", "pods", name="p", sub="status"),
            True,
        ),
        (
            {"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/status"]},
            res("update", "pods", name="p"),
            False,
        ),
        (
            {"verbs": ["get"], "apiGroups": [""], "resources": ["*"]},
            res("get", "pods", name="p", sub="log"),
            True,
        ),
        # resourceNames restrict to named objects: a list (no name) is not granted
        (
            {
                "verbs": ["get", "list"],
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["a"],
            },
            res("get", "configmaps", name="a"),
            True,
        ),
        (
            {
                "verbs": ["get", "list"],
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["a"],
            },
            res("get", "configmaps", name="b"),
            False,
        ),
        (
            {
                "verbs": ["get", "list"],
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["a"],
            },
            res("list", "configmaps"),
            False,
        ),
        # non-resource URLs: exact, trailing-* prefix, and never resource requests
        ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz"), True),
        ({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz/etcd"), False),
        ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, url("get", "/apis/apps/v1"), True),
        ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, url("get", "/apis"), False),
        ({"verbs": ["get"], "nonResourceURLs": ["*"]}, url("post", "/x"), False),
        ({"verbs": ["*"], "nonResourceURLs": ["*"]}, url("post", "/x"), True),
        ({"verbs": ["*"], "nonResourceURLs": ["*"]}, res("get", "pods"), False),
    ],
)
def test_rule_allows(rule: Obj, attrs: Attributes, allowed: bool) -> None:
    assert rbac.rule_allows(attrs, rule) is allowed


@pytest.mark.parametrize(
    ("subject", "binding_ns", "user", "applies"),
    [
        ({"kind": "User", "name": "alice"}, "", ALICE, True),
        ({"kind": "User", "name": "bob"}, "", ALICE, False),
        ({"kind": "Group", "name": "devs"}, "", ALICE, True),
        ({"kind": "Group", "name": "system:serviceaccounts:default"}, "", SA, True),
        ({"kind": "ServiceAccount", "name": "x", "namespace": "default"}, "", SA, True),
        # a RoleBinding's ServiceAccount subject defaults to the binding's namespace
        ({"kind": "ServiceAccount", "name": "x"}, "default", SA, True),
        ({"kind": "ServiceAccount", "name": "x"}, "other", SA, False),
        ({"kind": "ServiceAccount", "name": "x"}, "", SA, False),
        ({"kind": "User", "name": "system:serviceaccount:default:x"}, "", SA, True),
    ],
)
def test_applies_to_user(subject: Obj, binding_ns: str, user: UserInfo, applies: bool) -> None:
    assert rbac.applies_to_user(user, subject, binding_ns) is applies


def test_split_service_account_username() -> None:
    assert rbac.split_service_account_username("system:serviceaccount:ns:name") == ("ns", "name")
    for bad in (
        "system:serviceaccount:ns",
        "system:serviceaccount:a:b:c",
        "alice",
        "system:serviceaccount::x",
    ):
        assert rbac.split_service_account_username(bad) is None


class DictSource:
    """A PolicySource over plain lists, the shape the store gives."""

    def __init__(self, objs: list[Obj]) -> None:
        self.objs = objs

    def _of(self, kind: str) -> list[Obj]:
        return [o for o in self.objs if o["kind"] == kind]

    def cluster_role_bindings(self) -> Iterable[Obj]:
        return self._of("ClusterRoleBinding")

    def role_bindings(self, namespace: str) -> Iterable[Obj]:
        return [o for o in self._of("RoleBinding") if o["metadata"]["namespace"] == namespace]

    def cluster_role(self, name: str) -> Obj | None:
        return next((o for o in self._of("ClusterRole") if o["metadata"]["name"] == name), None)

    def role(self, namespace: str, name: str) -> Obj | None:
        return next(
            (o for o in self._of("Role") if o["metadata"] == {"name": name, "namespace": namespace}), None
        )


def role(name: str, rules: list[Obj], ns: str = "") -> Obj:
    md = {"name": name, "namespace": ns} if ns else {"name": name}
    return {"kind": "Role" if ns else "ClusterRole", "metadata": md, "rules": rules}


def binding(name: str, ref_kind: str, ref: str, subjects: list[Obj], ns: str = "") -> Obj:
    md = {"name": name, "namespace": ns} if ns else {"name": name}
    return {
        "kind": "RoleBinding" if ns else "ClusterRoleBinding",
        "metadata": md,
        "roleRef": {"apiGroup": rbac.GROUP, "kind": ref_kind, "name": ref},
        "subjects": subjects,
    }


POD_READER = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]


def test_authorize_names_the_granting_binding() -> None:
    src = DictSource(
        [
            role("pod-reader", POD_READER, ns="default"),
            binding("x", "Role", "pod-reader", [{"kind": "ServiceAccount", "name": "x"}], ns="default"),
        ]
    )
    r = rbac.RuleResolver(src)
    sa_list = Attributes(SA, "list", True, namespace="default", resource="pods")
    assert rbac.authorize(r, sa_list) == (
        True,
        'RBAC: allowed by RoleBinding "x/default" of Role "pod-reader" to ServiceAccount "x/default"',
    )
    assert rbac.authorize(r, Attributes(SA, "create", True, namespace="default", resource="pods")) == (
        False,
        "",
    )
    # the RoleBinding grants nothing in another namespace or cluster-wide
    assert not rbac.authorize(r, Attributes(SA, "list", True, namespace="kube-system", resource="pods"))[0]
    assert not rbac.authorize(r, Attributes(SA, "list", True, resource="pods"))[0]


def test_a_rolebinding_to_a_clusterrole_grants_it_in_the_binding_namespace_only() -> None:
    src = DictSource(
        [
            role("reader", POD_READER),
            binding("r", "ClusterRole", "reader", [{"kind": "Group", "name": "devs"}], ns="team"),
        ]
    )
    r = rbac.RuleResolver(src)
    assert rbac.authorize(r, res("get", "pods", ns="team"))[0]
    assert not rbac.authorize(r, res("get", "pods", ns="default"))[0]


def test_a_binding_to_a_missing_role_is_the_reason_of_a_denial() -> None:
    src = DictSource([binding("b", "ClusterRole", "gone", [{"kind": "User", "name": "alice"}])])
    r = rbac.RuleResolver(src)
    assert rbac.authorize(r, res("get", "pods")) == (
        False,
        'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    )
    rules, errs = r.rules_for(ALICE, "default")
    assert rules == [] and errs == ['clusterrole.rbac.authorization.k8s.io "gone" not found']


def test_cluster_role_bindings_are_visited_before_role_bindings() -> None:
    src = DictSource(
        [
            role("reader", POD_READER),
            role("ns-reader", POD_READER, ns="default"),
            binding("ns", "Role", "ns-reader", [{"kind": "User", "name": "alice"}], ns="default"),
            binding("cluster", "ClusterRole", "reader", [{"kind": "Group", "name": "devs"}]),
        ]
    )
    allowed, reason = rbac.authorize(rbac.RuleResolver(src), res("get", "pods"))
    assert (
        allowed
        and reason == 'RBAC: allowed by ClusterRoleBinding "cluster" of ClusterRole "reader" to Group "devs"'
    )


def test_aggregate_errors_like_utilerrors() -> None:
    assert rbac.aggregate([]) == ""
    assert rbac.aggregate(["a"]) == "a"
    assert rbac.aggregate(["a", "b", "a"]) == "[a, b]"


# ------------------------------------------------------------------------------------ Covers


def test_breakdown_rule() -> None:
    assert rbac.breakdown_rule(
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}
    ) == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
        {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
    ]
    assert rbac.breakdown_rule({"verbs": ["get"], "nonResourceURLs": ["/a", "/b"]}) == [
        {"verbs": ["get"], "nonResourceURLs": ["/a"]},
        {"verbs": ["get"], "nonResourceURLs": ["/b"]},
    ]


@pytest.mark.parametrize(
    ("owner", "servant", "covered"),
    [
        (POD_READER, POD_READER, True),
        (POD_READER, [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], True),
        (POD_READER, [{"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]}], False),
        ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}], POD_READER, True),
        # a name-restricted owner covers only those names
        (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}],
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}],
            True,
        ),
        (
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}],
            [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
            False,
        ),
        (
            [{"verbs": ["update"], "apiGroups": [""], "resources": ["*/status"]}],
            [{"verbs": ["update"], "apiGroups": [""], "resources": ["pods/status"]}],
            True,
        ),
        (
            [{"verbs": ["update"], "apiGroups": [""], "resources": ["*/status"]}],
            [{"verbs": ["update"], "apiGroups": [""], "resources": ["pods"]}],
            False,
        ),
        (
            [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/apis/apps"]}],
            True,
        ),
        (
            [{"verbs": ["get"], "nonResourceURLs": ["/apis"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}],
            False,
        ),
        # a resource rule never covers a URL, nor a URL rule a resource
        (
            [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            [{"verbs": ["get"], "nonResourceURLs": ["/x"]}],
            False,
        ),
    ],
)
def test_covers(owner: list[Obj], servant: list[Obj], covered: bool) -> None:
    assert rbac.covers(owner, servant)[0] is covered


def test_escalation_message_is_kubes() -> None:
    ok, missing = rbac.covers(
        POD_READER,
        [{"verbs": ["get", "create", "delete"], "apiGroups": [""], "resources": ["pods", "secrets"]}],
    )
    assert not ok
    assert rbac.escalation_message(SA, missing, []) == (
        'user "system:serviceaccount:default:x" (groups=["system:serviceaccounts" "system:serviceaccounts:default"]) '
        "is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["create" "delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "create" "delete"]}'
    )
    assert rbac.escalation_message(
        SA, missing[:1], ['role.rbac.authorization.k8s.io "r" not found']
    ).endswith('; resolution errors: [role.rbac.authorization.k8s.io "r" not found]')


def test_compact_string() -> None:
    assert (
        rbac.compact_string({"verbs": ["get"], "nonResourceURLs": ["/healthz"]})
        == '{NonResourceURLs:["/healthz"], Verbs:["get"]}'
    )
    assert (
        rbac.compact_string(
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["w"]}
        )
        == '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["w"], Verbs:["get"]}'
    )


def test_confirm_no_escalation_uses_the_writers_rules_in_the_namespace() -> None:
    src = DictSource(
        [
            role("pod-reader", POD_READER, ns="default"),
            binding("x", "Role", "pod-reader", [{"kind": "ServiceAccount", "name": "x"}], ns="default"),
        ]
    )
    r = rbac.RuleResolver(src)
    assert rbac.confirm_no_escalation(r, SA, "default", POD_READER) is None
    msg = rbac.confirm_no_escalation(r, SA, "other", POD_READER)
    assert msg is not None and '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}' in msg
