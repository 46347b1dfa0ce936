"""RBAC as kube's ``plugin/pkg/auth/authorizer/rbac`` and ``pkg/registry/rbac/validation`` do it.

Rules, bindings and roles are the API's JSON shapes (``rbac.authorization.k8s.io/v1`` dicts).
Everything here is a pure function of them, except :class:`RuleResolver`, which reads them from a
:class:`PolicySource` (the API server's store, or a dict in tests) and nothing else.

* rule matching: :func:`rule_allows` (verbs, apiGroups, ``resource/subresource`` and
  ``*/subresource``, resourceNames, non-resource URLs with a trailing ``*``);
* subject matching: :func:`applies_to` (Users, Groups, ServiceAccounts, defaulting a
  RoleBinding's ServiceAccount namespace to the binding's);
* resolution: :meth:`RuleResolver.visit_rules_for` walks ClusterRoleBindings, then the
  namespace's RoleBindings, in kube's order, naming the source of each rule;
* escalation: :func:`covers` (``validation.Covers``), :func:`compact_string` and
  :func:`escalation_message` (``ConfirmNoEscalation``'s wording).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from apiserver.api.types import Obj
from apiserver.api.users import UserInfo
from apiserver.auth.attributes import Attributes

GROUP = "rbac.authorization.k8s.io"
SA_PREFIX = "system:serviceaccount:"
ALL = "*"

Rule = Obj


def _strs(rule: Rule, key: str) -> list[str]:
    v = rule.get(key)
    return [s for s in v if isinstance(s, str)] if isinstance(v, list) else []


# ----------------------------------------------------------------------------- rule matching


def verb_matches(rule: Rule, verb: str) -> bool:
    verbs = _strs(rule, "verbs")
    return ALL in verbs or verb in verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    groups = _strs(rule, "apiGroups")
    return ALL in groups or group in groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """``ResourceMatches``: ``*``, the exact ``resource[/subresource]``, or ``*/subresource``."""
    for r in _strs(rule, "resources"):
        if r in (ALL, combined):
            return True
        if subresource and r == "*/" + subresource:
            return True
    return False


def resource_name_matches(rule: Rule, name: str) -> bool:
    names = _strs(rule, "resourceNames")
    return not names or name in names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    for url in _strs(rule, "nonResourceURLs"):
        if url in (ALL, path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    """``RuleAllows``: does one PolicyRule grant this request?"""
    if attrs.resource_request:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (
            verb_matches(rule, attrs.verb)
            and api_group_matches(rule, attrs.api_group)
            and resource_matches(rule, combined, attrs.subresource)
            and resource_name_matches(rule, attrs.name)
        )
    return verb_matches(rule, attrs.verb) and non_resource_url_matches(rule, attrs.path)


# -------------------------------------------------------------------------- subject matching


def service_account_username(namespace: str, name: str) -> str:
    return f"{SA_PREFIX}{namespace}:{name}"


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: ``system:serviceaccount:<ns>:<name>`` → (ns, name)."""
    if not username.startswith(SA_PREFIX):
        return None
    parts = username[len(SA_PREFIX) :].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def service_account_groups(namespace: str) -> tuple[str, str]:
    """``serviceaccount.MakeGroupNames``."""
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")


