"""Strategies of coordination/v1 Lease, policy/v1 PodDisruptionBudget, scheduling.k8s.io/v1
PriorityClass and events.k8s.io/v1 Event, plus the Event field mapping between the two groups.

Both Event APIs share one storage holding core/v1-shaped objects (as kube stores the internal
type): :func:`events_v1_to_core_event` converts an events.k8s.io/v1 body before the strategy
runs and :func:`core_event_to_events_v1` renders a stored event for events.k8s.io readers.
The events.k8s.io strategy therefore validates a core-shaped object, with kube's strict rules
and kube's (internal) field names in its error paths.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy
from apiserver.registry.strategies.core.event import legacy_validate_event
from apiserver.registry.strategies.podspec import PREEMPTION_POLICIES, as_dict, as_list, fmt_errors
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    FIELD_IMMUTABLE,
    validate_immutable,
    validate_label_selector,
    validate_nonnegative_field,
)

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_PRIORITY_CLASSES: dict[str, tuple[int, bool]] = {
    "system-node-critical": (2_000_001_000, False),
    "system-cluster-critical": (2_000_000_000, False),
}
UNHEALTHY_POD_EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"]  # sets.List order
CONDITION_STATUSES = ["False", "True", "Unknown"]
_CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_CONDITION_REASON_RE = re.compile(_CONDITION_REASON_FMT)
_CONDITION_REASON_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)
_MAX_CONDITION_REASON = 1024
_MAX_CONDITION_MESSAGE = 32 * 1024
_LEASE_STRATEGIES = ["OldestEmulationVersion"]


def validate_conditions(conditions: Any, path: Path) -> ErrorList:
    """``metav1validation.ValidateConditions`` for ``[]metav1.Condition``."""
    errs: ErrorList = []
    seen: set[str] = set()
    for i, cond in enumerate(as_list(conditions)):
        cond = as_dict(cond)
        p = path.index(i)
        ctype = cond.get("type") if isinstance(cond.get("type"), str) else ""
        errs.extend(fmt_errors(ctype, p.child("type"), names.is_qualified_name))
        status = cond.get("status") or ""
        if status not in CONDITION_STATUSES:
            errs.append(field.not_supported(p.child("status"), status, CONDITION_STATUSES))
        og = _int(cond.get("observedGeneration"))
        if og is not None and og < 0:
            errs.append(
                field.invalid(p.child("observedGeneration"), og, "must be greater than or equal to zero")
            )
        if not cond.get("lastTransitionTime"):
            errs.append(field.required(p.child("lastTransitionTime"), "must be set"))
        reason = cond.get("reason") if isinstance(cond.get("reason"), str) else ""
        if not reason:
            errs.append(field.required(p.child("reason"), "must be set"))
        else:
            if _CONDITION_REASON_RE.fullmatch(reason) is None:
                errs.append(
                    field.invalid(
                        p.child("reason"),
                        reason,
                        names.regex_error(
                            _CONDITION_REASON_MSG,
                            _CONDITION_REASON_FMT,
                            "ReasonA",
                            "ReasonA,ReasonB",
                            "ReasonA:ReasonB",
                        ),
                    )
                )
            if len(reason) > _MAX_CONDITION_REASON:
                errs.append(field.too_long(p.child("reason"), _MAX_CONDITION_REASON))
        message = cond.get("message") if isinstance(cond.get("message"), str) else ""
        if len(message) > _MAX_CONDITION_MESSAGE:
            errs.append(field.too_long(p.child("message"), _MAX_CONDITION_MESSAGE))
        if ctype in seen:
            errs.append(field.duplicate(p.child("type"), ctype))
        seen.add(ctype)
    return errs


# ============================================================================ Lease


class LeaseStrategy(UntrackedGenerationStrategy):
    """coordination/v1 Leases: positive duration, non-negative transitions."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_lease_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_lease_spec(as_dict(new.get("spec")))


