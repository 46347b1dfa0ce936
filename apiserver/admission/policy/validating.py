"""ValidatingAdmissionPolicy: CEL validations bound to requests by ValidatingAdmissionPolicyBindings
(kube's ``admission/plugin/policy/validating``).

Each matching (policy, binding, params) evaluates the policy's ``validations``; a false one is a
violation whose message is, in kube's order, the ``messageExpression`` result, ``message`` or
``failed expression: <expression>``. The binding's ``validationActions`` decide what a violation
does: ``Deny`` refuses the request (``ValidatingAdmissionPolicy 'P' with binding 'B' denied request:
…`` with the validation's ``reason``, Invalid/422 by default), ``Warn`` sends it back as a
``Warning`` header (``Validation failed for ValidatingAdmissionPolicy 'P' with binding 'B': …``),
``Audit`` records it as the request's ``validation.policy.admission.k8s.io/validation_failure``
audit annotation. ``auditAnnotations`` add ``<policy>/<key>`` annotations. An expression that
fails to evaluate is a violation (``expression '…' resulted in error: …``) under
``failurePolicy: Fail`` and is ignored under ``Ignore``.

gangplane keeps no audit log: audit annotations are kept on the request's admission attributes
(tests and the request log can read them) and do not reach a file.
"""

from __future__ import annotations

from typing import Any

import orjson

from apiserver.admission import Attributes, Plugin
from apiserver.admission.policy.authorizing import authorizing
from apiserver.admission.policy.engine import Evaluation, evaluate, may_apply, pairings, policy_denied
from apiserver.admission.policy.matching import PolicyLookup
from apiserver.cel import CompileError, EvalError

VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _name(obj: dict[str, Any]) -> str:
    return str(_dict(obj.get("metadata")).get("name") or "")


def _message(v: dict[str, Any], activation: dict[str, Any]) -> str:
    mexpr = str(v.get("messageExpression") or "")
    if mexpr.strip():
        try:
            result = evaluate(mexpr, activation)
            if isinstance(result, str) and result.strip() and "\n" not in result:
                return result.strip()
        except (EvalError, CompileError):
            pass
    msg = str(v.get("message") or "")
    return msg or f"failed expression: {str(v.get('expression') or '').strip()}"


def violations(ev: Evaluation) -> list[tuple[int, str, str]]:
    """(index, message, reason) of each validation that does not hold."""
    out: list[tuple[int, str, str]] = []
    for i, raw in enumerate(_list(_dict(ev.policy.get("spec")).get("validations"))):
        v = _dict(raw)
        expression = str(v.get("expression") or "")
        try:
            result = evaluate(expression, ev.activation)
        except (EvalError, CompileError) as e:
            if ev.failure_policy == "Fail":
                out.append((i, f"expression '{expression}' resulted in error: {e}", ""))
            continue
        if result is True:
            continue
        if not isinstance(result, bool):
            if ev.failure_policy == "Fail":
                out.append((i, f"expression '{expression}' resulted in error: must evaluate to bool", ""))
            continue
        out.append((i, _message(v, ev.activation), str(v.get("reason") or "")))
    return out


def audit_annotations(ev: Evaluation, attrs: Attributes) -> None:
    for raw in _list(_dict(ev.policy.get("spec")).get("auditAnnotations")):
        a = _dict(raw)
        try:
            value = evaluate(str(a.get("valueExpression") or ""), ev.activation)
        except (EvalError, CompileError):
            continue
        if isinstance(value, str) and value:
            attrs.audit_annotations[f"{_name(ev.policy)}/{a.get('key')}"] = value


class ValidatingAdmissionPolicyPlugin(Plugin):
    """The ``ValidatingAdmissionPolicy`` admission plugin (validating phase)."""

    name = "ValidatingAdmissionPolicy"

    def validate(self, attrs: Attributes, api: Any) -> None:
        if not may_apply(attrs, api, "validatingadmissionpolicies", "validatingadmissionpolicybindings"):
            return
        with authorizing(attrs, api):
            self._validate(attrs, api)

    def _validate(self, attrs: Attributes, api: Any) -> None:
        lookup: PolicyLookup = api
        found = pairings(attrs, lookup, "validatingadmissionpolicies", "validatingadmissionpolicybindings")
        if found is None:
            return
        denied: tuple[str, str] | None = None
        audits: list[dict[str, Any]] = []
        for policy, binding, message in found.errors:
            denied = denied or (
                f"ValidatingAdmissionPolicy '{_name(policy)}' with binding '{_name(binding)}' denied request: {message}",
                "",
            )
        for ev in found.evaluations:
            audit_annotations(ev, attrs)
            actions = _list(_dict(ev.binding.get("spec")).get("validationActions"))
            for index, message, reason in violations(ev):
                p, b = _name(ev.policy), _name(ev.binding)
                if "Deny" in actions and denied is None:
                    denied = (
                        f"ValidatingAdmissionPolicy '{p}' with binding '{b}' denied request: {message}",
                        reason,
                    )
                if "Warn" in actions:
                    attrs.warnings.append(
                        f"Validation failed for ValidatingAdmissionPolicy '{p}' with binding '{b}': {message}"
                    )
                if "Audit" in actions:
                    audits.append(
                        {
                            "message": message,
                            "policy": p,
                            "binding": b,
                            "expressionIndex": index,
                            "validationActions": actions,
                        }
                    )
        if audits:
            attrs.audit_annotations[VALIDATION_FAILURE_ANNOTATION] = orjson.dumps(audits).decode()
        if denied is not None:
            raise policy_denied(attrs, denied[0], denied[1])
