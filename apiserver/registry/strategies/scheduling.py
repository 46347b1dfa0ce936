"""Strategies for ``scheduling.k8s.io``: Workload (v1beta1), PodGroup (v1beta1), CompositePodGroup (v1alpha3).

Validation follows the 1.37 API (upstream-facts §1): building blocks reuse the workloadbuilder's
declarative-validation equivalents, and the update rules are the types' markers —

* everything a scheduler has already acted on is immutable (``Invalid value: null: field is
  immutable``): constraints, disruption mode, claims, references, priority;
* the policy variant is frozen (``basic`` immutable, ``gang`` NoSet/NoUnset) while
  ``gang.minCount`` / ``gang.minGroupCount`` stays mutable, so controllers can follow scaling;
* Workload templates can be neither added nor removed.

Unchanged values are not re-validated on update (ratcheting), so a stored object never becomes
invalid by a later tightening. Gated fields: ``schedulingConstraints`` (TopologyAwareWorkloadScheduling),
``preemptionPolicy`` (PodGroupPreemptionPolicy), ``parentCompositePodGroupName`` and
``compositePodGroupTemplates`` (CompositePodGroup) are *forbidden* while their gate is off;
``resourceClaims`` (DRAWorkloadResourceClaims) are *dropped* on write unless the stored object
already had them.

KEP-6277 spells the PodGroup → Workload link ``spec.podGroupTemplateRef{workloadName,
podGroupTemplateName}``; 1.37 stores ``spec.workloadRef{workloadName, templateName}``. A PodGroup
written with the KEP spelling is converted and the response carries a warning (decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.scheduling_memo import POD_GROUP_SPECS, WORKLOAD_SPECS
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.workloadbuilder import BASIC_WITH_ALL_MESSAGE
from apiserver.workloadbuilder import validation as dv
from featuregates import (
    COMPOSITE_POD_GROUP,
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    POD_GROUP_PREEMPTION_POLICY,
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING,
    FeatureGate,
)

MAX_TEMPLATES = 8
MAX_TREE_DEPTH = 4
MAX_PRIORITY = 1_000_000_000
MAX_RESOURCE_CLAIM_STATUSES = 4
PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]
CONDITION_STATUSES = ["True", "False", "Unknown"]

IMMUTABLE = "field is immutable"
NO_SET = "field cannot be set once created"
NO_UNSET = "field cannot be cleared once set"
NO_ADD_ITEM = "item may not be added"
NO_REMOVE_ITEM = "item may not be removed"

KEP_REF_FIELD = "podGroupTemplateRef"
KEP_REF_WARNING = "spec.podGroupTemplateRef is the KEP-6277 spelling; stored as spec.workloadRef (scheduling.k8s.io/v1beta1)"

SPEC = Path("spec")
STATUS = Path("status")


# -- small rule helpers ---------------------------------------------------------------------


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _immutable(new: Any, old: Any, path: Path, is_update: bool) -> ErrorList:
    """``+k8s:immutable``: set, unset and change are all rejected on update."""
    if is_update and new != old:
        return [field.invalid(path, None, IMMUTABLE)]
    return []


def _gated(enabled: bool, value: Any, old: Any, path: Path, is_update: bool) -> ErrorList:
    """``+k8s:ifDisabled(gate)=+k8s:forbidden``, ratcheted: a value already stored may stay."""
    if enabled or value in (None, [], {}):
        return []
    if is_update and value == old:
        return []
    return [field.forbidden(path)]


def _required_name(value: Any, path: Path, check: Callable[[str, Path], ErrorList]) -> ErrorList:
    if not value:
        return [field.required(path)]
    if not isinstance(value, str):
        return [field.type_invalid(path, value, "expected a string")]
    return check(value, path)


def _optional_name(value: Any, path: Path, check: Callable[[str, Path], ErrorList]) -> ErrorList:
    if value in (None, ""):
        return []
    return _required_name(value, path, check)


def _type_object(value: Any, path: Path) -> ErrorList:
    return [] if isinstance(value, dict) else [field.type_invalid(path, value, "expected an object")]


# -- shared spec parts ----------------------------------------------------------------------


def validate_policy(
    policy: Any, old: Any, path: Path, *, count_key: str = "minCount", is_update: bool = False
) -> ErrorList:
    """A required basic/gang union whose gang carries a required, mutable count >= 1.

    Switching variants is rejected by the markers: ``basic`` is immutable and ``gang`` NoSet/NoUnset.
    """
    if policy is None:
        return [field.required(path)]
    if is_update and policy == old:
        return []
    if errs := _type_object(policy, path):
        return errs
    old_d = old if isinstance(old, dict) else None
    errs = dv.union(path, policy, ("basic", "gang"), old_d)
    gang = policy.get("gang")
    if gang is not None:
        if not isinstance(gang, dict):
            errs.extend(_type_object(gang, path.child("gang")))
        else:
            count = gang.get(count_key)
            if not count:
                errs.append(field.required(path.child("gang", count_key)))
            else:
                errs.extend(dv.validate_minimum(count, path.child("gang", count_key)))
    if is_update and old_d is not None:
        if policy.get("basic") != old_d.get("basic"):
            errs.append(field.invalid(path.child("basic"), None, IMMUTABLE))
        if old_d.get("gang") is None and gang is not None:
            errs.append(field.invalid(path.child("gang"), None, NO_SET))
        elif old_d.get("gang") is not None and gang is None:
            errs.append(field.invalid(path.child("gang"), None, NO_UNSET))
    return errs


def _validate_priority(value: Any, path: Path) -> ErrorList:
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [field.type_invalid(path, value, "expected an integer")]
    if value > MAX_PRIORITY:
        return [field.invalid(path, value, f"must be less than or equal to {MAX_PRIORITY}")]
    return []


def validate_common(
    ctx: StrategyContext, obj: Obj, old: Obj | None, path: Path, *, leaf: bool, is_update: bool
) -> ErrorList:
    """Fields shared by (Composite)PodGroupTemplates and (Composite)PodGroup specs.

    ``path`` is the object holding the fields (a template, or ``spec``); ``old`` its previous
    counterpart on update, ``None`` on create or for a template new in this update.
    """
    o = old or {}
    upd = is_update and old is not None
    errs: ErrorList = []

    sc_path = path.child("schedulingConstraints")
    sc = obj.get("schedulingConstraints")
    errs += _gated(
        ctx.gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING),
        sc,
        o.get("schedulingConstraints"),
        sc_path,
        upd,
    )
    errs += dv.validate_scheduling_constraints(sc, sc_path, o.get("schedulingConstraints") if upd else None)
    errs += _immutable(sc, o.get("schedulingConstraints"), sc_path, upd)

    dm_path = path.child("disruptionMode")
    dm = obj.get("disruptionMode")
    errs += dv.validate_disruption_mode(dm, dm_path, o.get("disruptionMode") if upd else None)
    errs += _immutable(dm, o.get("disruptionMode"), dm_path, upd)

    if leaf:
        rc_path = path.child("resourceClaims")
        rc = obj.get("resourceClaims")
        errs += dv.validate_resource_claims(rc, rc_path, o.get("resourceClaims") if upd else None)
        errs += _immutable(rc or None, o.get("resourceClaims") or None, rc_path, upd)

    pcn_path = path.child("priorityClassName")
    pcn = obj.get("priorityClassName")
    if not (upd and pcn == o.get("priorityClassName")):
        errs += _optional_name(pcn, pcn_path, dv.validate_dns_subdomain)
    errs += _immutable(pcn or None, o.get("priorityClassName") or None, pcn_path, upd)

    prio_path = path.child("priority")
    errs += _validate_priority(obj.get("priority"), prio_path)
    errs += _immutable(obj.get("priority"), o.get("priority"), prio_path, upd)

    pp_path = path.child("preemptionPolicy")
    pp = obj.get("preemptionPolicy")
    errs += _gated(
        ctx.gates.enabled(POD_GROUP_PREEMPTION_POLICY), pp, o.get("preemptionPolicy"), pp_path, upd
    )
    if pp is not None and pp not in PREEMPTION_POLICIES:
        errs.append(field.not_supported(pp_path, pp, PREEMPTION_POLICIES))
    errs += _immutable(pp, o.get("preemptionPolicy"), pp_path, upd)

    errs += _basic_with_all(obj, dm_path)
    return errs


def _basic_with_all(obj: Obj, dm_path: Path) -> ErrorList:
    """KEP-5710: the disruption unit cannot exceed the scheduling unit, so no ``all`` with ``basic``."""
    policy = _dict(obj.get("schedulingPolicy"))
    mode = _dict(obj.get("disruptionMode"))
    if policy.get("basic") is not None and policy.get("gang") is None and mode.get("all") is not None:
        return [field.invalid(dm_path, "", BASIC_WITH_ALL_MESSAGE)]
    return []


# -- Workload templates ---------------------------------------------------------------------


def _list_shape(items: Any, old_items: Any, path: Path, is_update: bool) -> ErrorList:
    """maxItems, map-key uniqueness and NoAddItem/NoRemoveItem for a template list."""
    if items is None:
        return []
    if not isinstance(items, list):
        return [field.type_invalid(path, items, "expected a list")]
    errs: ErrorList = []
    if len(items) > MAX_TEMPLATES:
        errs.append(field.too_many(path, len(items), MAX_TEMPLATES))
    errs += dv.unique_by_name(items, path)
    if is_update and old_items is not None:
        old_names = {t.get("name") for t in old_items if isinstance(t, dict)}
        new_names = {t.get("name") for t in items if isinstance(t, dict)}
        errs += [
            field.forbidden(path.index(i), NO_ADD_ITEM)
            for i, t in enumerate(items)
            if isinstance(t, dict) and t.get("name") not in old_names
        ]
        errs += [
            field.forbidden(path, NO_REMOVE_ITEM)
            for t in old_items
            if isinstance(t, dict) and t.get("name") not in new_names
        ]
    return errs


def _old_by_name(old_items: Any) -> dict[str, Obj]:
    return {t["name"]: t for t in old_items or [] if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _validate_template_lists(
    ctx: StrategyContext, parent: Obj, old_parent: Obj | None, path: Path, depth: int, is_update: bool
) -> ErrorList:
    """``podGroupTemplates`` and ``compositePodGroupTemplates`` below ``parent`` (at tree ``depth``)."""
    o = old_parent or {}
    upd = is_update and old_parent is not None
    errs: ErrorList = []
    for key, composite in (("podGroupTemplates", False), ("compositePodGroupTemplates", True)):
        list_path = path.child(key)
        items = parent.get(key)
        if items and depth > MAX_TREE_DEPTH:
            errs.append(
                field.forbidden(
                    list_path, f"the Workload template tree may be at most {MAX_TREE_DEPTH} levels deep"
                )
            )
            continue
        errs += _list_shape(items, o.get(key), list_path, upd)
        old_templates = _old_by_name(o.get(key)) if upd else {}
        for i, tmpl in enumerate(items if isinstance(items, list) else []):
            if not isinstance(tmpl, dict):
                errs += _type_object(tmpl, list_path.index(i))
                continue
            old_tmpl = old_templates.get(str(tmpl.get("name")))
            if composite:
                errs += _validate_composite_template(ctx, tmpl, old_tmpl, list_path.index(i), depth, upd)
            else:
                errs += _validate_pod_group_template(ctx, tmpl, old_tmpl, list_path.index(i), upd)
    return errs


def _validate_pod_group_template(
    ctx: StrategyContext, tmpl: Obj, old: Obj | None, path: Path, is_update: bool
) -> ErrorList:
    upd = is_update and old is not None
    if upd and tmpl == old:
        return []
    errs = _required_name(tmpl.get("name"), path.child("name"), dv.validate_dns_label)
    errs += validate_policy(
        tmpl.get("schedulingPolicy"),
        (old or {}).get("schedulingPolicy"),
        path.child("schedulingPolicy"),
        is_update=upd,
    )
    errs += validate_common(ctx, tmpl, old, path, leaf=True, is_update=upd)
    return errs


def _validate_composite_template(
    ctx: StrategyContext, tmpl: Obj, old: Obj | None, path: Path, depth: int, is_update: bool
) -> ErrorList:
    upd = is_update and old is not None
    if upd and tmpl == old:
        return []
    errs = _required_name(tmpl.get("name"), path.child("name"), dv.validate_dns_label)
    errs += validate_policy(
        tmpl.get("schedulingPolicy"),
        (old or {}).get("schedulingPolicy"),
        path.child("schedulingPolicy"),
        count_key="minGroupCount",
        is_update=upd,
    )
    errs += validate_common(ctx, tmpl, old, path, leaf=False, is_update=upd)
    if not tmpl.get("podGroupTemplates") and not tmpl.get("compositePodGroupTemplates"):
        errs.append(
            field.invalid(
                path, "", "must specify at least one of: `podGroupTemplates`, `compositePodGroupTemplates`"
            )
        )
    errs += _validate_template_lists(ctx, tmpl, old, path, depth + 1, upd)
    return errs


def _tree_name_errors(spec: Obj) -> ErrorList:
    """KEP-6012: template names are unique across the whole tree (same-list repeats are already
    reported by the list's own uniqueness rule)."""
    first_seen: dict[str, Path] = {}
    errs: ErrorList = []

    def walk(parent: Obj, path: Path) -> None:
        for key in ("podGroupTemplates", "compositePodGroupTemplates"):
            items = parent.get(key)
            if not isinstance(items, list):
                continue
            list_path = path.child(key)
            for i, tmpl in enumerate(items):
                if not isinstance(tmpl, dict):
                    continue
                name = tmpl.get("name")
                if isinstance(name, str) and name:
                    if name not in first_seen:
                        first_seen[name] = list_path
                    elif first_seen[name] != list_path:
                        errs.append(field.duplicate(list_path.index(i).child("name"), name))
                if key == "compositePodGroupTemplates":
                    walk(tmpl, list_path.index(i))

    walk(spec, SPEC)
    return errs


def _validate_controller_ref(ref: Any, path: Path) -> ErrorList:
    if ref is None:
        return []
    if errs := _type_object(ref, path):
        return errs
    return [
        *_optional_name(ref.get("apiGroup"), path.child("apiGroup"), dv.validate_dns_subdomain),
        *_required_name(ref.get("kind"), path.child("kind"), dv.validate_path_segment_name),
        *_required_name(ref.get("name"), path.child("name"), dv.validate_path_segment_name),
    ]


def validate_workload_spec(ctx: StrategyContext, spec: Any, old_spec: Any, is_update: bool) -> ErrorList:
    if errs := _type_object(spec, SPEC):
        return errs
    old = old_spec if isinstance(old_spec, dict) else None
    upd = is_update and old is not None
    o = old or {}
    errs = dv.union(
        SPEC,
        spec,
        ("podGroupTemplates", "compositePodGroupTemplates"),
        old if upd else None,
        is_set=lambda obj, key: bool(obj.get(key)),
    )
    cpgt_path = SPEC.child("compositePodGroupTemplates")
    errs += _gated(
        ctx.gates.enabled(COMPOSITE_POD_GROUP),
        spec.get("compositePodGroupTemplates") or None,
        o.get("compositePodGroupTemplates") or None,
        cpgt_path,
        upd,
    )
    ref = spec.get("controllerRef")
    if not (upd and ref == o.get("controllerRef")):
        errs += _validate_controller_ref(ref, SPEC.child("controllerRef"))
    errs += _immutable(ref, o.get("controllerRef"), SPEC.child("controllerRef"), upd)
    errs += _validate_template_lists(ctx, spec, old, SPEC, 1, upd)
    errs += _tree_name_errors(spec)
    return errs


def _drop_template_claims(parent: Obj, old_parent: Obj | None) -> None:
    """DRAWorkloadResourceClaims off: clear claims of templates whose stored self had none."""
    old_templates = _old_by_name((old_parent or {}).get("podGroupTemplates"))
    for tmpl in parent.get("podGroupTemplates") or []:
        if isinstance(tmpl, dict) and not _dict(old_templates.get(str(tmpl.get("name")))).get(
            "resourceClaims"
        ):
            tmpl.pop("resourceClaims", None)
    old_composites = _old_by_name((old_parent or {}).get("compositePodGroupTemplates"))
    for tmpl in parent.get("compositePodGroupTemplates") or []:
        if isinstance(tmpl, dict):
            _drop_template_claims(tmpl, old_composites.get(str(tmpl.get("name"))))


def drop_disabled_embedded_scheduling(gates: FeatureGate, gate: str, spec: Obj, old_sched: Any) -> None:
    """Clear the gated parts of an embedded ``spec.scheduling`` (Job, StatefulSet) before storing.

    ``gate`` guards the field itself (``WorkloadWithJob``, ``WorkloadWithStatefulSet``); its
    ``resourceClaims`` (``DRAWorkloadResourceClaims``) and ``schedulingConstraints``
    (``TopologyAwareWorkloadScheduling``) are the building blocks' own gates. Each is dropped
    while its gate is off unless ``old_sched`` (the stored ``spec.scheduling``, None on create)
    already used it. The Job and StatefulSet strategies share this so their gates cannot drift.
    """
    old_sched = old_sched if isinstance(old_sched, dict) else None
    if not gates.enabled(gate) and old_sched is None:
        spec.pop("scheduling", None)
        return
    sched = spec.get("scheduling")
    if not isinstance(sched, dict):
        return
    if not gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) and not (old_sched or {}).get("resourceClaims"):
        sched.pop("resourceClaims", None)
    if (
        not gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)
        and (old_sched or {}).get("schedulingConstraints") is None
    ):
        sched.pop("schedulingConstraints", None)


