"""Validation of admissionregistration.k8s.io/v1 objects (kube's ``pkg/apis/admissionregistration/validation``).

Webhook configurations, ValidatingAdmissionPolicy / MutatingAdmissionPolicy and their bindings.
Field paths and messages follow kube's; CEL expressions are compiled against the environments
the admission plugins evaluate them in (:mod:`apiserver.admission.policy.celenv`), so an
expression naming an undeclared variable is refused at write time as kube's compiler does
(without cel-go's type checker: see :mod:`apiserver.cel`).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from apiserver import field
from apiserver.cel import CompileError, Environment, compile_expression
from apiserver.cel import admission as celenv
from apiserver.field import ErrorList, Path
from apiserver.validation import names
from apiserver.validation.meta import validate_label_selector

FAILURE_POLICIES = ["Fail", "Ignore"]
MATCH_POLICIES = ["Equivalent", "Exact"]
SIDE_EFFECTS_ALL = ["None", "NoneOnDryRun", "Some", "Unknown"]
SIDE_EFFECTS_NONE = ["None", "NoneOnDryRun"]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
REINVOCATION = ["IfNeeded", "Never"]
SCOPES = ["*", "Cluster", "Namespaced"]
VALIDATION_ACTIONS = ["Audit", "Deny", "Warn"]
POLICY_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
PATCH_TYPES = ["ApplyConfiguration", "JSONPatch"]
ACCEPTED_REVIEW_VERSIONS = ["v1", "v1beta1"]
MAX_AUDIT_ANNOTATIONS = 20
MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024

_CEL_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def is_cel_identifier(name: str) -> bool:
    return bool(_CEL_IDENT.match(name)) and name not in _CEL_RESERVED


def is_fully_qualified_name(path: Path, name: str) -> ErrorList:
    """``utilvalidation.IsFullyQualifiedName``: a DNS subdomain with at least three segments."""
    if not name:
        return [field.required(path, "")]
    errs = [field.invalid(path, name, m) for m in names.is_dns1123_subdomain(name)]
    if errs:
        return errs
    if len(name.split(".")) < 3:
        return [
            field.invalid(path, name, "should be a domain with at least three segments separated by dots")
        ]
    return []


# ------------------------------------------------------------------------------------- rules


def _has_wildcard(values: list[Any]) -> bool:
    return "*" in values


def validate_resources(resources: list[Any], path: Path) -> ErrorList:
    """``validateResources``: resources with subresources and their wildcard combinations."""
    errs: ErrorList = []
    if not resources:
        errs.append(field.required(path, ""))
    with_wild_sub: set[str] = set()
    wild_res_subs: set[str] = set()
    double = single = plain = False
    for i, res_sub in enumerate(resources):
        res_sub = _str(res_sub)
        if not res_sub:
            errs.append(field.required(path.index(i), ""))
            continue
        if res_sub == "*/*":
            double = True
        if res_sub == "*":
            single = True
        parts = res_sub.split("/", 1)
        if len(parts) == 1:
            plain = res_sub != "*"
            continue
        res, sub = parts
        if res in with_wild_sub:
            errs.append(
                field.invalid(path.index(i), res_sub, f"if '{res}/*' is present, must not specify {res_sub}")
            )
        if sub in wild_res_subs:
            errs.append(
                field.invalid(path.index(i), res_sub, f"if '*/{sub}' is present, must not specify {res_sub}")
            )
        if sub == "*":
            with_wild_sub.add(res)
        if res == "*":
            wild_res_subs.add(sub)
    if len(resources) > 1 and double:
        errs.append(field.invalid(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(
            field.invalid(
                path, resources, "if '*' is present, must not specify other resources without subresources"
            )
        )
    return errs


def validate_rule(rule: dict[str, Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    groups = _list(rule.get("apiGroups"))
    versions = _list(rule.get("apiVersions"))
    if not groups:
        errs.append(field.required(path.child("apiGroups"), ""))
    if len(groups) > 1 and _has_wildcard(groups):
        errs.append(
            field.invalid(
                path.child("apiGroups"), groups, "if '*' is present, must not specify other API groups"
            )
        )
    if not versions:
        errs.append(field.required(path.child("apiVersions"), ""))
    if len(versions) > 1 and _has_wildcard(versions):
        errs.append(
            field.invalid(
                path.child("apiVersions"), versions, "if '*' is present, must not specify other API versions"
            )
        )
    for i, v in enumerate(versions):
        if not v:
            errs.append(field.required(path.child("apiVersions").index(i), ""))
    errs.extend(validate_resources(_list(rule.get("resources")), path.child("resources")))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        errs.append(field.not_supported(path.child("scope"), scope, SCOPES))
    return errs


def validate_rule_with_operations(rule: Any, path: Path) -> ErrorList:
    rule = _dict(rule)
    errs: ErrorList = []
    ops = _list(rule.get("operations"))
    if not ops:
        errs.append(field.required(path.child("operations"), ""))
    if len(ops) > 1 and _has_wildcard(ops):
        errs.append(
            field.invalid(
                path.child("operations"), ops, "if '*' is present, must not specify other operations"
            )
        )
    for i, op in enumerate(ops):
        if op not in OPERATIONS:
            errs.append(field.not_supported(path.child("operations").index(i), op, OPERATIONS))
    errs.extend(validate_rule(rule, path))
    return errs


def validate_named_rule(rule: Any, path: Path) -> ErrorList:
    rule = _dict(rule)
    errs: ErrorList = []
    seen: set[str] = set()
    for i, rname in enumerate(_list(rule.get("resourceNames"))):
        rname = _str(rname)
        errs.extend(
            field.invalid(path.child("resourceNames").index(i), rname, m)
            for m in names.is_valid_path_segment_name(rname)
        )
        if rname in seen:
            errs.append(field.duplicate(path.child("resourceNames").index(i), rname))
        seen.add(rname)
    errs.extend(validate_rule_with_operations(rule, path))
    return errs


def validate_match_resources(mr: Any, path: Path) -> ErrorList:
    """``validateMatchResources`` (after defaulting: matchPolicy and both selectors are set)."""
    if mr is None:
        return []
    mr = _dict(mr)
    errs: ErrorList = []
    mp = mr.get("matchPolicy")
    if mp is None:
        errs.append(field.required(path.child("matchPolicy"), ""))
    elif mp not in MATCH_POLICIES:
        errs.append(field.not_supported(path.child("matchPolicy"), mp, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        sel = mr.get(key)
        if sel is None:
            errs.append(field.required(path.child(key), ""))
        else:
            errs.extend(validate_label_selector(_dict(sel), path.child(key)))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(_list(mr.get(key))):
            errs.extend(validate_named_rule(rule, path.child(key).index(i)))
    return errs


# ---------------------------------------------------------------------------------------- CEL


def compile_errors(env: Environment, expression: str, path: Path) -> ErrorList:
    """A compile failure as kube's ``convertCELErrorToValidationError``."""
    try:
        compile_expression(env, celenv.rewrite_struct_literals(expression))
    except CompileError as e:
        if e.kind == "Required":
            return [field.required(path, e.detail)]
        return [field.invalid(path, expression, e.detail)]
    return []


