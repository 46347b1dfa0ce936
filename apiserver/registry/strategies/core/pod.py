"""Pods (``pkg/registry/core/pod``): defaults, create/update preparation, validation, status updates and warnings."""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import _keep_old_status, _spec, _str, is_valid_ip
from apiserver.registry.strategies.pod_ephemeral import PodEphemeralContainersStrategy
from apiserver.registry.strategies.pod_spec_memo import POD_SPECS
from apiserver.registry.strategies.podspec import (
    PodValidationOptions,
    as_dict,
    as_list,
    fmt_errors,
    pod_qos_class,
)
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_nonnegative_field,
)

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


POD_PHASES = ["Pending", "Running", "Succeeded", "Failed", "Unknown"]


_SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def _apply_label_keys(term: Any, labels: dict[str, Any]) -> None:
    """``applyMatchLabelKeysAndMismatchLabelKeys``: fold label keys into the term's selector."""
    if not isinstance(term, dict) or not isinstance(term.get("labelSelector"), dict):
        return
    sel = term["labelSelector"]
    for key, op in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
        for k in as_list(term.get(key)):
            if isinstance(k, str) and k in labels:
                sel.setdefault("matchExpressions", []).append(
                    {"key": k, "operator": op, "values": [labels[k]]}
                )


def mutate_pod_affinity(pod: Obj) -> None:
    """``mutatePodAffinity``: resolve ``matchLabelKeys``/``mismatchLabelKeys`` at creation."""
    labels = as_dict(as_dict(pod.get("metadata")).get("labels"))
    aff = as_dict(_spec(pod).get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = as_dict(aff.get(kind))
        for wt in as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution")):
            _apply_label_keys(as_dict(wt).get("podAffinityTerm"), labels)
        for term in as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution")):
            _apply_label_keys(term, labels)


def scheduling_gated_condition() -> Obj:
    """The ``PodScheduled=False/SchedulingGated`` condition the apiserver adds to gated pods."""
    return {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": None,
        "reason": "SchedulingGated",
        "message": _SCHEDULING_GATED_MESSAGE,
    }


_POD_OPTIONS = PodValidationOptions(resource_is_pod=True)
#: the root of a pod's spec errors and warnings (a Path is immutable: ``child`` makes new ones)
_SPEC = Path("spec")


def _validate_pod_metadata_and_spec(pod: Obj, ctx: StrategyContext) -> ErrorList:
    """``validatePodMetadataAndSpec`` minus ObjectMeta (the registry validates that)."""
    spec = as_dict(pod.get("spec"))
    sp = _SPEC
    errs: ErrorList = []
    ann = as_dict(as_dict(pod.get("metadata")).get("annotations"))
    if MIRROR_POD_ANNOTATION in ann and not spec.get("nodeName"):
        errs.append(
            field.invalid(
                Path("metadata", "annotations").key(MIRROR_POD_ANNOTATION),
                ann[MIRROR_POD_ANNOTATION],
                "must set spec.nodeName if mirror pod annotation is set",
            )
        )
    errs.extend(POD_SPECS.validate(spec, sp, _POD_OPTIONS))
    if not spec.get("serviceAccountName"):
        for vi, vol in enumerate(as_list(spec.get("volumes"))):
            for si, src in enumerate(as_list(as_dict(as_dict(vol).get("projected")).get("sources"))):
                if as_dict(src).get("serviceAccountToken") is not None:
                    errs.append(
                        field.forbidden(
                            sp.child("volumes")
                            .index(vi)
                            .child("projected", "sources")
                            .index(si)
                            .child("serviceAccountToken"),
                            "must not be specified when serviceAccountName is not set",
                        )
                    )
    for key in ("containers", "initContainers"):
        for i, c in enumerate(as_list(spec.get(key))):
            image = _str(as_dict(c).get("image"))
            if image != image.strip():
                errs.append(
                    field.invalid(
                        sp.child(key).index(i).child("image"),
                        image,
                        "must not have leading or trailing whitespace",
                    )
                )
    return errs


def _validate_mirror_annotation_update(new: Obj, old: Obj) -> ErrorList:
    new_ann = as_dict(as_dict(new.get("metadata")).get("annotations"))
    old_ann = as_dict(as_dict(old.get("metadata")).get("annotations"))
    p = Path("metadata", "annotations").key(MIRROR_POD_ANNOTATION)
    if (
        MIRROR_POD_ANNOTATION in old_ann
        and new_ann.get(MIRROR_POD_ANNOTATION) != old_ann[MIRROR_POD_ANNOTATION]
    ):
        return [field.forbidden(p, "may not remove or update mirror pod annotation")]
    if MIRROR_POD_ANNOTATION in new_ann and MIRROR_POD_ANNOTATION not in old_ann:
        return [field.forbidden(p, "may not add mirror pod annotation")]
    return []


class PodStrategy(Strategy):
    """``pkg/registry/core/pod/strategy.go``: Pending status and QoS on create, immutable spec."""

    has_status = True
    graceful_delete = True

    def check_graceful_delete(self, obj: Obj, requested: int | None) -> int:
        """kube's pod ``CheckGracefulDelete``: unscheduled or terminal pods go at once."""
        spec = as_dict(obj.get("spec"))
        phase = as_dict(obj.get("status")).get("phase")
        if requested is not None:
            grace = requested
        else:
            grace = int(spec.get("terminationGracePeriodSeconds", 30) or 0)
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        return max(grace, 0)

    #: ``default_pod`` only fills ``spec``, which a status write takes from the stored pod
    defaults_only_replaced_by_status = True

    def default(self, obj: Obj) -> None:
        podspec.default_pod(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        spec = _spec(obj)
        podspec.drop_disabled_pod_spec_fields(spec, None, ctx.gates)
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(obj)}
        if as_list(spec.get("schedulingGates")):
            obj["status"]["conditions"] = [scheduling_gated_condition()]
        if spec.get("affinity"):  # none (or an empty one) has no terms to resolve
            mutate_pod_affinity(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        errs = _validate_pod_metadata_and_spec(obj, ctx)
        spec = as_dict(obj.get("spec"))
        if as_list(spec.get("ephemeralContainers")):
            errs.append(field.forbidden(Path("spec", "ephemeralContainers"), "cannot be set on create"))
        if spec.get("nodeName") and as_list(spec.get("schedulingGates")):
            errs.append(
                field.forbidden(
                    Path("spec", "nodeName"), "cannot be set until all schedulingGates have been cleared"
                )
            )
        return errs

    def warnings_on_create(self, ctx: StrategyContext, obj: Obj) -> list[str]:
        return pod_warnings(as_dict(obj.get("spec")), _SPEC)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        podspec.drop_disabled_pod_spec_fields(_spec(new), old.get("spec"), ctx.gates)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = _validate_pod_metadata_and_spec(new, ctx)
        errs.extend(_validate_mirror_annotation_update(new, old))
        errs.extend(podspec.validate_pod_spec_update(new, old))
        return errs

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(ctx, new, old)
        status = new.get("status")
        if isinstance(status, dict) and not status.get("qosClass"):
            old_qos = as_dict(old.get("status")).get("qosClass")
            if old_qos:
                status["qosClass"] = old_qos

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pod_status_update(new, old)

    def subresource_strategy(self, name: str) -> Strategy | None:
        return _EPHEMERAL_CONTAINERS if name == "ephemeralcontainers" else None


#: ``pods/ephemeralcontainers`` (``kubectl debug``), validated with the pod's own checks first
_EPHEMERAL_CONTAINERS = PodEphemeralContainersStrategy(_validate_pod_metadata_and_spec)


def pod_warnings(spec: Obj, path: Path) -> list[str]:
    """A few of ``GetWarningsForPodTemplate``'s warnings that users commonly hit."""
    out: list[str] = []
    tgps = _int(spec.get("terminationGracePeriodSeconds"))
    if tgps is not None and tgps < 0:
        out.append(
            f"{path.child('terminationGracePeriodSeconds')}: must be >= 0; negative values are invalid and will be treated as 1"
        )
    for key in ("nodeSelector",):
        for label in as_dict(spec.get(key)):
            if label == "beta.kubernetes.io/os":
                out.append(
                    f'{path.child(key).key(label)}: deprecated since v1.14; use "kubernetes.io/os" instead'
                )
            elif label == "beta.kubernetes.io/arch":
                out.append(
                    f'{path.child(key).key(label)}: deprecated since v1.14; use "kubernetes.io/arch" instead'
                )
    return out


def validate_pod_status_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidatePodStatusUpdate``: nominated node name, phase, conditions, container states."""
    errs: ErrorList = []
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    sp = Path("status")
    for i, cond in enumerate(as_list(status.get("conditions"))):
        ctype = _str(as_dict(cond).get("type"))
        if ctype not in ("PodScheduled", "Ready", "Initialized"):
            # kube reports these under "metadata" (its path variable is reused), kept verbatim.
            errs.extend(
                fmt_errors(
                    ctype, Path("metadata", "conditions").index(i).child("Type"), names.is_qualified_name
                )
            )
    if as_dict(new.get("spec")).get("nodeName") != as_dict(old.get("spec")).get("nodeName"):
        errs.append(field.forbidden(sp.child("nodeName"), "may not be changed directly"))
    phase = status.get("phase")
    if phase not in (None, "") and phase not in POD_PHASES:
        errs.append(field.not_supported(sp.child("phase"), phase, POD_PHASES))
    nnn = _str(status.get("nominatedNodeName"))
    if nnn and nnn != old_status.get("nominatedNodeName"):
        errs.extend(
            fmt_errors(nnn, sp.child("nominatedNodeName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    restart = _str(as_dict(old.get("spec")).get("restartPolicy"))
    errs.extend(_container_state_transitions(status, old_status, "containerStatuses", restart, set(), sp))
    sidecars = {
        _str(as_dict(c).get("name"))
        for c in as_list(as_dict(old.get("spec")).get("initContainers"))
        if podspec.is_restartable_init_container(as_dict(c))
    }
    errs.extend(
        _container_state_transitions(status, old_status, "initContainerStatuses", restart, sidecars, sp)
    )
    for i, ip in enumerate(as_list(status.get("podIPs"))):
        errs.extend(fmt_errors(_str(as_dict(ip).get("ip")), sp.child("podIPs").index(i), is_valid_ip))
    errs.extend(validate_nonnegative_field(status.get("observedGeneration"), sp.child("observedGeneration")))
    return errs


def _container_state_transitions(
    status: Obj, old_status: Obj, key: str, restart: str, restartable: set[str], sp: Path
) -> ErrorList:
    """Terminated containers of a non-restarting pod may not come back to life."""
    if restart == "Always":
        return []
    errs: ErrorList = []
    new_by_name = {_str(as_dict(s).get("name")): as_dict(s) for s in as_list(status.get(key))}
    for i, old_cs in enumerate(as_list(old_status.get(key))):
        old_cs = as_dict(old_cs)
        term = as_dict(as_dict(old_cs.get("state")).get("terminated"))
        if not as_dict(old_cs.get("state")).get("terminated"):
            continue
        if (_int(term.get("exitCode")) or 0) != 0 and restart == "OnFailure":
            continue
        name = _str(old_cs.get("name"))
        if name in restartable:
            continue
        new_cs = new_by_name.get(name)
        if new_cs is not None and not as_dict(new_cs.get("state")).get("terminated"):
            errs.append(
                field.forbidden(
                    sp.child(key).index(i).child("state"), "may not be transitioned to non-terminated state"
                )
            )
    return errs
