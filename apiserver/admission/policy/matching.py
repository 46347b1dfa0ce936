"""Which requests a webhook or an admission policy applies to (kube's ``admission/plugin/webhook/predicates``
and ``policy/matching``).

A rule names operations, API groups, versions and resources (``*`` wildcards; ``pods/status``,
``pods/*``, ``*/status`` and ``*/*`` for subresources, while a bare ``*`` matches main resources
only) and a scope. With ``matchPolicy: Equivalent`` a request also matches through another
version of the same stored resource (``autoscaling/v1`` vs ``v2`` HorizontalPodAutoscalers, a
custom resource's versions, ``events.k8s.io`` vs core events), as kube's equivalent-resource
mapper does. ``namespaceSelector`` is checked against the namespace's labels (a Namespace
request against its own; cluster-scoped objects always match) and ``objectSelector`` against the
new or the old object's labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from apiserver.admission import Attributes, Lookup
from apiserver.api.types import Obj
from apiserver.rest.resources import Registry, ResourceDef
from apiserver.selectors import label_selector_from_dict


class PolicyLookup(Lookup, Protocol):
    """What the admission extension points read beyond :class:`Lookup`: the served resources, and the
    conversion of stored objects to the version a request used."""

    registry: Registry

    def stored_count(self, group: str, plural: str) -> int: ...

    def to_view(self, rd: ResourceDef, obj: Obj) -> Obj: ...

    def from_view(self, rd: ResourceDef, obj: Obj) -> Obj: ...


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _in(values: list[Any], value: str) -> bool:
    return "*" in values or value in values


def _resource_matches(patterns: list[Any], resource: str, subresource: str) -> bool:
    for p in patterns:
        if not isinstance(p, str):
            continue
        res, _, sub = p.partition("/")
        if "/" not in p:
            if not subresource and (res == "*" or res == resource):
                return True
            continue
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def rule_matches(rule: Any, operation: str, rd: ResourceDef, subresource: str) -> bool:
    """One ``RuleWithOperations`` against a request on ``rd`` (and ``subresource``)."""
    rule = _dict(rule)
    if not _in(_list(rule.get("operations")), operation):
        return False
    if not _in(_list(rule.get("apiGroups")), rd.group):
        return False
    if not _in(_list(rule.get("apiVersions")), rd.version):
        return False
    if not _resource_matches(_list(rule.get("resources")), rd.plural, subresource):
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster":
        return not rd.namespaced
    if scope == "Namespaced":
        return rd.namespaced
    return True


def equivalents(registry: Registry | None, rd: ResourceDef) -> list[ResourceDef]:
    """Other served versions of the same stored resource (kube's equivalent resources), ``rd`` first."""
    out = [rd]
    if registry is None:
        return out
    for other in registry.all():
        if other is not rd and other.storage_key == rd.storage_key and other.plural == rd.plural:
            out.append(other)
    for other in registry.all():
        if other is not rd and other not in out and other.storage_key == rd.storage_key:
            out.append(other)
    return out


def match_rules(
    rules: Iterable[Any],
    operation: str,
    rd: ResourceDef,
    subresource: str,
    policy: str,
    registry: Registry | None,
) -> ResourceDef | None:
    """The resource version a request matches ``rules`` through (``rd`` itself or, with ``Equivalent``,
    another version of its stored resource); None if none."""
    rules = list(rules)
    if any(rule_matches(r, operation, rd, subresource) for r in rules):
        return rd
    if policy != "Equivalent":
        return None
    for other in equivalents(registry, rd)[1:]:
        if any(rule_matches(r, operation, other, subresource) for r in rules):
            return other
    return None


def _labels(obj: Obj | None) -> dict[str, str]:
    return _dict(_dict((obj or {}).get("metadata")).get("labels"))


def namespace_object(attrs: Attributes, api: Lookup) -> Obj | None:
    """The request's namespace object (None for cluster-scoped requests or a missing namespace)."""
    if attrs.rd.group == "" and attrs.rd.plural == "namespaces":
        return attrs.obj if attrs.obj is not None else attrs.old
    if not attrs.rd.namespaced or not attrs.namespace:
        return None
    return api.peek("", "namespaces", "", attrs.namespace)


def selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    """A ``metav1.LabelSelector``; an empty (or absent) selector matches everything."""
    if not selector:
        return True
    try:
        return label_selector_from_dict(selector).matches(labels)
    except ValueError:
        return False


def namespace_selector_matches(selector: Any, attrs: Attributes, api: Lookup) -> bool:
    if not selector:
        return True
    is_namespace = attrs.rd.group == "" and attrs.rd.plural == "namespaces"
    if not attrs.rd.namespaced and not is_namespace:
        return True
    ns = namespace_object(attrs, api)
    return selector_matches(selector, _labels(ns))


def object_selector_matches(selector: Any, attrs: Attributes) -> bool:
    if not selector:
        return True
    return selector_matches(selector, _labels(attrs.obj)) or (
        attrs.old is not None and selector_matches(selector, _labels(attrs.old))
    )


def match_resources(
    mr: Any, attrs: Attributes, api: PolicyLookup, *, constrain_rules: bool
) -> ResourceDef | None:
    """A policy's ``matchConstraints`` or a binding's ``matchResources``: the matched resource version,
    or None. ``constrain_rules`` False: empty ``resourceRules`` (a binding's) match every resource."""
    mr = _dict(mr)
    if not namespace_selector_matches(mr.get("namespaceSelector"), attrs, api):
        return None
    if not object_selector_matches(mr.get("objectSelector"), attrs):
        return None
    registry = getattr(api, "registry", None)
    policy = mr.get("matchPolicy") or "Equivalent"
    for rule in _list(mr.get("excludeResourceRules")):
        if _named_rule_matches(rule, attrs) and match_rules(
            [rule], attrs.operation, attrs.rd, attrs.subresource, policy, registry
        ):
            return None
    rules = [r for r in _list(mr.get("resourceRules")) if _named_rule_matches(r, attrs)]
    if not _list(mr.get("resourceRules")) and not constrain_rules:
        return attrs.rd
    return match_rules(rules, attrs.operation, attrs.rd, attrs.subresource, policy, registry)


def _named_rule_matches(rule: Any, attrs: Attributes) -> bool:
    names = _list(_dict(rule).get("resourceNames"))
    return not names or attrs.name in names
