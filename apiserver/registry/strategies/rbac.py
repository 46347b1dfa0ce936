"""Strategies of rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding.

The shape of kube's ``pkg/registry/rbac/*/strategy.go`` and ``pkg/apis/rbac/validation``: rules
need verbs and (for resource rules) apiGroups and resources; namespaced rules cannot name
non-resource URLs; bindings point at a Role or ClusterRole of the rbac group and their ``roleRef``
never changes; subjects are ServiceAccounts (namespaced names), Users or Groups. None of these
kinds tracks ``metadata.generation``.

Writes are also checked against escalation, as kube's ``policybased`` storage does: a Role or
ClusterRole may only grant what its writer already holds (or the writer may ``escalate`` it), and
a binding may only bind a role whose rules the writer holds (or may ``bind``);
``system:masters`` is exempt. Under ``--authorization-mode=AlwaysAllow`` ``escalate`` and
``bind`` are allowed like everything else, so the checks never refuse. An update that only
touches what the garbage collector writes (ownerReferences, finalizers) is not checked.
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.users import LOOPBACK
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.selectors import label_selector_from_dict
from apiserver.validation import names
from apiserver.validation.meta import validate_label_selector

GROUP = "rbac.authorization.k8s.io"
SERVICE_ACCOUNT_KIND = "ServiceAccount"
USER_KIND = "User"
GROUP_KIND = "Group"


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


# ------------------------------------------------------------------------------------ defaults


def default_subjects(obj: Obj) -> None:
    """``SetDefaults_Subject``: Users and Groups belong to the rbac group, ServiceAccounts to core."""
    for s in _list(obj.get("subjects")):
        if isinstance(s, dict) and not s.get("apiGroup") and s.get("kind") in (USER_KIND, GROUP_KIND):
            s["apiGroup"] = GROUP


def default_role_ref(obj: Obj) -> None:
    """``SetDefaults_RoleBinding`` / ``SetDefaults_ClusterRoleBinding``: roleRef.apiGroup."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP


# ---------------------------------------------------------------------------------- validation