def applies_to_user(user: UserInfo, subject: Obj, namespace: str) -> bool:
    """``appliesToUser``; ``namespace`` is the RoleBinding's ("" for ClusterRoleBindings)."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return user.username == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_ns = subject.get("namespace") or namespace
        if not sa_ns or not isinstance(name, str):
            return False
        return user.username == service_account_username(sa_ns, name)
    return False


def applies_to(user: UserInfo, subjects: Any, namespace: str) -> int | None:
    """The index of the first subject naming ``user``, or None."""
    for i, s in enumerate(subjects if isinstance(subjects, list) else []):
        if isinstance(s, dict) and applies_to_user(user, s, namespace):
            return i
    return None


def describe_subject(subject: Obj, binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


# -------------------------------------------------------------------------------- resolution


class PolicySource(Protocol):
    """Read access to the stored RBAC objects (kube's listers)."""

    def cluster_role_bindings(self) -> Iterable[Obj]: ...

    def role_bindings(self, namespace: str) -> Iterable[Obj]: ...

    def cluster_role(self, name: str) -> Obj | None: ...

    def role(self, namespace: str, name: str) -> Obj | None: ...


@dataclass(frozen=True)
class Source:
    """Which binding granted a rule (``clusterRoleBindingDescriber`` / ``roleBindingDescriber``)."""

    binding: Obj
    subject: Obj

    def __str__(self) -> str:
        md = self.binding.get("metadata") or {}
        ref = self.binding.get("roleRef") or {}
        ns = md.get("namespace") or ""
        if ns:
            return (
                f'RoleBinding "{md.get("name", "")}/{ns}" of {ref.get("kind", "")} "{ref.get("name", "")}" '
                f"to {describe_subject(self.subject, ns)}"
            )
        return (
            f'ClusterRoleBinding "{md.get("name", "")}" of {ref.get("kind", "")} "{ref.get("name", "")}" '
            f"to {describe_subject(self.subject, '')}"
        )


#: ``visitor(source, rule, error) -> keep going``
Visitor = Callable[[Source | None, Rule | None, str | None], bool]


class RuleResolver:
    """``DefaultRuleResolver`` over a :class:`PolicySource`."""

    def __init__(self, source: PolicySource) -> None:
        self.source = source

    def role_reference_rules(self, role_ref: Obj, binding_namespace: str) -> tuple[list[Rule], str | None]:
        """``GetRoleReferenceRules``: the referenced role's rules, or the lister's not-found error."""
        kind, name = role_ref.get("kind"), str(role_ref.get("name") or "")
        if kind == "Role":
            role = self.source.role(binding_namespace, name)
            if role is None:
                return [], f'role.{GROUP} "{name}" not found'
        elif kind == "ClusterRole":
            role = self.source.cluster_role(name)
            if role is None:
                return [], f'clusterrole.{GROUP} "{name}" not found'
        else:
            return [], f'unsupported role reference kind: "{kind}"'
        rules = role.get("rules")
        return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else [], None

    def visit_rules_for(self, user: UserInfo, namespace: str, visitor: Visitor) -> None:
        for binding, ns in self._bindings(namespace):
            i = applies_to(user, binding.get("subjects"), ns)
            if i is None:
                continue
            rules, err = self.role_reference_rules(binding.get("roleRef") or {}, ns)
            if err is not None:
                if not visitor(None, None, err):
                    return
                continue
            source = Source(binding, binding["subjects"][i])
            for rule in rules:
                if not visitor(source, rule, None):
                    return

    def _bindings(self, namespace: str) -> Iterator[tuple[Obj, str]]:
        for b in self.source.cluster_role_bindings():
            yield b, ""
        if namespace:
            for b in self.source.role_bindings(namespace):
                yield b, namespace

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """``RulesFor``: every rule that applies to ``user`` in ``namespace``, and the errors met."""
        rules: list[Rule] = []
        errs: list[str] = []

        def visit(source: Source | None, rule: Rule | None, err: str | None) -> bool:
            if rule is not None:
                rules.append(rule)
            if err is not None:
                errs.append(err)
            return True

        self.visit_rules_for(user, namespace, visit)
        return rules, errs


def aggregate(errs: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message bare, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(errs))
    if not unique:
        return ""
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def authorize(resolver: RuleResolver, attrs: Attributes) -> tuple[bool, str]:
    """``RBACAuthorizer.Authorize``: (allowed, reason)."""
    allowed_by: list[Source] = []
    errs: list[str] = []

    def visit(source: Source | None, rule: Rule | None, err: str | None) -> bool:
        if rule is not None and source is not None and rule_allows(attrs, rule):
            allowed_by.append(source)
            return False
        if err is not None:
            errs.append(err)
        return True

    resolver.visit_rules_for(attrs.user, attrs.namespace, visit)
    if allowed_by:
        return True, f"RBAC: allowed by {allowed_by[0]}"
    return False, f"RBAC: {aggregate(errs)}" if errs else ""


# -------------------------------------------------------------------------------- escalation


def breakdown_rule(rule: Rule) -> list[Rule]:
    """``BreakdownRule``: one rule per (group, resource, verb[, name]) and per (URL, verb)."""
    out: list[Rule] = []
    names = _strs(rule, "resourceNames")
    for group in _strs(rule, "apiGroups"):
        for resource in _strs(rule, "resources"):
            for verb in _strs(rule, "verbs"):
                base = {"verbs": [verb], "apiGroups": [group], "resources": [resource]}
                if names:
                    out.extend({**base, "resourceNames": [n]} for n in names)
                else:
                    out.append(base)
    for url in _strs(rule, "nonResourceURLs"):
        for verb in _strs(rule, "verbs"):
            out.append({"verbs": [verb], "nonResourceURLs": [url]})
    return out


def _has_all(owner: list[str], wanted: list[str]) -> bool:
    return all(w in owner for w in wanted)


def _resource_covers_all(owner: list[str], wanted: list[str]) -> bool:
    if ALL in owner or _has_all(owner, wanted):
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, sub: str) -> bool:
    return owner == sub or (owner.endswith("*") and sub.startswith(owner.rstrip("*")))


