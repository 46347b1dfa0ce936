"""What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share: pairing policies with bindings,
matching, parameter resolution, match conditions and variables (kube's ``policy/generic``).

Policies and bindings are read from the store on every request (no cache to go stale: a binding
created a moment ago applies to the next write, as kube's informer-fed dispatcher eventually
does). A policy without a binding does nothing; a binding naming a missing policy is skipped.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver.admission import Attributes
from apiserver.admission.policy.authorizing import authorizer_for
from apiserver.admission.policy.matching import (
    PolicyLookup,
    match_resources,
    namespace_object,
    selector_matches,
)
from apiserver.admission.policy.request import admission_request, view_of
from apiserver.api.types import Obj
from apiserver.cel import CompileError, EvalError, compile_expression
from apiserver.cel.admission import policy_env, rewrite_struct_literals
from apiserver.meta import new_uid
from apiserver.rest.resources import ResourceDef

GROUP = "admissionregistration.k8s.io"

REASON_CODES = {"Invalid": 422, "Forbidden": 403, "RequestEntityTooLarge": 413}


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _name(obj: Obj) -> str:
    return str(_dict(obj.get("metadata")).get("name") or "")


class ConfigurationError(Exception):
    """A policy or binding that cannot be applied (missing param kind, paramRef …): failurePolicy decides."""


@dataclass
class Evaluation:
    """One (policy, binding, params) triple that matched the request, with its CEL activation."""

    policy: Obj
    binding: Obj
    activation: dict[str, Any]
    failure_policy: str
    #: the resource version the policy matched the request through: ``object``/``oldObject`` are in it
    matched: ResourceDef | None = None


@dataclass
class Pairing:
    """Every evaluation of a request plus the configuration errors met on the way."""

    evaluations: list[Evaluation] = field(default_factory=list)
    errors: list[tuple[Obj, Obj, str]] = field(default_factory=list)  # (policy, binding, message)


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate with only the variables the expression mentions converted into CEL values (the
    others are bound to null: converting an object it never reads is most of an evaluation's cost)."""
    program = compile_expression(policy_env(params=True), rewrite_struct_literals(expression))
    used = program.references()
    return program.evaluate({k: (v if k in used else None) for k, v in activation.items()})


def policy_denied(attrs: Attributes, message: str, reason: str = "") -> errors.StatusError:
    """kube's ``admission.NewForbidden`` with the decision's reason and code (Invalid, 422, by default)."""
    reason = reason or "Invalid"
    e = errors.forbidden(attrs.rd.plural, attrs.name or _name(attrs.obj or {}), attrs.rd.group, message)
    e.reason = reason
    e.code = REASON_CODES.get(reason, 422)
    details = dict(e.details or {})
    details["causes"] = [{"message": message}]
    e.details = details
    return e


def _params(policy: Obj, binding: Obj, attrs: Attributes, api: PolicyLookup) -> list[Any] | None:
    """The parameter objects to evaluate with ([None] without paramKind); None: none found and the
    binding says Allow. Raises ConfigurationError / a denial for the Deny action."""
    kind = _dict(policy.get("spec")).get("paramKind")
    ref = _dict(binding.get("spec")).get("paramRef")
    if kind is None:
        return [None]
    if ref is None:
        raise ConfigurationError(
            f"paramKind kind `{kind.get('apiVersion')}, Kind={kind.get('kind')}` exists, but paramRef is nil"
        )
    rd = api.registry.by_api_version_kind(str(kind.get("apiVersion") or ""), str(kind.get("kind") or ""))
    if rd is None:
        raise ConfigurationError(
            f"failed to find resource referenced by paramKind: '{kind.get('apiVersion')}, Kind={kind.get('kind')}'"
        )
    ns = ""
    if rd.namespaced:
        ns = str(ref.get("namespace") or attrs.namespace or "")
        if not ns:
            raise ConfigurationError(
                "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
            )
    group, plural = rd.storage_key
    found: list[Obj] = []
    if ref.get("name"):
        obj = api.peek(group, plural, ns, str(ref["name"]))
        if obj is not None:
            found = [obj]
    else:
        selector = ref.get("selector") or {}
        found = [
            o
            for o in api.peek_all(group, plural, ns)
            if selector_matches(selector, _dict(_dict(o.get("metadata")).get("labels")))
        ]
    if not found:
        if ref.get("parameterNotFoundAction") == "Allow":
            return None
        raise policy_denied(
            attrs,
            f"{policy_kind(policy)} '{_name(policy)}' with binding '{_name(binding)}' denied request: "
            "no params found for policy binding with `Deny` parameterNotFoundAction",
        )
    return [view_of(api, rd, o) for o in found]


def policy_kind(policy: Obj) -> str:
    return str(policy.get("kind") or "ValidatingAdmissionPolicy")