def validate_match_conditions(conds: list[Any], path: Path, *, params: bool) -> ErrorList:
    errs: ErrorList = []
    if len(conds) > 64:
        errs.append(field.too_many(path, len(conds), 64))
    seen: set[str] = set()
    env = celenv.match_condition_env(params=params)
    for i, raw in enumerate(conds):
        mc = _dict(raw)
        p = path.index(i)
        expr = _str(mc.get("expression")).strip()
        if not expr:
            errs.append(field.required(p.child("expression"), ""))
        else:
            errs.extend(compile_errors(env, expr, p.child("expression")))
        name = _str(mc.get("name"))
        if not name:
            errs.append(field.required(p.child("name"), ""))
        else:
            errs.extend(field.invalid(p.child("name"), name, m) for m in names.is_qualified_name(name))
            if name in seen:
                errs.append(field.duplicate(p.child("name"), name))
            seen.add(name)
    return errs


def validate_variables(variables: list[Any], path: Path, *, params: bool) -> ErrorList:
    errs: ErrorList = []
    env = celenv.policy_env(params=params)
    for i, raw in enumerate(variables):
        v = _dict(raw)
        p = path.index(i)
        name = _str(v.get("name"))
        if not name.strip():
            errs.append(field.required(p.child("name"), "name is not specified"))
        elif not is_cel_identifier(name):
            errs.append(field.invalid(p.child("name"), name, "name is not a valid CEL identifier"))
        expr = _str(v.get("expression"))
        if not expr.strip():
            errs.append(field.required(p.child("expression"), "expression is not specified"))
        else:
            errs.extend(compile_errors(env, expr, p.child("expression")))
    return errs