def rule_covers(owner: Rule, sub: Rule) -> bool:
    """``ruleCovers``: does ``owner`` grant everything the (broken-down) ``sub`` rule does?"""
    o_verbs, o_groups = _strs(owner, "verbs"), _strs(owner, "apiGroups")
    o_names = _strs(owner, "resourceNames")
    s_names = _strs(sub, "resourceNames")
    verbs = ALL in o_verbs or _has_all(o_verbs, _strs(sub, "verbs"))
    groups = ALL in o_groups or _has_all(o_groups, _strs(sub, "apiGroups"))
    resources = _resource_covers_all(_strs(owner, "resources"), _strs(sub, "resources"))
    o_urls = _strs(owner, "nonResourceURLs")
    urls = all(any(_url_covers(o, s) for o in o_urls) for s in _strs(sub, "nonResourceURLs"))
    names = not o_names if not s_names else (not o_names or _has_all(o_names, s_names))
    return verbs and groups and resources and names and urls


def covers(owner_rules: list[Rule], servant_rules: list[Rule]) -> tuple[bool, list[Rule]]:
    """``validation.Covers``: (covered, the broken-down rules no owner rule covers)."""
    missing = [
        sub
        for servant in servant_rules
        for sub in breakdown_rule(servant)
        if not any(rule_covers(o, sub) for o in owner_rules)
    ]
    return not missing, missing


def _go_quote_list(values: list[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def go_quote(value: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``) for the printable text these messages carry."""
    out = []
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def compact_string(rule: Rule) -> str:
    """``rbacv1helpers.CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["create"]}``."""
    parts = []
    for key, label in (
        ("apiGroups", "APIGroups"),
        ("resources", "Resources"),
        ("nonResourceURLs", "NonResourceURLs"),
        ("resourceNames", "ResourceNames"),
        ("verbs", "Verbs"),
    ):
        values = _strs(rule, key)
        if values:
            parts.append(f"{label}:{_go_quote_list(values)}")
    return "{" + ", ".join(parts) + "}"


def compact_rules(rules: list[Rule]) -> list[Rule]:
    """``CompactRules``: merge the verbs of rules naming one group, one resource and at most one name."""
    compacted: list[Rule] = []
    simple: dict[tuple[str, str, tuple[str, ...]], Rule] = {}
    for r in rules:
        groups, resources, names = _strs(r, "apiGroups"), _strs(r, "resources"), _strs(r, "resourceNames")
        extra = set(r) - {"verbs", "apiGroups", "resources", "resourceNames"}
        if len(groups) != 1 or len(resources) != 1 or len(names) > 1 or extra:
            compacted.append(r)
            continue
        key = (groups[0], resources[0], tuple(names))
        if key in simple:
            verbs = simple[key]["verbs"]
            verbs.extend(v for v in _strs(r, "verbs") if v not in verbs)
        else:
            simple[key] = {**r, "verbs": list(_strs(r, "verbs"))}
    return compacted + list(simple.values())


def escalation_message(user: UserInfo, missing: list[Rule], resolution_errors: list[str]) -> str:
    """``newPrivilegeEscalationError``'s text (the compacted missing rules sorted, one per line)."""
    lines = sorted({compact_string(r) for r in compact_rules(missing)})
    msg = (
        f'user "{user.username}" (groups={_go_quote_list(list(user.groups))}) is attempting to grant RBAC '
        "permissions not currently held:\n" + "\n".join(lines)
    )
    if resolution_errors:
        msg += "; resolution errors: [" + " ".join(resolution_errors) + "]"
    return msg


def confirm_no_escalation(
    resolver: RuleResolver, user: UserInfo, namespace: str, rules: list[Rule]
) -> str | None:
    """``ConfirmNoEscalation``: None when ``user`` already holds ``rules`` in ``namespace``, else the message."""
    owner, errs = resolver.rules_for(user, namespace)
    ok, missing = covers(owner, rules)
    return None if ok else escalation_message(user, missing, errs)