def match_conditions_pass(conditions: list[Any], activation: dict[str, Any]) -> tuple[bool, str]:
    """(all true, error text). kube evaluates every condition: a false one wins over an error."""
    error = ""
    for mc in conditions:
        mc = _dict(mc)
        try:
            result = evaluate(str(mc.get("expression") or ""), activation)
        except (EvalError, CompileError) as e:
            error = error or f"failed to evaluate match condition '{mc.get('name')}': {e}"
            continue
        if result is False:
            return False, ""
        if not isinstance(result, bool):
            error = error or f"match condition '{mc.get('name')}' must evaluate to bool"
    return (not error), error


def bind_variables(variables: list[Any], activation: dict[str, Any]) -> None:
    """Composited variables, in order; one that fails to evaluate is left out (an expression using it
    then fails with ``no such key``, where kube reports the variable's own error)."""
    values: dict[str, Any] = {}
    activation["variables"] = values
    for v in variables:
        v = _dict(v)
        try:
            values[str(v.get("name"))] = evaluate(str(v.get("expression") or ""), activation)
        except (EvalError, CompileError):
            continue


def may_apply(attrs: Attributes, api: PolicyLookup, policy_plural: str, binding_plural: str) -> bool:
    """False when no policy of the kind can apply to the request: it is an admissionregistration
    object, or no policy or no binding is stored. Two counts, so the plugins ask it before they
    set up anything for an evaluation (the authorizer context of CEL's ``authorizer``)."""
    return may_apply_to(attrs.rd, api, policy_plural, binding_plural)


def may_apply_to(rd: Any, api: PolicyLookup, policy_plural: str, binding_plural: str) -> bool:
    """:func:`may_apply` by the resource alone (it looks at nothing else of the request)."""
    if rd.group == GROUP:
        return False  # policies and webhooks never apply to admissionregistration objects
    return bool(api.stored_count(GROUP, binding_plural)) and bool(api.stored_count(GROUP, policy_plural))


def pairings(attrs: Attributes, api: PolicyLookup, policy_plural: str, binding_plural: str) -> Pairing | None:
    """Every (policy, binding, params) that applies to the request, with its activation; None: no
    policy or binding exists (the cheap common case)."""
    if not may_apply(attrs, api, policy_plural, binding_plural):
        return None
    policies = api.peek_all(GROUP, policy_plural)
    if not policies:
        return None
    bindings = api.peek_all(GROUP, binding_plural)
    if not bindings:
        return None
    by_policy: dict[str, list[Obj]] = {}
    for b in bindings:
        by_policy.setdefault(str(_dict(b.get("spec")).get("policyName") or ""), []).append(b)
    out = Pairing()
    # one request per matched version (uid included), as kube's VersionedAttributes are per version
    requests: dict[tuple[str, str, str], Obj] = {}
    for policy in sorted(policies, key=_name):
        mine = sorted(by_policy.get(_name(policy), []), key=_name)
        if not mine:
            continue
        spec = _dict(policy.get("spec"))
        matched = match_resources(spec.get("matchConstraints"), attrs, api, constrain_rules=True)
        if matched is None:
            continue
        for binding in mine:
            mr = _dict(binding.get("spec")).get("matchResources")
            if mr is not None and match_resources(mr, attrs, api, constrain_rules=False) is None:
                continue
            failure = str(spec.get("failurePolicy") or "Fail")
            try:
                params = _params(policy, binding, attrs, api)
            except ConfigurationError as e:
                if failure == "Fail":
                    out.errors.append((policy, binding, f"failed to configure binding: {e}"))
                continue
            if params is None:
                continue
            key = (matched.group, matched.version, matched.plural)
            if key not in requests:
                requests[key] = admission_request(attrs, api, new_uid(), matched)
            request = requests[key]
            for param in params:
                activation = base_activation(attrs, api, request, param)
                ok, err = match_conditions_pass(_list(spec.get("matchConditions")), activation)
                if err:
                    if failure == "Fail":
                        out.errors.append((policy, binding, err))
                    continue
                if not ok:
                    continue
                bind_variables(_list(spec.get("variables")), activation)
                out.evaluations.append(Evaluation(policy, binding, activation, failure, matched))
    return out


def base_activation(attrs: Attributes, api: PolicyLookup, request: Obj, param: Any) -> dict[str, Any]:
    cel_request = {k: v for k, v in request.items() if k not in ("object", "oldObject")}
    return {
        "object": request.get("object"),
        "oldObject": request.get("oldObject"),
        "request": cel_request,
        "params": param,
        "namespaceObject": copy.deepcopy(namespace_object(attrs, api)),
        "variables": {},
        "authorizer": authorizer_for(attrs),
    }