def validate_policy_rule(rule: Any, namespaced: bool, path: Path) -> ErrorList:
    """``ValidatePolicyRule``."""
    rule = _dict(rule)
    errs: ErrorList = []
    if not _list(rule.get("verbs")):
        errs.append(field.required(path.child("verbs"), "verbs must contain at least one value"))
    urls = _list(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            errs.append(
                field.invalid(
                    path.child("nonResourceURLs"), urls, "namespaced rules cannot apply to non-resource URLs"
                )
            )
        if _list(rule.get("apiGroups")) or _list(rule.get("resources")) or _list(rule.get("resourceNames")):
            errs.append(
                field.invalid(
                    path.child("nonResourceURLs"),
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not _list(rule.get("apiGroups")):
        errs.append(
            field.required(path.child("apiGroups"), "resource rules must supply at least one api group")
        )
    if not _list(rule.get("resources")):
        errs.append(
            field.required(path.child("resources"), "resource rules must supply at least one resource")
        )
    return errs


def validate_rules(obj: Obj, namespaced: bool) -> ErrorList:
    errs: ErrorList = []
    for i, rule in enumerate(_list(obj.get("rules"))):
        errs.extend(validate_policy_rule(rule, namespaced, Path("rules").index(i)))
    return errs


def validate_aggregation_rule(obj: Obj) -> ErrorList:
    """ClusterRole ``aggregationRule``: at least one valid selector when present."""
    rule = obj.get("aggregationRule")
    if rule is None:
        return []
    sp = Path("aggregationRule", "clusterRoleSelectors")
    selectors = _list(_dict(rule).get("clusterRoleSelectors"))
    if not selectors:
        return [field.required(sp, "at least one clusterRoleSelector required if aggregationRule is non-nil")]
    errs: ErrorList = []
    for i, sel in enumerate(selectors):
        p = sp.index(i)
        sub = validate_label_selector(sel, p) if isinstance(sel, dict) else []
        errs.extend(sub)
        if not sub:
            try:
                label_selector_from_dict(sel)
            except ValueError:
                errs.append(field.invalid(p, sel, "invalid label selector."))
    return errs


def validate_rbac_name(name: str) -> list[str]:
    """``ValidateRBACName``: a path segment (no ``/``, ``%``, not ``.`` or ``..``)."""
    return names.is_valid_path_segment_name(name)


def validate_role_ref(obj: Obj, kinds: list[str]) -> ErrorList:
    ref = _dict(obj.get("roleRef"))
    rp = Path("roleRef")
    errs: ErrorList = []
    if ref.get("apiGroup") != GROUP:
        errs.append(field.not_supported(rp.child("apiGroup"), _str(ref.get("apiGroup")), [GROUP]))
    if ref.get("kind") not in kinds:
        errs.append(field.not_supported(rp.child("kind"), _str(ref.get("kind")), kinds))
    name = _str(ref.get("name"))
    if not name:
        errs.append(field.required(rp.child("name")))
    else:
        for msg in validate_rbac_name(name):
            errs.append(field.invalid(rp.child("name"), name, msg))
    return errs


def validate_subject(subject: Any, namespaced: bool, path: Path) -> ErrorList:
    """``ValidateRoleBindingSubject``."""
    s = _dict(subject)
    errs: ErrorList = []
    name = _str(s.get("name"))
    api_group = _str(s.get("apiGroup"))
    if not name:
        errs.append(field.required(path.child("name")))
    kind = s.get("kind")
    if kind == SERVICE_ACCOUNT_KIND:
        if name:
            for msg in names.is_dns1123_subdomain(name):
                errs.append(field.invalid(path.child("name"), name, msg))
        if api_group:
            errs.append(field.not_supported(path.child("apiGroup"), api_group, [""]))
        if not namespaced and not s.get("namespace"):
            errs.append(field.required(path.child("namespace")))
    elif kind in (USER_KIND, GROUP_KIND):
        if api_group != GROUP:
            errs.append(field.not_supported(path.child("apiGroup"), api_group, [GROUP]))
    else:
        errs.append(
            field.not_supported(path.child("kind"), _str(kind), [SERVICE_ACCOUNT_KIND, USER_KIND, GROUP_KIND])
        )
    return errs


def validate_binding(obj: Obj, namespaced: bool) -> ErrorList:
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    errs = validate_role_ref(obj, kinds)
    for i, s in enumerate(_list(obj.get("subjects"))):
        errs.extend(validate_subject(s, namespaced, Path("subjects").index(i)))
    return errs


def validate_binding_update(new: Obj, old: Obj) -> ErrorList:
    if new.get("roleRef") != old.get("roleRef"):
        return [field.invalid(Path("roleRef"), new.get("roleRef"), "cannot change roleRef")]
    return []


# ---------------------------------------------------------------------------------- escalation

#: metadata an update may change without an escalation check (``IsOnlyMutatingGCFields``) or
#: that the server owns
_UNCHECKED_META = ("ownerReferences", "finalizers", "managedFields", "resourceVersion", "generation")


def only_gc_fields_change(new: Obj, old: Obj) -> bool:
    def strip(o: Obj) -> Obj:
        md = {k: v for k, v in _dict(o.get("metadata")).items() if k not in _UNCHECKED_META}
        return {**{k: v for k, v in o.items() if k != "metadata"}, "metadata": md}

    return strip(new) == strip(old)


def has_aggregation_rule(obj: Obj | None) -> bool:
    """``hasAggregationRule``: an aggregationRule with at least one selector."""
    return obj is not None and bool(_list(_dict(obj.get("aggregationRule")).get("clusterRoleSelectors")))


def confirm_role(ctx: StrategyContext, resource: str, obj: Obj, old: Obj | None = None) -> None:
    """kube's policy-based role storage; an aggregationRule set now or before needs full authority."""
    if ctx.authorization is None:
        return
    rules = [r for r in _list(obj.get("rules")) if isinstance(r, dict)]
    ctx.authorization.confirm_role_write(
        ctx.user or LOOPBACK,
        resource,
        ctx.namespace,
        _str(_dict(obj.get("metadata")).get("name")),
        rules,
        aggregation=has_aggregation_rule(obj) or has_aggregation_rule(old),
    )


def confirm_binding(ctx: StrategyContext, resource: str, obj: Obj) -> None:
    if ctx.authorization is None:
        return
    ctx.authorization.confirm_binding_write(
        ctx.user or LOOPBACK,
        resource,
        ctx.namespace,
        _str(_dict(obj.get("metadata")).get("name")),
        _dict(obj.get("roleRef")),
    )


# ---------------------------------------------------------------------------------- strategies


class RoleStrategy(UntrackedGenerationStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        confirm_role(ctx, "roles", obj)
        return validate_rules(obj, namespaced=True)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        if not only_gc_fields_change(new, old):
            confirm_role(ctx, "roles", new)
        return validate_rules(new, namespaced=True)


class ClusterRoleStrategy(UntrackedGenerationStrategy):
    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        confirm_role(ctx, "clusterroles", obj)
        return validate_rules(obj, namespaced=False) + validate_aggregation_rule(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        if not only_gc_fields_change(new, old):
            confirm_role(ctx, "clusterroles", new, old)
        return validate_rules(new, namespaced=False) + validate_aggregation_rule(new)


class _BindingStrategy(UntrackedGenerationStrategy):
    namespaced = True
    resource = "rolebindings"

    def default(self, obj: Obj) -> None:
        default_role_ref(obj)
        default_subjects(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        errs = validate_binding(obj, self.namespaced)
        if not errs:  # kube checks the roleRef it converted: a malformed one is a 422 first
            confirm_binding(ctx, self.resource, obj)
        return errs

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_binding(new, self.namespaced) + validate_binding_update(new, old)
        if not errs and not only_gc_fields_change(new, old):
            confirm_binding(ctx, self.resource, new)
        return errs


class RoleBindingStrategy(_BindingStrategy):
    namespaced = True
    resource = "rolebindings"


class ClusterRoleBindingStrategy(_BindingStrategy):
    namespaced = False
    resource = "clusterrolebindings"


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "roles"): RoleStrategy(),
    (GROUP, "clusterroles"): ClusterRoleStrategy(),
    (GROUP, "rolebindings"): RoleBindingStrategy(),
    (GROUP, "clusterrolebindings"): ClusterRoleBindingStrategy(),
}