def validate_param_kind(pk: Any, path: Path) -> ErrorList:
    pk = _dict(pk)
    errs: ErrorList = []
    api_version = _str(pk.get("apiVersion"))
    if not api_version:
        errs.append(field.required(path.child("apiVersion"), ""))
    elif api_version.count("/") > 1:
        errs.append(
            field.invalid(
                path.child("apiVersion"), api_version, f"unexpected GroupVersion string: {api_version}"
            )
        )
    else:
        group, _, version = api_version.rpartition("/")
        if group:
            msgs = names.is_dns1123_subdomain(group)
            if msgs:
                errs.append(field.invalid(path.child("apiVersion"), group, ",".join(msgs)))
        if not version:
            errs.append(field.invalid(path.child("apiVersion"), api_version, "version must be specified"))
        else:
            msgs = names.is_dns1035_label(version)
            if msgs:
                errs.append(field.invalid(path.child("apiVersion"), version, ",".join(msgs)))
    kind = _str(pk.get("kind"))
    if not kind:
        errs.append(field.required(path.child("kind"), ""))
    else:
        msgs = names.is_dns1035_label(kind.lower())
        if msgs:
            errs.append(
                field.invalid(
                    path.child("kind"),
                    kind,
                    "may have mixed case, but should otherwise match: " + ",".join(msgs),
                )
            )
    return errs


def validate_param_ref(pr: Any, path: Path) -> ErrorList:
    if pr is None:
        return []
    pr = _dict(pr)
    errs: ErrorList = []
    name = _str(pr.get("name"))
    selector = pr.get("selector")
    if name:
        errs.extend(
            field.invalid(path.child("name"), name, m) for m in names.is_valid_path_segment_name(name)
        )
        if selector is not None:
            errs.append(field.forbidden(path.child("name"), "name and selector are mutually exclusive"))
    if selector is not None:
        errs.extend(validate_label_selector(_dict(selector), path.child("selector")))
        if name:
            errs.append(field.forbidden(path.child("selector"), "name and selector are mutually exclusive"))
    if not name and selector is None:
        errs.append(field.required(path, "one of name or selector must be specified"))
    action = pr.get("parameterNotFoundAction")
    if not action:
        errs.append(field.required(path.child("parameterNotFoundAction"), ""))
    elif action not in ("Deny", "Allow"):
        errs.append(field.not_supported(path.child("parameterNotFoundAction"), action, ["Deny", "Allow"]))
    return errs


def _failure_policy(spec: dict[str, Any], path: Path) -> ErrorList:
    fp = spec.get("failurePolicy")
    if fp is None:
        return [field.required(path.child("failurePolicy"), "")]
    if fp not in FAILURE_POLICIES:
        return [field.not_supported(path.child("failurePolicy"), fp, FAILURE_POLICIES)]
    return []


def _constraints(spec: dict[str, Any], path: Path) -> ErrorList:
    mc = spec.get("matchConstraints")
    if mc is None:
        return [field.required(path.child("matchConstraints"), "")]
    errs = validate_match_resources(mc, path.child("matchConstraints"))
    if not _list(_dict(mc).get("resourceRules")):
        errs.append(field.required(path.child("matchConstraints", "resourceRules"), ""))
    return errs


# ------------------------------------------------------------------------------------ webhooks


