"""Authorization decisions: ``--authorization-mode`` (AlwaysAllow or RBAC) and kube's Forbidden.

kube-apiserver builds one union authorizer: the ``system:masters`` short-cut first (its loopback
and super-users never depend on stored policy), then each configured mode. A request is allowed
on the first ``Allow``; otherwise it is answered with :func:`forbidden`, whose message is
``responsewriters.Forbidden``'s, word for word.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.api.users import UserInfo
from apiserver.auth import rbac
from apiserver.auth.attributes import Attributes

SYSTEM_MASTERS = "system:masters"
ALWAYS_ALLOW = "AlwaysAllow"
RBAC = "RBAC"
MODES = (ALWAYS_ALLOW, RBAC)

#: ``rbacregistryvalidation``'s ``fullAuthority``: what an aggregationRule can gather
FULL_AUTHORITY: list[Obj] = [
    {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
    {"verbs": ["*"], "nonResourceURLs": ["*"]},
]


class Decision(enum.Enum):
    ALLOW = "Allow"
    DENY = "Deny"
    NO_OPINION = "NoOpinion"


@dataclass
class RulesReview:
    """``authorizer.RuleResolver.RulesFor``'s answer, in SelfSubjectRulesReview's shape."""

    resource_rules: list[Obj] = field(default_factory=list)
    non_resource_rules: list[Obj] = field(default_factory=list)
    incomplete: bool = False
    evaluation_error: str = ""

    def to_api(self) -> Obj:
        out: Obj = {
            "resourceRules": self.resource_rules,
            "nonResourceRules": self.non_resource_rules,
            "incomplete": self.incomplete,
        }
        if self.evaluation_error:
            out["evaluationError"] = self.evaluation_error
        return out


def always_allow_rules() -> RulesReview:
    """``alwaysAllowAuthorizer.RulesFor``: everything, complete."""
    return RulesReview(
        [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    )


def is_superuser(user: UserInfo) -> bool:
    """``EscalationAllowed`` / the privileged-group authorizer: a member of ``system:masters``."""
    return SYSTEM_MASTERS in user.groups


class Authorization:
    """The server's authorizer chain for one ``--authorization-mode``, plus RBAC rule resolution.

    The rule resolver is consulted whatever the mode, as kube's RBAC storage does for escalation
    checks; under AlwaysAllow those checks never reach it, because ``escalate`` and ``bind`` are
    allowed like everything else.
    """

    def __init__(self, mode: str, source: rbac.PolicySource) -> None:
        if mode not in MODES:
            raise ValueError(
                f'authorization-mode "{mode}" is not a valid mode: supported modes are {", ".join(MODES)}'
            )
        self.mode = mode
        self.resolver = rbac.RuleResolver(source)

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        """(decision, reason) — the union of the privileged group and the configured mode."""
        if is_superuser(attrs.user):
            return Decision.ALLOW, ""
        if self.mode == ALWAYS_ALLOW:
            return Decision.ALLOW, ""
        allowed, reason = rbac.authorize(self.resolver, attrs)
        return (Decision.ALLOW if allowed else Decision.NO_OPINION), reason

    def allowed(self, attrs: Attributes) -> bool:
        return self.authorize(attrs)[0] is Decision.ALLOW

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview:
        """What ``user`` may do in ``namespace`` (SelfSubjectRulesReview)."""
        if self.mode == ALWAYS_ALLOW:
            return always_allow_rules()
        rules, errs = self.resolver.rules_for(user, namespace)
        review = RulesReview(evaluation_error=rbac.aggregate(errs))
        for r in rules:
            if r.get("resources"):
                info: Obj = {
                    "verbs": list(r.get("verbs") or []),
                    "apiGroups": list(r.get("apiGroups") or []),
                    "resources": list(r.get("resources") or []),
                }
                if r.get("resourceNames"):
                    info["resourceNames"] = list(r["resourceNames"])
                review.resource_rules.append(info)
            if r.get("nonResourceURLs"):
                review.non_resource_rules.append(
                    {"verbs": list(r.get("verbs") or []), "nonResourceURLs": list(r["nonResourceURLs"])}
                )
        return review

    # ------------------------------------------------------------------ RBAC write checks
    def confirm_role_write(
        self, user: UserInfo, resource: str, namespace: str, name: str, rules: list[Obj], aggregation: bool
    ) -> None:
        """kube's policy-based Role/ClusterRole storage: refuse a role granting more than ``user`` holds.

        Allowed outright for ``system:masters`` and for holders of ``escalate`` on the role.
        ``aggregation`` (a ClusterRole that sets an aggregationRule) needs full authority.
        """
        if is_superuser(user):
            return
        escalate = Attributes(
            user,
            "escalate",
            True,
            namespace=namespace,
            api_group=rbac.GROUP,
            api_version="*",
            resource=resource,
            name=name,
        )
        if self.allowed(escalate):
            return
        msg = rbac.confirm_no_escalation(self.resolver, user, namespace, rules)
        if msg is not None:
            raise errors.forbidden(resource, name, rbac.GROUP, msg)
        if aggregation and rbac.confirm_no_escalation(self.resolver, user, namespace, FULL_AUTHORITY):
            raise errors.forbidden(
                resource, name, rbac.GROUP, "must have cluster-admin privileges to use the aggregationRule"
            )

    def confirm_binding_write(
        self, user: UserInfo, resource: str, namespace: str, name: str, role_ref: Obj
    ) -> None:
        """kube's policy-based binding storage: bind only a role whose rules ``user`` holds, or with ``bind``."""
        if is_superuser(user):
            return
        kind = role_ref.get("kind")
        role_name = str(role_ref.get("name") or "")
        bind = Attributes(
            user,
            "bind",
            True,
            namespace=namespace,
            api_group=rbac.GROUP,
            api_version="*",
            resource="roles" if kind == "Role" else "clusterroles",
            name=role_name,
        )
        if self.allowed(bind):
            return
        rules, err = self.resolver.role_reference_rules(role_ref, namespace)
        if err is not None:
            plural = "roles" if kind == "Role" else "clusterroles"
            raise errors.not_found(plural, role_name, rbac.GROUP)
        msg = rbac.confirm_no_escalation(self.resolver, user, namespace, rules)
        if msg is not None:
            raise errors.forbidden(resource, name, rbac.GROUP, msg)


def forbidden_message(attrs: Attributes) -> str:
    """``responsewriters.forbiddenMessage``."""
    who = rbac.go_quote(attrs.user.username)
    if not attrs.resource_request:
        return f"User {who} cannot {attrs.verb} path {rbac.go_quote(attrs.path)}"
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    target = f"User {who} cannot {attrs.verb} resource {rbac.go_quote(resource)} in API group {rbac.go_quote(attrs.api_group)}"
    if attrs.namespace:
        return f"{target} in the namespace {rbac.go_quote(attrs.namespace)}"
    return f"{target} at the cluster scope"


def forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    """``responsewriters.ForbiddenStatusError``: ``NewForbidden(group/resource, name, msg[: reason])``."""
    msg = forbidden_message(attrs)
    if reason:
        msg = f"{msg}: {reason}"
    details: Obj = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    if attrs.resource:
        details["kind"] = attrs.resource
    if not attrs.resource and not attrs.api_group:
        return errors.StatusError(403, "Forbidden", f"forbidden: {msg}", details)
    target = errors.qualified_resource(attrs.resource, attrs.api_group)
    if attrs.name:
        target = f"{target} {rbac.go_quote(attrs.name)}"
    return errors.StatusError(403, "Forbidden", f"{target} is forbidden: {msg}", details)