def validate_lease_spec(spec: Obj) -> ErrorList:
    """``ValidateLeaseSpec``."""
    sp = Path("spec")
    errs: ErrorList = []
    lds = spec.get("leaseDurationSeconds")
    if lds is not None and (_int(lds) or 0) <= 0:
        errs.append(field.invalid(sp.child("leaseDurationSeconds"), lds, "must be greater than 0"))
    lt = spec.get("leaseTransitions")
    if lt is not None and (_int(lt) or 0) < 0:
        errs.append(field.invalid(sp.child("leaseTransitions"), lt, "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if strategy is not None:
        s = strategy if isinstance(strategy, str) else ""
        if "/" in s:
            errs.extend(fmt_errors(s, sp.child("strategy"), names.is_qualified_name))
        elif s not in _LEASE_STRATEGIES:
            errs.append(field.not_supported(sp.child("strategy"), s, _LEASE_STRATEGIES))
    if spec.get("preferredHolder") and not strategy:
        errs.append(
            field.forbidden(sp.child("preferredHolder"), "may only be specified if `strategy` is defined")
        )
    return errs


# ============================================================================ PodDisruptionBudget


def _int_or_percent_errors(value: Any, path: Path) -> ErrorList:
    from apiserver.registry.strategies.apps import (
        is_not_more_than_100_percent,
        validate_positive_int_or_percent,
    )

    return validate_positive_int_or_percent(value, path) + is_not_more_than_100_percent(value, path)


def validate_pdb_spec(spec: Obj) -> ErrorList:
    """``ValidatePodDisruptionBudgetSpec``."""
    sp = Path("spec")
    errs: ErrorList = []
    min_a, max_u = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_a is not None and max_u is not None:
        errs.append(field.invalid(sp, spec, "minAvailable and maxUnavailable cannot be both set"))
    if min_a is not None:
        errs.extend(_int_or_percent_errors(min_a, sp.child("minAvailable")))
    if max_u is not None:
        errs.extend(_int_or_percent_errors(max_u, sp.child("maxUnavailable")))
    sel = spec.get("selector")
    if isinstance(sel, dict):
        errs.extend(validate_label_selector(sel, sp.child("selector")))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(
            field.not_supported(
                sp.child("unhealthyPodEvictionPolicy"), policy, UNHEALTHY_POD_EVICTION_POLICIES
            )
        )
    return errs


class PodDisruptionBudgetStrategy(Strategy):
    """policy/v1 PDBs: exclusive budget fields; the disruption controller owns the status."""

    has_status = True

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_pdb_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pdb_spec(as_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status = as_dict(new.get("status"))
        sp = Path("status")
        errs = validate_conditions(status.get("conditions"), sp.child("conditions"))
        for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            errs.extend(validate_nonnegative_field(status.get(key), sp.child(key)))
        return errs


# ============================================================================ PriorityClass


class PriorityClassStrategy(UntrackedGenerationStrategy):
    """scheduling.k8s.io/v1 PriorityClasses: ``system-`` is reserved; value and policy are fixed."""

    def default(self, obj: Obj) -> None:
        if obj.get("preemptionPolicy") is None:
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_priority_class(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs: ErrorList = []
        if new.get("value") != old.get("value"):
            errs.append(field.forbidden("value", "may not be changed in an update."))
        errs.extend(
            validate_immutable(
                new.get("preemptionPolicy"), old.get("preemptionPolicy"), Path("preemptionPolicy")
            )
        )
        return errs


def _known_system_class_error(name: str, value: Any, global_default: bool) -> str | None:
    """``IsKnownSystemPriorityClass``: the reason a ``system-`` class is refused, or None."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known[0]:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default != known[1]:
        return f"globalDefault of {name} PriorityClass must be {str(known[1]).lower()}"
    return None


def validate_priority_class(obj: Obj) -> ErrorList:
    """``ValidatePriorityClass`` (metadata is the registry's)."""
    errs: ErrorList = []
    name = as_dict(obj.get("metadata")).get("name") or ""
    value = obj.get("value")
    if isinstance(name, str) and name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        reason = _known_system_class_error(name, value, bool(obj.get("globalDefault")))
        if reason is not None:
            errs.append(
                field.forbidden(
                    Path("metadata", "name"),
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {reason}",
                )
            )
    elif (_int(value) or 0) > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            field.forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None:
        if policy == "":
            errs.append(field.required("preemptionPolicy"))
        elif policy not in PREEMPTION_POLICIES:
            errs.append(field.not_supported("preemptionPolicy", policy, PREEMPTION_POLICIES))
    return errs


# ============================================================================ events.k8s.io/v1 Event

# (core/v1 field, events.k8s.io/v1 field)
_EVENT_FIELD_MAP = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("reportingComponent", "reportingController"),
    ("count", "deprecatedCount"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
)
_EVENT_SHARED_FIELDS = (
    "metadata",
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
)


def core_event_to_events_v1(e: Obj) -> Obj:
    """A stored (core/v1-shaped) Event as events.k8s.io/v1 shows it."""
    out: Obj = {"kind": "Event", "apiVersion": "events.k8s.io/v1"}
    for key in _EVENT_SHARED_FIELDS:
        if key in e:
            out[key] = copy.deepcopy(e[key])
    for core_key, v1_key in _EVENT_FIELD_MAP:
        if e.get(core_key) is not None:
            out[v1_key] = copy.deepcopy(e[core_key])
    return out


def events_v1_to_core_event(e: Obj) -> Obj:
    """An events.k8s.io/v1 Event in the core/v1 shape the shared storage holds."""
    out: Obj = {"kind": "Event", "apiVersion": "v1"}
    for key in _EVENT_SHARED_FIELDS:
        if key in e:
            out[key] = copy.deepcopy(e[key])
    for core_key, v1_key in _EVENT_FIELD_MAP:
        if e.get(v1_key) is not None:
            out[core_key] = copy.deepcopy(e[v1_key])
    return out


def validate_event_strict(event: Obj, namespace: str) -> ErrorList:
    """``ValidateEventCreate`` for events.k8s.io/v1 requests (on the core-shaped object)."""
    errs = legacy_validate_event(event, namespace, "reportingController")
    errs.extend(_validate_event_series(event))
    if not event.get("eventTime"):
        errs.append(field.required("eventTime"))
    etype = event.get("type")
    if etype not in ("Normal", "Warning"):
        errs.append(field.invalid("type", "", f"has invalid value: {etype if etype is not None else ''}"))
    for key in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(key):
            errs.append(field.invalid(key, "", "needs to be unset"))
    src = as_dict(event.get("source"))
    if src.get("component") or src.get("host"):
        errs.append(field.invalid("source", "", "needs to be unset"))
    return errs


def _validate_event_series(event: Obj) -> ErrorList:
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs: ErrorList = []
    if (_int(series.get("count")) or 0) < 2:
        errs.append(field.invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(field.required("series.lastObservedTime"))
    return errs


_EVENT_IMMUTABLE = (
    ("involvedObject", "involvedObject"),
    ("reason", "reason"),
    ("message", "message"),
    ("source", "source"),
    ("firstTimestamp", "firstTimestamp"),
    ("lastTimestamp", "lastTimestamp"),
    ("count", "count"),
    ("type", "type"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("related", "related"),
    ("eventTime", "eventTime"),
    ("action", "action"),
)


class EventsV1EventStrategy(UntrackedGenerationStrategy):
    """events.k8s.io/v1 Events (core-shaped): strict on create, mostly immutable on update."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_event_strict(obj, ctx.namespace)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = legacy_validate_event(new, ctx.namespace, "reportingController")
        errs.extend(_validate_event_series(new))
        for key, path in _EVENT_IMMUTABLE:
            if new.get(key) != old.get(key):
                errs.append(field.invalid(path, new.get(key), FIELD_IMMUTABLE))
        return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("coordination.k8s.io", "leases"): LeaseStrategy(),
    ("policy", "poddisruptionbudgets"): PodDisruptionBudgetStrategy(),
    ("scheduling.k8s.io", "priorityclasses"): PriorityClassStrategy(),
    ("events.k8s.io", "events"): EventsV1EventStrategy(),
}