def validate_webhook_url(path: Path, url: str) -> ErrorList:
    """``webhook.ValidateWebhookURL`` with https forced."""
    try:
        u = urlsplit(url)
    except ValueError as e:
        return [field.invalid(path, url, f"url must be a valid URL: {e}")]
    errs: ErrorList = []
    if u.scheme != "https":
        errs.append(field.invalid(path, u.scheme, "'https' is the only allowed URL scheme"))
    if not u.hostname:
        errs.append(field.invalid(path, u.netloc, "host must be specified"))
    if "@" in u.netloc:
        errs.append(
            field.invalid(path, u.netloc.rsplit("@", 1)[0], "user information is not permitted in the URL")
        )
    if u.fragment or url.endswith("#"):
        errs.append(field.invalid(path, u.fragment, "fragments are not permitted in the URL"))
    if u.query or url.endswith("?"):
        errs.append(field.invalid(path, u.query, "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(path: Path, svc: dict[str, Any]) -> ErrorList:
    """``webhook.ValidateWebhookService``."""
    errs: ErrorList = []
    if not svc.get("name"):
        errs.append(field.required(path.child("name"), "service name is required"))
    if not svc.get("namespace"):
        errs.append(field.required(path.child("namespace"), "service namespace is required"))
    port = svc.get("port")
    if isinstance(port, int) and not isinstance(port, bool):
        msgs = names.is_valid_port_num(port)
        if msgs:
            errs.append(field.invalid(path.child("port"), port, "port is not valid: " + ", ".join(msgs)))
    p = svc.get("path")
    if p is None or p == "/":
        return errs
    p = _str(p)
    if not p.startswith("/"):
        errs.append(field.invalid(path.child("path"), p, "must start with a '/'"))
    steps = p.strip("/").split("/") if p.startswith("/") else []
    for i, step in enumerate(steps):
        if not step:
            errs.append(field.invalid(path.child("path"), p, f"segment[{i}] may not be empty"))
            continue
        msgs = names.is_dns1123_subdomain(step)
        for m in msgs:
            errs.append(field.invalid(path.child("path"), p, f"segment[{i}]: {m}"))
    return errs


def validate_webhook(
    hook: Any, path: Path, *, mutating: bool, require_no_side_effects: bool = True
) -> ErrorList:
    hook = _dict(hook)
    errs = is_fully_qualified_name(path.child("name"), _str(hook.get("name")))
    for i, rule in enumerate(_list(hook.get("rules"))):
        errs.extend(validate_rule_with_operations(rule, path.child("rules").index(i)))
    fp = hook.get("failurePolicy")
    if fp is not None and fp not in FAILURE_POLICIES:
        errs.append(field.not_supported(path.child("failurePolicy"), fp, FAILURE_POLICIES))
    mp = hook.get("matchPolicy")
    if mp is not None and mp not in MATCH_POLICIES:
        errs.append(field.not_supported(path.child("matchPolicy"), mp, MATCH_POLICIES))
    allowed = SIDE_EFFECTS_NONE if require_no_side_effects else SIDE_EFFECTS_ALL
    se = hook.get("sideEffects")
    if se is None:
        errs.append(field.required(path.child("sideEffects"), "must specify one of " + ", ".join(allowed)))
    elif se not in allowed:
        errs.append(field.not_supported(path.child("sideEffects"), se, allowed))
    ts = hook.get("timeoutSeconds")
    if isinstance(ts, int) and not isinstance(ts, bool) and (ts > 30 or ts < 1):
        errs.append(
            field.invalid(
                path.child("timeoutSeconds"), ts, "the timeout value must be between 1 and 30 seconds"
            )
        )
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            errs.extend(validate_label_selector(_dict(hook.get(key)), path.child(key)))
    if mutating:
        rp = hook.get("reinvocationPolicy")
        if rp is not None and rp not in REINVOCATION:
            errs.append(field.not_supported(path.child("reinvocationPolicy"), rp, REINVOCATION))
    cc = _dict(hook.get("clientConfig"))
    url, svc = cc.get("url"), cc.get("service")
    cp = path.child("clientConfig")
    if (url is None) == (svc is None):
        errs.append(field.required(cp, "exactly one of url or service is required"))
    elif url is not None:
        errs.extend(validate_webhook_url(cp.child("url"), _str(url)))
    else:
        errs.extend(validate_webhook_service(cp.child("service"), _dict(svc)))
    errs.extend(
        validate_match_conditions(
            _list(hook.get("matchConditions")), path.child("matchConditions"), params=False
        )
    )
    return errs


def validate_review_versions(versions: list[Any], path: Path) -> ErrorList:
    if not versions:
        return [field.required(path, "must specify one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS))]
    errs: ErrorList = []
    seen: set[str] = set()
    accepted = False
    for i, v in enumerate(versions):
        v = _str(v)
        if v in seen:
            errs.append(field.invalid(path.index(i), v, "duplicate version"))
            continue
        seen.add(v)
        errs.extend(field.invalid(path.index(i), v, m) for m in names.is_dns1035_label(v))
        accepted = accepted or v in ACCEPTED_REVIEW_VERSIONS
    if not accepted:
        errs.append(
            field.invalid(
                path, versions, "must include at least one of " + ", ".join(ACCEPTED_REVIEW_VERSIONS)
            )
        )
    return errs


def validate_webhook_configuration(
    obj: dict[str, Any], *, mutating: bool, old: dict[str, Any] | None = None
) -> ErrorList:
    """``validate{Validating,Mutating}WebhookConfiguration``; an update keeps what the old object
    was allowed (side effects other than None, duplicate names), as kube's ratcheting does."""
    old_hooks = [_dict(h) for h in _list((old or {}).get("webhooks"))]
    no_side_effects = old is None or all(h.get("sideEffects") in SIDE_EFFECTS_NONE for h in old_hooks)
    unique = old is None or len({h.get("name") for h in old_hooks}) == len(old_hooks)
    errs: ErrorList = []
    seen: set[str] = set()
    for i, hook in enumerate(_list(obj.get("webhooks"))):
        p = Path("webhooks").index(i)
        errs.extend(validate_webhook(hook, p, mutating=mutating, require_no_side_effects=no_side_effects))
        errs.extend(
            validate_review_versions(
                _list(_dict(hook).get("admissionReviewVersions")), p.child("admissionReviewVersions")
            )
        )
        name = _str(_dict(hook).get("name"))
        if unique and name:
            if name in seen:
                errs.append(field.duplicate(p.child("name"), name))
            seen.add(name)
    return errs


# ------------------------------------------------------------------------------------ policies


def _policy_common(spec: dict[str, Any], sp: Path, params: bool) -> ErrorList:
    """What both policy kinds validate alike: failurePolicy, paramKind, matchConstraints,
    matchConditions and variables (the CEL environments know ``params`` only with a paramKind)."""
    errs = _failure_policy(spec, sp)
    if params:
        errs.extend(validate_param_kind(spec.get("paramKind"), sp.child("paramKind")))
    errs.extend(_constraints(spec, sp))
    errs.extend(
        validate_match_conditions(
            _list(spec.get("matchConditions")), sp.child("matchConditions"), params=params
        )
    )
    errs.extend(validate_variables(_list(spec.get("variables")), sp.child("variables"), params=params))
    return errs


def validate_validating_policy(obj: dict[str, Any]) -> ErrorList:
    """``validateValidatingAdmissionPolicySpec``."""
    spec = _dict(obj.get("spec"))
    sp = Path("spec")
    params = spec.get("paramKind") is not None
    errs = _policy_common(spec, sp, params)
    validations = _list(spec.get("validations"))
    audits = _list(spec.get("auditAnnotations"))
    if not validations and not audits:
        msg = "validations or auditAnnotations must contain at least one item"
        errs.append(field.required(sp.child("validations"), msg))
        errs.append(field.required(sp.child("auditAnnotations"), msg))
        return errs
    env = celenv.policy_env(params=params)
    msg_env = celenv.message_env(params=params)
    for i, raw in enumerate(validations):
        v = _dict(raw)
        p = sp.child("validations").index(i)
        expr = _str(v.get("expression"))
        if not expr.strip():
            errs.append(field.required(p.child("expression"), "expression is not specified"))
        else:
            errs.extend(compile_errors(env, expr, p.child("expression")))
        mexpr = _str(v.get("messageExpression"))
        if mexpr and not mexpr.strip():
            errs.append(field.invalid(p.child("messageExpression"), mexpr, "must be non-empty if specified"))
        elif mexpr.strip():
            errs.extend(compile_errors(msg_env, mexpr, p.child("messageExpression")))
        msg = _str(v.get("message"))
        if msg and not msg.strip():
            errs.append(field.invalid(p.child("message"), msg, "message must be non-empty if specified"))
        elif re.search(r"[\n\r]", msg.strip()):
            errs.append(field.invalid(p.child("message"), msg, "message must not contain line breaks"))
        reason = v.get("reason")
        if reason is not None and reason not in POLICY_REASONS:
            errs.append(field.not_supported(p.child("reason"), reason, POLICY_REASONS))
    if len(audits) > MAX_AUDIT_ANNOTATIONS:
        errs.append(
            field.invalid(
                sp.child("auditAnnotations"),
                audits,
                f"must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations",
            )
        )
    keys: set[str] = set()
    policy_name = _str(_dict(obj.get("metadata")).get("name"))
    for i, raw in enumerate(audits):
        a = _dict(raw)
        p = sp.child("auditAnnotations").index(i)
        key = _str(a.get("key"))
        if policy_name:
            errs.extend(
                field.invalid(p.child("key"), f"{policy_name}/{key}", m)
                for m in names.is_qualified_name(f"{policy_name}/{key}")
            )
        else:
            errs.append(field.invalid(p.child("key"), key, "requires metadata.name be non-empty"))
        vexpr = _str(a.get("valueExpression")).strip()
        if not vexpr:
            errs.append(field.required(p.child("valueExpression"), "valueExpression is not specified"))
        elif len(vexpr) > MAX_AUDIT_VALUE_EXPRESSION:
            errs.append(
                field.required(
                    p.child("valueExpression"),
                    f"must not exceed {MAX_AUDIT_VALUE_EXPRESSION} bytes in length",
                )
            )
        else:
            errs.extend(compile_errors(env, vexpr, p.child("valueExpression")))
        if key in keys:
            errs.append(field.duplicate(p.child("key"), key))
        keys.add(key)
    return errs


def validate_mutating_policy(obj: dict[str, Any]) -> ErrorList:
    """``validateMutatingAdmissionPolicySpec``."""
    spec = _dict(obj.get("spec"))
    sp = Path("spec")
    params = spec.get("paramKind") is not None
    errs = _policy_common(spec, sp, params)
    rp = spec.get("reinvocationPolicy")
    if rp is None:
        errs.append(field.required(sp.child("reinvocationPolicy"), ""))
    elif rp not in REINVOCATION:
        errs.append(field.not_supported(sp.child("reinvocationPolicy"), rp, REINVOCATION))
    mutations = _list(spec.get("mutations"))
    if not mutations:
        errs.append(field.required(sp.child("mutations"), "mutations must contain at least one item"))
    env = celenv.mutation_env(params=params)
    for i, raw in enumerate(mutations):
        m = _dict(raw)
        p = sp.child("mutations").index(i)
        pt = m.get("patchType")
        if not pt:
            errs.append(field.required(p.child("patchType"), ""))
            continue
        if pt not in PATCH_TYPES:
            errs.append(field.not_supported(p.child("patchType"), pt, PATCH_TYPES))
            continue
        key = "applyConfiguration" if pt == "ApplyConfiguration" else "jsonPatch"
        other = "jsonPatch" if pt == "ApplyConfiguration" else "applyConfiguration"
        if m.get(other) is not None:
            errs.append(field.forbidden(p.child(other), f"must not be specified when patchType is {pt}"))
        body = m.get(key)
        if body is None:
            errs.append(field.required(p.child(key), f"must be specified when patchType is {pt}"))
            continue
        expr = _str(_dict(body).get("expression"))
        if not expr.strip():
            errs.append(field.required(p.child(key, "expression"), ""))
        else:
            errs.extend(compile_errors(env, expr, p.child(key, "expression")))
    return errs


def validate_validation_actions(actions: list[Any], path: Path) -> ErrorList:
    errs: ErrorList = []
    seen: set[str] = set()
    for i, a in enumerate(actions):
        if a not in VALIDATION_ACTIONS:
            errs.append(field.not_supported(path.index(i), a, VALIDATION_ACTIONS))
        if a in seen:
            errs.append(field.duplicate(path.index(i), a))
        seen.add(_str(a))
    if "Deny" in seen and "Warn" in seen:
        errs.append(
            field.invalid(
                path,
                actions,
                "must not contain both Deny and Warn (repeating the same validation failure information in the API "
                "response and headers serves no purpose)",
            )
        )
    if not seen:
        errs.append(field.required(path, "at least one validation action is required"))
    return errs


def validate_binding(obj: dict[str, Any], *, validating: bool) -> ErrorList:
    spec = _dict(obj.get("spec"))
    sp = Path("spec")
    errs: ErrorList = []
    policy = _str(spec.get("policyName"))
    if not policy:
        errs.append(field.required(sp.child("policyName"), ""))
    else:
        errs.extend(
            field.invalid(sp.child("policyName"), policy, m) for m in names.is_dns1123_subdomain(policy)
        )
    errs.extend(validate_param_ref(spec.get("paramRef"), sp.child("paramRef")))
    # kube's path really is spelled "matchResouces" here
    errs.extend(validate_match_resources(spec.get("matchResources"), sp.child("matchResouces")))
    if validating:
        errs.extend(
            validate_validation_actions(_list(spec.get("validationActions")), sp.child("validationActions"))
        )
    return errs


def validate_policy_status(obj: dict[str, Any]) -> ErrorList:
    status = _dict(obj.get("status"))
    errs: ErrorList = []
    tc = status.get("typeChecking")
    for i, raw in enumerate(_list(_dict(tc).get("expressionWarnings"))):
        w = _dict(raw)
        p = Path("status", "typeChecking", "expressionWarnings").index(i)
        if not w.get("warning"):
            errs.append(field.required(p.child("warning"), ""))
        if not _str(w.get("fieldRef")).strip():
            errs.append(field.required(p.child("fieldRef"), ""))
    return errs
