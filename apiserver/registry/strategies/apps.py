"""Strategies of apps/v1: StatefulSet, Deployment, ReplicaSet, DaemonSet, ControllerRevision.

Defaults follow ``pkg/apis/apps/v1/defaults.go`` (with the 1.37 gate defaults:
``MaxUnavailableStatefulSet`` beta/on, ``StatefulSetAutoDeletePVC`` GA), validation follows
``pkg/apis/apps/validation`` with its field paths and messages, and create/update preparation
follows ``pkg/registry/apps/*/strategy.go``. A StatefulSet's ``spec.scheduling`` (KEP-6277) is
neither defaulted nor validated here: its own validator owns it, and it is left out of the
"immutable spec" comparison so that validator alone decides what may change.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies import statefulset_scheduling as sts_scheduling
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy
from apiserver.registry.strategies.core.pod import pod_warnings
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    controller_template_spec_errors,
    convert_selector,
    selector_is_empty,
    template_labels_errors,
    validate_pod_template_spec,
)
from apiserver.registry.strategies.statefulset_create_memo import StatefulSetCreateMemo
from apiserver.registry.strategies.statefulset_scheduling_memo import SCHEDULING as SCHEDULING_MEMO
from apiserver.registry.strategies.statefulset_spec_memo import StatefulSetSpecMemo
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_annotations,
    validate_immutable,
    validate_label_selector,
    validate_labels,
    validate_nonnegative_field,
)

DAEMONSET_TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
STATEFULSET_SPEC_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
_STS_MUTABLE_SPEC = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
    "scheduling",
)
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)
_RETENTION_POLICIES = ["Retain", "Delete"]


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    return spec


# ----------------------------------------------------------------------------- IntOrString helpers


def _percent(v: Any) -> int | None:
    """The integer of a valid ``"N%"`` string, else None (``getPercentValue``)."""
    if isinstance(v, str) and _PERCENT_RE.fullmatch(v):
        return int(v[:-1])
    return None


def int_or_percent_value(v: Any) -> int:
    """``getIntOrPercentValue``: the percent number, the int, or ``IntValue()`` of a string."""
    p = _percent(v)
    if p is not None:
        return p
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return 0
    return 0


def validate_positive_int_or_percent(v: Any, path: Path) -> ErrorList:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(v, str):
        if _PERCENT_RE.fullmatch(v) is None:
            msg = names.regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                _PERCENT_FMT,
                "1%",
                "93%",
            )
            return [field.invalid(path, v, msg)]
        return []
    if isinstance(v, int) and not isinstance(v, bool):
        return validate_nonnegative_field(v, path)
    return [field.invalid(path, v, "must be an integer or percentage (e.g '5%%')")]


def is_not_more_than_100_percent(v: Any, path: Path) -> ErrorList:
    p = _percent(v)
    if p is None or p <= 100:
        return []
    return [field.invalid(path, v, "must not be greater than 100%")]


# ----------------------------------------------------------------------------- shared pieces


def _default_template(spec: Obj) -> None:
    podspec.default_pod_template(spec.get("template"))


def _drop_disabled_template_fields(ctx: StrategyContext, new: Obj, old: Obj | None) -> None:
    tmpl = as_dict(as_dict(new.get("spec")).get("template"))
    old_tmpl = as_dict(as_dict((old or {}).get("spec")).get("template"))
    podspec.drop_disabled_pod_spec_fields(
        tmpl.get("spec"), old_tmpl.get("spec") if old is not None else None, ctx.gates
    )


def _selector_errors(spec: Obj, sp: Path, kind: str, *, required: bool = True) -> ErrorList:
    """Selector present (when required), valid, and not empty."""
    sel = spec.get("selector")
    if sel is None:
        return [field.required(sp.child("selector"))] if required else []
    errs = validate_label_selector(sel, sp.child("selector")) if isinstance(sel, dict) else []
    if selector_is_empty(sel):
        errs.append(field.invalid(sp.child("selector"), sel, f"empty selector is invalid for {kind}"))
    return errs


def _replica_status_clean(status: Obj, fields: tuple[str, ...], available_vs_ready: bool) -> bool:
    """Whether :func:`_replica_status_errors` finds nothing: each of its tests on the values
    alone, without the field path it builds for every field (a controller's status write of a
    set, once per sync that changes it, is almost always valid). False decides nothing."""
    get = status.get
    for key in fields:
        v = _int(get(key))
        if v is not None and v < 0:
            return False
    for key in ("observedGeneration", "collisionCount"):
        v = _int(get(key))
        if v is not None and v < 0:
            return False
    replicas = _int(get("replicas")) or 0
    for key in fields:
        if key != "replicas" and (_int(get(key)) or 0) > replicas:
            return False
    return not available_vs_ready or (_int(get("availableReplicas")) or 0) <= (
        _int(get("readyReplicas")) or 0
    )


def _replica_status_errors(
    status: Obj, sp: Path, fields: tuple[str, ...], available_vs_ready: str | None
) -> ErrorList:
    if _replica_status_clean(status, fields, available_vs_ready is not None):
        return []
    errs: ErrorList = []
    for key in (*fields, "observedGeneration", "collisionCount"):
        errs.extend(validate_nonnegative_field(status.get(key), sp.child(key)))
    replicas = _int(status.get("replicas")) or 0
    for key in fields:
        if key == "replicas":
            continue
        v = _int(status.get(key)) or 0
        if v > replicas:
            errs.append(field.invalid(sp.child(key), v, "cannot be greater than status.replicas"))
    if available_vs_ready:
        avail, ready = _int(status.get("availableReplicas")) or 0, _int(status.get("readyReplicas")) or 0
        if avail > ready:
            errs.append(field.invalid(sp.child("availableReplicas"), avail, available_vs_ready))
    return errs


def _collision_count_errors(new: Obj, old: Obj) -> ErrorList:
    """``IsDecremented`` on ``status.collisionCount``."""
    new_cc = as_dict(new.get("status")).get("collisionCount")
    old_cc = as_dict(old.get("status")).get("collisionCount")
    if old_cc is None:
        return []
    value = _int(new_cc) or 0
    if new_cc is None or value < (_int(old_cc) or 0):
        return [field.invalid(Path("status", "collisionCount"), value, "cannot be decremented")]
    return []


class _WorkloadStrategy(Strategy):
    """Status handling and template gate-dropping shared by the apps workloads."""

    has_status = True
    initial_status: Obj = {}
    kind = ""

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        # ``initial_status`` is a flat map of integers (every subclass's; a test holds them to
        # it), so its own dict is a private copy: ``copy.deepcopy`` cost ~1.3 us per created set
        obj["status"] = dict(self.initial_status)
        _drop_disabled_template_fields(ctx, obj, None)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        _drop_disabled_template_fields(ctx, new, old)

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        tmpl = as_dict(as_dict(obj.get("spec")).get("template"))
        return podspec_warnings(tmpl)

    def warnings_on_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> list[str]:
        new_t = as_dict(as_dict(new.get("spec")).get("template"))
        if new_t == as_dict(as_dict(old.get("spec")).get("template")):
            return []
        return podspec_warnings(new_t)


#: where a workload's template spec sits (a Path is immutable: shared by every warning)
_TEMPLATE_SPEC = Path("spec", "template", "spec")


def podspec_warnings(template: Obj) -> list[str]:
    return pod_warnings(as_dict(template.get("spec")), _TEMPLATE_SPEC)


# ============================================================================ StatefulSet


def default_statefulset(obj: Obj) -> None:
    """``SetDefaults_StatefulSet`` + template and volumeClaimTemplate defaults."""
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    us = spec.get("updateStrategy")
    if not isinstance(us, dict):
        us = {}
        spec["updateStrategy"] = us
    if not us.get("type"):
        us["type"] = "RollingUpdate"
        if us.get("rollingUpdate") is None:
            us["rollingUpdate"] = {}
    ru = us.get("rollingUpdate")
    if us["type"] == "RollingUpdate" and isinstance(ru, dict):
        if ru.get("partition") is None:
            ru["partition"] = 0
        if ru.get("maxUnavailable") is None:
            ru["maxUnavailable"] = 1
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, dict):
        policy = {}
        spec["persistentVolumeClaimRetentionPolicy"] = policy
    for key in ("whenDeleted", "whenScaled"):
        if not policy.get(key):
            policy[key] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _default_template(spec)
    for vct in as_list(spec.get("volumeClaimTemplates")):
        if not isinstance(vct, dict):
            continue
        vct.setdefault("apiVersion", "v1")
        vct.setdefault("kind", "PersistentVolumeClaim")
        vspec = vct.get("spec")
        if isinstance(vspec, dict):
            podspec.default_pvc_spec(vspec)
        status = vct.get("status")
        if not isinstance(status, dict):
            status = {}
            vct["status"] = status
        if not status.get("phase"):
            status["phase"] = "Pending"


def validate_statefulset_spec(spec: Obj) -> ErrorList:
    """``ValidateStatefulSetSpec`` (the template's pod spec is not validated, like kube)."""
    sp = Path("spec")
    errs: ErrorList = []
    pmp = spec.get("podManagementPolicy") or ""
    if not pmp:
        errs.append(field.required(sp.child("podManagementPolicy")))
    elif pmp not in ("OrderedReady", "Parallel"):
        errs.append(
            field.invalid(sp.child("podManagementPolicy"), pmp, "must be 'OrderedReady' or 'Parallel'")
        )
    us = as_dict(spec.get("updateStrategy"))
    ust = us.get("type") or ""
    usp = sp.child("updateStrategy")
    if not ust:
        errs.append(field.required(usp))
    elif ust == "OnDelete":
        if us.get("rollingUpdate") is not None:
            errs.append(
                field.invalid(
                    usp.child("rollingUpdate"),
                    us["rollingUpdate"],
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif ust == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if isinstance(ru, dict):
            rp = usp.child("rollingUpdate")
            errs.extend(validate_nonnegative_field(ru.get("partition"), rp.child("partition")))
            mu = ru.get("maxUnavailable")
            if mu is not None:
                mp = rp.child("maxUnavailable")
                errs.extend(validate_positive_int_or_percent(mu, mp))
                if int_or_percent_value(mu) == 0:
                    errs.append(field.invalid(mp, mu, "cannot be 0"))
                errs.extend(is_not_more_than_100_percent(mu, mp))
    else:
        errs.append(field.invalid(usp, us, "must be 'RollingUpdate' or 'OnDelete'"))
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(policy, dict):
        for key in ("whenDeleted", "whenScaled"):
            v = policy.get(key) or ""
            if v not in _RETENTION_POLICIES:
                errs.append(
                    field.not_supported(
                        sp.child("persistentVolumeClaimRetentionPolicy", key), v, _RETENTION_POLICIES
                    )
                )
    errs.extend(validate_nonnegative_field(spec.get("replicas"), sp.child("replicas")))
    errs.extend(validate_nonnegative_field(spec.get("minReadySeconds"), sp.child("minReadySeconds")))
    errs.extend(
        validate_nonnegative_field(spec.get("revisionHistoryLimit"), sp.child("revisionHistoryLimit"))
    )
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs.extend(validate_nonnegative_field(ordinals.get("start"), sp.child("ordinals.start")))
    service = spec.get("serviceName")
    if isinstance(service, str) and service:
        errs.extend(podspec.fmt_errors(service, sp.child("serviceName"), names.is_dns1123_label))
    errs.extend(_selector_errors(spec, sp, "statefulset"))
    sel = convert_selector(spec.get("selector"))
    tp = sp.child("template")
    if sel is None:
        errs.append(field.invalid(sp.child("selector"), spec.get("selector"), ""))
    else:
        tmpl = spec.get("template")
        if not isinstance(tmpl, dict):
            errs.append(field.required(tp))
        else:
            md = as_dict(tmpl.get("metadata"))
            errs.extend(template_labels_errors(sel, tmpl, tp))
            errs.extend(validate_labels(md.get("labels"), tp.child("labels")))
            errs.extend(validate_annotations(md.get("annotations"), tp.child("annotations")))
    errs.extend(controller_template_spec_errors(spec.get("template"), tp, "StatefulSet"))
    return errs


#: the sets of one template validate their spec alike (per-set names aside): remembered per shape
STATEFULSET_SPECS = StatefulSetSpecMemo(validate_statefulset_spec)
#: both create validations of a set at once, by the spec memo's key (and through both memos)
STATEFULSET_CREATES = StatefulSetCreateMemo(STATEFULSET_SPECS, SCHEDULING_MEMO)


class StatefulSetStrategy(_WorkloadStrategy):
    """``pkg/registry/apps/statefulset``: only a few spec fields may change after creation."""

    initial_status = {"replicas": 0, "availableReplicas": 0}
    kind = "StatefulSet"
    #: ``default_statefulset`` fills only ``spec`` (its template and claim templates), which a
    #: status write takes from the stored set: the controller's status writes skip it
    defaults_only_replaced_by_status = True

    def default(self, obj: Obj) -> None:
        default_statefulset(obj)

    # KEP-6277 spec.scheduling: gated-field dropping, the three admission layers and the claim
    # warning live in statefulset_scheduling (shared with the controller's compilation).
    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        super().prepare_for_create(ctx, obj)
        sts_scheduling.drop_disabled_scheduling_fields(ctx, obj, None)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        sts_scheduling.drop_disabled_scheduling_fields(ctx, new, old)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        # sets of one shape validate their spec and spec.scheduling alike: remembered per input
        return STATEFULSET_CREATES.validate(ctx, obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs = validate_statefulset_spec(spec)
        rest = {k: v for k, v in spec.items() if k not in _STS_MUTABLE_SPEC}
        old_rest = {k: v for k, v in old_spec.items() if k not in _STS_MUTABLE_SPEC}
        if rest != old_rest:
            errs.append(field.forbidden("spec", STATEFULSET_SPEC_FORBIDDEN))
        errs.extend(sts_scheduling.validate_scheduling_update(ctx, new, old))
        return errs

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return super().warnings_on_create(ctx, obj) + sts_scheduling.scheduling_warnings(ctx, obj)

    def warnings_on_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> list[str]:
        return super().warnings_on_update(ctx, new, old) + sts_scheduling.scheduling_warnings(ctx, new)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        sp = Path("status")
        errs = _replica_status_errors(
            status,
            sp,
            ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
            None,
        )
        avail, ready = _int(status.get("availableReplicas")) or 0, _int(status.get("readyReplicas")) or 0
        if avail > ready:
            errs.append(
                field.invalid(
                    sp.child("availableReplicas"), avail, "cannot be greater than status.readyReplicas"
                )
            )
        errs.extend(_collision_count_errors(new, old))
        return errs


# ============================================================================ Deployment


def default_deployment(obj: Obj) -> None:
    """``SetDefaults_Deployment``: 1 replica, RollingUpdate 25%/25%, 10 revisions, 600s deadline."""
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.get("strategy")
    if not isinstance(strategy, dict):
        strategy = {}
        spec["strategy"] = strategy
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        ru = strategy.get("rollingUpdate")
        if not isinstance(ru, dict):
            ru = {}
            strategy["rollingUpdate"] = ru
        for key in ("maxUnavailable", "maxSurge"):
            if ru.get(key) is None:
                ru[key] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    _default_template(spec)


def _replicaset_like_spec_errors(spec: Obj, sp: Path, empty_kind: str) -> ErrorList:
    """Selector and template rules shared by Deployments and ReplicaSets."""
    errs = _selector_errors(spec, sp, empty_kind)
    sel = convert_selector(spec.get("selector"))
    tp = sp.child("template")
    if sel is None:
        errs.append(field.invalid(sp.child("selector"), spec.get("selector"), "invalid label selector"))
        return errs
    tmpl = spec.get("template")
    if not isinstance(tmpl, dict):
        errs.append(field.required(tp))
        return errs
    errs.extend(template_labels_errors(sel, tmpl, tp))
    errs.extend(validate_pod_template_spec(tmpl, tp))
    errs.extend(controller_template_spec_errors(tmpl, tp, "ReplicaSet"))
    return errs


def validate_deployment_spec(spec: Obj) -> ErrorList:
    """``ValidateDeploymentSpec``."""
    sp = Path("spec")
    errs = validate_nonnegative_field(spec.get("replicas"), sp.child("replicas"))
    errs.extend(_replicaset_like_spec_errors(spec, sp, "deployment"))
    strategy = as_dict(spec.get("strategy"))
    stp = sp.child("strategy")
    stype = strategy.get("type")
    if stype == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.append(
                field.forbidden(
                    stp.child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"
                )
            )
    elif stype == "RollingUpdate":
        ru = strategy.get("rollingUpdate")
        if not isinstance(ru, dict):
            errs.append(
                field.required(stp.child("rollingUpdate"), "this should be defaulted and never be nil")
            )
        else:
            rp = stp.child("rollingUpdate")
            mu, ms = ru.get("maxUnavailable"), ru.get("maxSurge")
            errs.extend(validate_positive_int_or_percent(mu, rp.child("maxUnavailable")))
            errs.extend(validate_positive_int_or_percent(ms, rp.child("maxSurge")))
            if int_or_percent_value(mu) == 0 and int_or_percent_value(ms) == 0:
                errs.append(
                    field.invalid(rp.child("maxUnavailable"), mu, "may not be 0 when `maxSurge` is 0")
                )
            errs.extend(is_not_more_than_100_percent(mu, rp.child("maxUnavailable")))
    else:
        errs.append(field.not_supported(stp, strategy, ["Recreate", "RollingUpdate"]))
    errs.extend(validate_nonnegative_field(spec.get("minReadySeconds"), sp.child("minReadySeconds")))
    errs.extend(
        validate_nonnegative_field(spec.get("revisionHistoryLimit"), sp.child("revisionHistoryLimit"))
    )
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        errs.extend(validate_nonnegative_field(pds, sp.child("progressDeadlineSeconds")))
        if (_int(pds) or 0) <= (_int(spec.get("minReadySeconds")) or 0):
            errs.append(
                field.invalid(
                    sp.child("progressDeadlineSeconds"), pds, "must be greater than minReadySeconds"
                )
            )
    return errs


def _selector_immutable(new: Obj, old: Obj) -> ErrorList:
    """apps/v1 selectors never change."""
    return validate_immutable(
        as_dict(new.get("spec")).get("selector"),
        as_dict(old.get("spec")).get("selector"),
        Path("spec", "selector"),
    )


class DeploymentStrategy(_WorkloadStrategy):
    initial_status: Obj = {}
    kind = "Deployment"
    #: kube's deploymentStatusStrategy keeps only the labels: the controller records the
    #: ``deployment.kubernetes.io/revision`` annotation through ``/status``
    status_reset_metadata = ("labels",)

    def default(self, obj: Obj) -> None:
        default_deployment(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_deployment_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_deployment_spec(as_dict(new.get("spec"))) + _selector_immutable(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        errs = _replica_status_errors(
            status,
            Path("status"),
            ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"),
            "cannot be greater than readyReplicas",
        )
        errs.extend(
            validate_nonnegative_field(
                status.get("unavailableReplicas"), Path("status", "unavailableReplicas")
            )
        )
        errs.extend(_collision_count_errors(new, old))
        return errs


# ============================================================================ ReplicaSet


class ReplicaSetStrategy(_WorkloadStrategy):
    initial_status = {"replicas": 0}
    kind = "ReplicaSet"

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        _default_template(spec)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_replicaset_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_replicaset_spec(as_dict(new.get("spec"))) + _selector_immutable(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return _replica_status_errors(
            as_dict(new.get("status")),
            Path("status"),
            ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
            "cannot be greater than readyReplicas",
        )


def validate_replicaset_spec(spec: Obj) -> ErrorList:
    """``ValidateReplicaSetSpec`` (its empty-selector message says "deployment", as kube's does)."""
    sp = Path("spec")
    errs = validate_nonnegative_field(spec.get("replicas"), sp.child("replicas"))
    errs.extend(validate_nonnegative_field(spec.get("minReadySeconds"), sp.child("minReadySeconds")))
    errs.extend(_replicaset_like_spec_errors(spec, sp, "deployment"))
    return errs


# ============================================================================ DaemonSet


class DaemonSetStrategy(_WorkloadStrategy):
    """DaemonSets also track the deprecated template-generation annotation."""

    initial_status = {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    kind = "DaemonSet"

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        us = spec.get("updateStrategy")
        if not isinstance(us, dict):
            us = {}
            spec["updateStrategy"] = us
        if not us.get("type"):
            us["type"] = "RollingUpdate"
        if us["type"] == "RollingUpdate":
            ru = us.get("rollingUpdate")
            if not isinstance(ru, dict):
                ru = {}
                us["rollingUpdate"] = ru
            if ru.get("maxUnavailable") is None:
                ru["maxUnavailable"] = 1
            if ru.get("maxSurge") is None:
                ru["maxSurge"] = 0
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        _default_template(spec)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        super().prepare_for_create(ctx, obj)
        _set_template_generation(obj, 1)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        old_gen = _template_generation(old)
        changed = as_dict(new.get("spec")).get("template") != as_dict(old.get("spec")).get("template")
        _set_template_generation(new, old_gen + 1 if changed else old_gen)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_daemonset_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_daemonset_spec(as_dict(new.get("spec"))) + _selector_immutable(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        errs: ErrorList = []
        for key in (
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ):
            errs.extend(validate_nonnegative_field(status.get(key), Path("status", key)))
        errs.extend(_collision_count_errors(new, old))
        return errs


def _template_generation(obj: Obj) -> int:
    ann = as_dict(as_dict(obj.get("metadata")).get("annotations"))
    try:
        return int(ann.get(DAEMONSET_TEMPLATE_GENERATION_ANNOTATION) or 0)
    except (TypeError, ValueError):
        return 0


def _set_template_generation(obj: Obj, gen: int) -> None:
    md = obj.setdefault("metadata", {})
    ann = md.get("annotations")
    if not isinstance(ann, dict):
        ann = {}
        md["annotations"] = ann
    ann[DAEMONSET_TEMPLATE_GENERATION_ANNOTATION] = str(gen)


def validate_daemonset_spec(spec: Obj) -> ErrorList:
    """``ValidateDaemonSetSpec``."""
    sp = Path("spec")
    errs: ErrorList = []
    sel_raw = spec.get("selector")
    if isinstance(sel_raw, dict):
        errs.extend(validate_label_selector(sel_raw, sp.child("selector")))
    sel = convert_selector(sel_raw)
    tp = sp.child("template")
    if sel is not None:
        errs.extend(template_labels_errors(sel, spec.get("template"), tp))
    if sel_raw is not None and selector_is_empty(sel_raw):
        errs.append(field.invalid(sp.child("selector"), sel_raw, "empty selector is invalid for daemonset"))
    errs.extend(validate_pod_template_spec(spec.get("template"), tp))
    errs.extend(controller_template_spec_errors(spec.get("template"), tp, "DaemonSet"))
    errs.extend(validate_nonnegative_field(spec.get("minReadySeconds"), sp.child("minReadySeconds")))
    us = as_dict(spec.get("updateStrategy"))
    usp = sp.child("updateStrategy")
    ust = us.get("type")
    if ust == "OnDelete":
        pass
    elif ust == "RollingUpdate":
        ru = us.get("rollingUpdate")
        if not isinstance(ru, dict):
            errs.append(field.required(usp.child("rollingUpdate")))
        else:
            rp = usp.child("rollingUpdate")
            mu, ms = ru.get("maxUnavailable"), ru.get("maxSurge")
            errs.extend(validate_positive_int_or_percent(mu, rp.child("maxUnavailable")))
            errs.extend(validate_positive_int_or_percent(ms, rp.child("maxSurge")))
            errs.extend(is_not_more_than_100_percent(mu, rp.child("maxUnavailable")))
            errs.extend(is_not_more_than_100_percent(ms, rp.child("maxSurge")))
            has_u, has_s = int_or_percent_value(mu) != 0, int_or_percent_value(ms) != 0
            if has_u and has_s:
                errs.append(
                    field.invalid(rp.child("maxSurge"), ms, "may not be set when maxUnavailable is non-zero")
                )
            elif not has_u and not has_s:
                errs.append(field.required(rp.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    else:
        errs.append(field.not_supported(usp, us, ["RollingUpdate", "OnDelete"]))
    errs.extend(
        validate_nonnegative_field(spec.get("revisionHistoryLimit"), sp.child("revisionHistoryLimit"))
    )
    return errs


# ============================================================================ ControllerRevision


class ControllerRevisionStrategy(UntrackedGenerationStrategy):
    """ControllerRevisions: ``data`` is mandatory and, like ``revision``'s sign, fixed."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_controller_revision(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_controller_revision(new)
        errs.extend(validate_immutable(new.get("data"), old.get("data"), Path("data")))
        return errs


def validate_controller_revision(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    if obj.get("data") is None:
        errs.append(field.required("data", "data is mandatory"))
    errs.extend(validate_nonnegative_field(obj.get("revision"), Path("revision")))
    return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("apps", "statefulsets"): StatefulSetStrategy(),
    ("apps", "deployments"): DeploymentStrategy(),
    ("apps", "replicasets"): ReplicaSetStrategy(),
    ("apps", "daemonsets"): DaemonSetStrategy(),
    ("apps", "controllerrevisions"): ControllerRevisionStrategy(),
}
