"""Strategies of admissionregistration.k8s.io/v1 (kube's ``pkg/registry/admissionregistration``).

ValidatingWebhookConfiguration, MutatingWebhookConfiguration, ValidatingAdmissionPolicy (+Binding)
and MutatingAdmissionPolicy (+Binding): kube's v1 defaults (``SetDefaults_ValidatingWebhook`` …),
validation (:mod:`.admissionregistration_validation`) and generation tracking. ValidatingAdmissionPolicy
serves a ``status`` subresource (``typeChecking``, ``conditions``, ``observedGeneration``, written by
``controllers/admissionpolicystatus.py``); MutatingAdmissionPolicy has none in v1.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from apiserver.field import ErrorList
from apiserver.registry.strategies import admissionregistration_validation as v
from apiserver.rest.strategy import Obj, Strategy, StrategyContext

GROUP = "admissionregistration.k8s.io"


def _dict(x: Any) -> Obj:
    return x if isinstance(x, dict) else {}


def _list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


# ------------------------------------------------------------------------------------ defaults


def default_rule(rule: Any) -> None:
    """``SetDefaults_Rule``: scope ``*``."""
    if isinstance(rule, dict) and rule.get("scope") is None:
        rule["scope"] = "*"


def default_match_resources(mr: Any) -> None:
    """``SetDefaults_MatchResources``: Equivalent, empty selectors, rules' scope."""
    if not isinstance(mr, dict):
        return
    mr.setdefault("matchPolicy", "Equivalent")
    if mr.get("namespaceSelector") is None:
        mr["namespaceSelector"] = {}
    if mr.get("objectSelector") is None:
        mr["objectSelector"] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in _list(mr.get(key)):
            default_rule(rule)


def default_webhook(hook: Any, *, mutating: bool) -> None:
    """``SetDefaults_ValidatingWebhook`` / ``SetDefaults_MutatingWebhook``."""
    if not isinstance(hook, dict):
        return
    if hook.get("failurePolicy") is None:
        hook["failurePolicy"] = "Fail"
    if hook.get("matchPolicy") is None:
        hook["matchPolicy"] = "Equivalent"
    if hook.get("namespaceSelector") is None:
        hook["namespaceSelector"] = {}
    if hook.get("objectSelector") is None:
        hook["objectSelector"] = {}
    if hook.get("timeoutSeconds") is None:
        hook["timeoutSeconds"] = 10
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in _list(hook.get("rules")):
        default_rule(rule)
    svc = _dict(hook.get("clientConfig")).get("service")
    if isinstance(svc, dict) and svc.get("port") is None:
        svc["port"] = 443


def default_policy(obj: Obj) -> None:
    """``SetDefaults_{Validating,Mutating}AdmissionPolicySpec``: failurePolicy Fail, constraints."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    default_match_resources(spec.get("matchConstraints"))


def default_binding(obj: Obj) -> None:
    default_match_resources(_dict(obj.get("spec")).get("matchResources"))


# ---------------------------------------------------------------------------------- strategies


class _WebhookConfigurationStrategy(Strategy):
    mutating = False

    def default(self, obj: Obj) -> None:
        for hook in _list(obj.get("webhooks")):
            default_webhook(hook, mutating=self.mutating)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return v.validate_webhook_configuration(obj, mutating=self.mutating)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return v.validate_webhook_configuration(new, mutating=self.mutating, old=old)


class ValidatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    mutating = False


class MutatingWebhookConfigurationStrategy(_WebhookConfigurationStrategy):
    mutating = True


class _PolicyStrategy(Strategy, ABC):
    has_status = True

    def default(self, obj: Obj) -> None:
        default_policy(obj)

    @abstractmethod
    def check(self, obj: Obj) -> ErrorList:
        """The kind's own validation (a ValidatingAdmissionPolicy's or a MutatingAdmissionPolicy's)."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return self.check(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return self.check(new)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return v.validate_policy_status(new)

    def generation_relevant(self, obj: Obj) -> Any:
        return obj.get("spec")


class ValidatingAdmissionPolicyStrategy(_PolicyStrategy):
    def check(self, obj: Obj) -> ErrorList:
        return v.validate_validating_policy(obj)


class MutatingAdmissionPolicyStrategy(_PolicyStrategy):
    #: kube's MutatingAdmissionPolicy (v1) has no status
    has_status = False

    def check(self, obj: Obj) -> ErrorList:
        return v.validate_mutating_policy(obj)


class _BindingStrategy(Strategy):
    validating = True

    def default(self, obj: Obj) -> None:
        default_binding(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return v.validate_binding(obj, validating=self.validating)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return v.validate_binding(new, validating=self.validating)

    def generation_relevant(self, obj: Obj) -> Any:
        return obj.get("spec")


class ValidatingAdmissionPolicyBindingStrategy(_BindingStrategy):
    validating = True


class MutatingAdmissionPolicyBindingStrategy(_BindingStrategy):
    validating = False


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "validatingwebhookconfigurations"): ValidatingWebhookConfigurationStrategy(),
    (GROUP, "mutatingwebhookconfigurations"): MutatingWebhookConfigurationStrategy(),
    (GROUP, "validatingadmissionpolicies"): ValidatingAdmissionPolicyStrategy(),
    (GROUP, "validatingadmissionpolicybindings"): ValidatingAdmissionPolicyBindingStrategy(),
    (GROUP, "mutatingadmissionpolicies"): MutatingAdmissionPolicyStrategy(),
    (GROUP, "mutatingadmissionpolicybindings"): MutatingAdmissionPolicyBindingStrategy(),
}