class WorkloadStrategy(Strategy):
    """``workloads.scheduling.k8s.io`` v1beta1: the persistent template; no status."""

    has_status = False

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        super().prepare_for_create(ctx, obj)
        if not ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) and isinstance(obj.get("spec"), dict):
            _drop_template_claims(obj["spec"], None)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        if not ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) and isinstance(new.get("spec"), dict):
            _drop_template_claims(new["spec"], _dict(old.get("spec")))

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return WORKLOAD_SPECS.validate(ctx, obj.get("spec"), validate_workload_spec)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_workload_spec(ctx, new.get("spec"), old.get("spec"), True)


# -- PodGroup -------------------------------------------------------------------------------


def convert_kep_workload_ref(obj: Obj) -> str | None:
    """Rewrite ``spec.podGroupTemplateRef`` (KEP-6277) as ``spec.workloadRef`` (1.37).

    Returns the warning to surface, or ``None`` when there was nothing to convert. When both
    spellings are present and disagree the KEP field is left in place for validation to reject.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict) or KEP_REF_FIELD not in spec:
        return None
    kep = spec.get(KEP_REF_FIELD)
    if kep is None:
        del spec[KEP_REF_FIELD]
        return None
    if not isinstance(kep, dict):
        return None
    converted: Obj = {}
    if "workloadName" in kep:
        converted["workloadName"] = kep["workloadName"]
    if "podGroupTemplateName" in kep:
        converted["templateName"] = kep["podGroupTemplateName"]
    current = spec.get("workloadRef")
    if current is not None and current != converted:
        return None
    spec["workloadRef"] = converted
    del spec[KEP_REF_FIELD]
    return KEP_REF_WARNING


def _convert_with_warning(ctx: StrategyContext, obj: Obj) -> None:
    warning = convert_kep_workload_ref(obj)
    if warning is not None:
        ctx.warnings.append(warning)


def _validate_workload_ref(ref: Any, old: Any, path: Path, *, required: bool, is_update: bool) -> ErrorList:
    errs: ErrorList = []
    if ref is None:
        if required:
            errs.append(field.required(path))
    elif not (is_update and ref == old):
        if errs := _type_object(ref, path):
            return errs
        errs += _required_name(ref.get("workloadName"), path.child("workloadName"), dv.validate_dns_subdomain)
        errs += _required_name(ref.get("templateName"), path.child("templateName"), dv.validate_dns_label)
    errs += _immutable(ref, old, path, is_update)
    return errs


def _validate_parent_name(
    ctx: StrategyContext, spec: Obj, o: Obj, is_update: bool, *, gated: bool
) -> ErrorList:
    path = SPEC.child("parentCompositePodGroupName")
    parent = spec.get("parentCompositePodGroupName")
    errs: ErrorList = []
    if gated:
        errs += _gated(
            ctx.gates.enabled(COMPOSITE_POD_GROUP),
            parent or None,
            o.get("parentCompositePodGroupName") or None,
            path,
            is_update,
        )
    if not (is_update and parent == o.get("parentCompositePodGroupName")):
        errs += _optional_name(parent, path, dv.validate_dns_subdomain)
    errs += _immutable(parent or None, o.get("parentCompositePodGroupName") or None, path, is_update)
    return errs


def validate_pod_group_spec(ctx: StrategyContext, spec: Any, old_spec: Any, is_update: bool) -> ErrorList:
    if errs := _type_object(spec, SPEC):
        return errs
    old = old_spec if isinstance(old_spec, dict) else None
    upd = is_update and old is not None
    o = old or {}
    errs: ErrorList = []
    if spec.get(KEP_REF_FIELD) is not None:
        errs.append(
            field.invalid(
                SPEC.child(KEP_REF_FIELD),
                spec[KEP_REF_FIELD],
                "conflicts with spec.workloadRef; set only spec.workloadRef",
            )
        )
    errs += _validate_parent_name(ctx, spec, o, upd, gated=True)
    if spec.get("parentCompositePodGroupName") and spec.get("workloadRef") is None:
        errs.append(
            field.required(SPEC.child("workloadRef"), "required when `parentCompositePodGroupName` is set")
        )
    errs += _validate_workload_ref(
        spec.get("workloadRef"),
        o.get("workloadRef"),
        SPEC.child("workloadRef"),
        required=False,
        is_update=upd,
    )
    errs += validate_policy(
        spec.get("schedulingPolicy"), o.get("schedulingPolicy"), SPEC.child("schedulingPolicy"), is_update=upd
    )
    errs += validate_common(ctx, spec, old, SPEC, leaf=True, is_update=upd)
    return errs


def validate_conditions(conditions: Any, old: Any, path: Path) -> ErrorList:
    """``metav1.Condition`` list keyed by type: type and status required, status True/False/Unknown."""
    if conditions is None or conditions == old:
        return []
    if not isinstance(conditions, list):
        return [field.type_invalid(path, conditions, "expected a list")]
    errs: ErrorList = []
    seen: set[str] = set()
    for i, cond in enumerate(conditions):
        p = path.index(i)
        if not isinstance(cond, dict):
            errs += _type_object(cond, p)
            continue
        ctype = cond.get("type")
        if not ctype:
            errs.append(field.required(p.child("type")))
        elif isinstance(ctype, str):
            if ctype in seen:
                errs.append(field.duplicate(p, cond))
            seen.add(ctype)
        status = cond.get("status")
        if not status:
            errs.append(field.required(p.child("status")))
        elif status not in CONDITION_STATUSES:
            errs.append(field.not_supported(p.child("status"), status, CONDITION_STATUSES))
    return errs


def _validate_claim_statuses(statuses: Any, old: Any, path: Path) -> ErrorList:
    if statuses is None or statuses == old:
        return []
    if not isinstance(statuses, list):
        return [field.type_invalid(path, statuses, "expected a list")]
    errs: ErrorList = []
    if len(statuses) > MAX_RESOURCE_CLAIM_STATUSES:
        errs.append(field.too_many(path, len(statuses), MAX_RESOURCE_CLAIM_STATUSES))
    errs += dv.unique_by_name(statuses, path)
    for i, st in enumerate(statuses):
        p = path.index(i)
        if not isinstance(st, dict):
            errs += _type_object(st, p)
            continue
        errs += _required_name(st.get("name"), p.child("name"), dv.validate_dns_label)
        errs += _optional_name(
            st.get("resourceClaimName"), p.child("resourceClaimName"), dv.validate_dns_subdomain
        )
    return errs


class PodGroupStrategy(Strategy):
    """``podgroups.scheduling.k8s.io`` v1beta1: the runtime scheduling unit, with ``/status``."""

    has_status = True
    #: the one default is ``spec.disruptionMode``, which a status write takes from the stored
    #: group: the scheduler's condition writes skip it
    defaults_only_replaced_by_status = True

    def default(self, obj: Obj) -> None:
        """1.37 defaults ``spec.disruptionMode`` to ``{single: {}}`` (templates stay undefaulted)."""
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("disruptionMode") is None:
            spec["disruptionMode"] = {"single": {}}

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        super().prepare_for_create(ctx, obj)
        _convert_with_warning(ctx, obj)
        spec = obj.get("spec")
        if isinstance(spec, dict) and not ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS):
            spec.pop("resourceClaims", None)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        _convert_with_warning(ctx, new)
        spec = new.get("spec")
        if (
            isinstance(spec, dict)
            and not ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS)
            and not _dict(old.get("spec")).get("resourceClaims")
        ):
            spec.pop("resourceClaims", None)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return POD_GROUP_SPECS.validate(ctx, obj.get("spec"), validate_pod_group_spec)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pod_group_spec(ctx, new.get("spec"), old.get("spec"), True)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status, old_status = _dict(new.get("status")), _dict(old.get("status"))
        return [
            *validate_conditions(
                status.get("conditions"), old_status.get("conditions"), STATUS.child("conditions")
            ),
            *_validate_claim_statuses(
                status.get("resourceClaimStatuses"),
                old_status.get("resourceClaimStatuses"),
                STATUS.child("resourceClaimStatuses"),
            ),
        ]


# -- CompositePodGroup ----------------------------------------------------------------------


def validate_composite_pod_group_spec(
    ctx: StrategyContext, spec: Any, old_spec: Any, is_update: bool
) -> ErrorList:
    if errs := _type_object(spec, SPEC):
        return errs
    old = old_spec if isinstance(old_spec, dict) else None
    upd = is_update and old is not None
    o = old or {}
    errs = _validate_parent_name(ctx, spec, o, upd, gated=False)
    errs += _validate_workload_ref(
        spec.get("workloadRef"), o.get("workloadRef"), SPEC.child("workloadRef"), required=True, is_update=upd
    )
    errs += validate_policy(
        spec.get("schedulingPolicy"),
        o.get("schedulingPolicy"),
        SPEC.child("schedulingPolicy"),
        count_key="minGroupCount",
        is_update=upd,
    )
    errs += validate_common(ctx, spec, old, SPEC, leaf=False, is_update=upd)
    return errs


class CompositePodGroupStrategy(Strategy):
    """``compositepodgroups.scheduling.k8s.io`` v1alpha3: a non-leaf group node, with ``/status``."""

    has_status = True

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_composite_pod_group_spec(ctx, obj.get("spec"), None, False)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_composite_pod_group_spec(ctx, new.get("spec"), old.get("spec"), True)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        status, old_status = _dict(new.get("status")), _dict(old.get("status"))
        return validate_conditions(
            status.get("conditions"), old_status.get("conditions"), STATUS.child("conditions")
        )


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("scheduling.k8s.io", "workloads"): WorkloadStrategy(),
    ("scheduling.k8s.io", "podgroups"): PodGroupStrategy(),
    ("scheduling.k8s.io", "compositepodgroups"): CompositePodGroupStrategy(),
}
