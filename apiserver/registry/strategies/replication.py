"""Strategies of core/v1 ReplicationController and PodTemplate (kube's
``pkg/registry/core/replicationcontroller`` and ``pkg/registry/core/podtemplate``).

A ReplicationController's selector is a plain label map (not a LabelSelector): it defaults to the
template's labels, and so do the controller's own labels when it has none (``SetDefaults_
ReplicationController``). The template must match the selector, restart ``Always`` and carry no
``activeDeadlineSeconds``. The ``scale`` subresource is served by the generic registry; the
controller that acts on RCs lives with the workload controllers.
"""

from __future__ import annotations

import copy

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.apps import podspec_warnings
from apiserver.registry.strategies.core.pod import pod_warnings
from apiserver.registry.strategies.podspec import (
    as_dict,
    controller_template_spec_errors,
    validate_pod_template_spec,
)
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.selectors import selector_from_set
from apiserver.validation.meta import validate_labels, validate_nonnegative_field


def default_replication_controller(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    tlabels = as_dict(as_dict(template).get("metadata")).get("labels") if isinstance(template, dict) else None
    if tlabels:
        if not spec.get("selector"):
            spec["selector"] = copy.deepcopy(tlabels)
        md = obj.setdefault("metadata", {})
        if isinstance(md, dict) and not md.get("labels"):
            md["labels"] = copy.deepcopy(tlabels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    podspec.default_pod_template(template)


def validate_rc_spec(spec: Obj) -> ErrorList:
    """``ValidateReplicationControllerSpec``."""
    sp = Path("spec")
    errs = validate_nonnegative_field(spec.get("minReadySeconds"), sp.child("minReadySeconds"))
    selector = spec.get("selector")
    if not selector:
        errs.append(field.required(sp.child("selector")))
    else:
        errs.extend(validate_labels(selector, sp.child("selector")))
    errs.extend(validate_nonnegative_field(spec.get("replicas"), sp.child("replicas")))
    tp = sp.child("template")
    template = spec.get("template")
    if not isinstance(template, dict):
        errs.append(field.required(tp))
        return errs
    if isinstance(selector, dict) and selector:
        tlabels = as_dict(as_dict(template.get("metadata")).get("labels"))
        try:
            matches = selector_from_set(selector).matches(tlabels)
        except (ValueError, TypeError):
            matches = True  # an invalid selector is reported above
        if not matches:
            errs.append(
                field.invalid(
                    tp.child("metadata", "labels"), tlabels, "`selector` does not match template `labels`"
                )
            )
    errs.extend(validate_pod_template_spec(template, tp))
    errs.extend(controller_template_spec_errors(template, tp, "ReplicationController"))
    return errs


def validate_rc_status(status: Obj) -> ErrorList:
    """``ValidateReplicationControllerStatus``."""
    sp = Path("status")
    errs: ErrorList = []
    for key in (
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ):
        errs.extend(validate_nonnegative_field(status.get(key), sp.child(key)))
    replicas = _int(status.get("replicas")) or 0
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        v = _int(status.get(key)) or 0
        if v > replicas:
            errs.append(field.invalid(sp.child(key), v, "cannot be greater than status.replicas"))
    avail, ready = _int(status.get("availableReplicas")) or 0, _int(status.get("readyReplicas")) or 0
    if avail > ready:
        errs.append(
            field.invalid(sp.child("availableReplicas"), avail, "cannot be greater than readyReplicas")
        )
    return errs


class ReplicationControllerStrategy(Strategy):
    has_status = True

    def default(self, obj: Obj) -> None:
        default_replication_controller(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"replicas": 0}
        tmpl = as_dict(as_dict(obj.get("spec")).get("template"))
        podspec.drop_disabled_pod_spec_fields(tmpl.get("spec"), None, ctx.gates)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        tmpl = as_dict(as_dict(new.get("spec")).get("template"))
        old_tmpl = as_dict(as_dict(old.get("spec")).get("template"))
        podspec.drop_disabled_pod_spec_fields(tmpl.get("spec"), old_tmpl.get("spec"), ctx.gates)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_rc_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_rc_spec(as_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_rc_status(as_dict(new.get("status")))

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return podspec_warnings(as_dict(as_dict(obj.get("spec")).get("template")))


class PodTemplateStrategy(Strategy):
    """PodTemplates: the template is validated as a pod's; a change of it bumps the generation."""

    def default(self, obj: Obj) -> None:
        podspec.default_pod_template(obj.get("template"))

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        template = obj.get("template")
        return validate_pod_template_spec(template if isinstance(template, dict) else {}, Path("template"))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return self.validate(ctx, new)

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return pod_warnings(as_dict(as_dict(obj.get("template")).get("spec")), Path("template", "spec"))


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("", "replicationcontrollers"): ReplicationControllerStrategy(),
    ("", "podtemplates"): PodTemplateStrategy(),
}
