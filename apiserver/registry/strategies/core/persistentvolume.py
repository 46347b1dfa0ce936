"""PersistentVolumes (``pkg/registry/core/persistentvolume``)."""

from __future__ import annotations

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy, _spec
from apiserver.registry.strategies.core.persistentvolumeclaim import ACCESS_MODES, VOLUME_MODES
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    canonical_resource_list,
    fmt_errors,
    validate_quantity_value,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_immutable,
)

RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]


class PersistentVolumeStrategy(UntrackedGenerationStrategy):
    """PVs: Retain and Filesystem by default; Pending on create; the source is immutable."""

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        if not spec.get("volumeMode"):
            spec["volumeMode"] = "Filesystem"
        if isinstance(spec.get("capacity"), dict):
            spec["capacity"] = canonical_resource_list(spec["capacity"])
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Pending"

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}
        if ctx.now:
            obj["status"]["lastPhaseTransitionTime"] = ctx.now

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_pv_spec(as_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_pv_spec(as_dict(new.get("spec")))
        new_src = {
            k: v for k, v in as_dict(new.get("spec")).items() if k in podspec._VOLUME_SOURCES or k == "local"
        }
        old_src = {
            k: v for k, v in as_dict(old.get("spec")).items() if k in podspec._VOLUME_SOURCES or k == "local"
        }
        if new_src != old_src:
            errs.append(
                field.forbidden(
                    Path("spec", "persistentvolumesource"),
                    "spec.persistentvolumesource is immutable after creation\n"
                    + podspec.spec_diff(old_src, new_src, "core.PersistentVolumeSource"),
                )
            )
        errs.extend(
            validate_immutable(
                as_dict(new.get("spec")).get("volumeMode"),
                as_dict(old.get("spec")).get("volumeMode"),
                Path("volumeMode"),
            )
        )
        return errs

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_status_update(ctx, new, old)
        status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
        if ctx.now and status and status.get("phase") != old_status.get("phase"):
            status["lastPhaseTransitionTime"] = ctx.now


def validate_pv_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    if not as_list(spec.get("accessModes")):
        errs.append(field.required(sp.child("accessModes")))
    for m in as_list(spec.get("accessModes")):
        if m not in ACCESS_MODES:
            errs.append(field.not_supported(sp.child("accessModes"), m, ACCESS_MODES))
    rp = spec.get("persistentVolumeReclaimPolicy")
    if rp and rp not in RECLAIM_POLICIES:
        errs.append(field.not_supported(sp.child("persistentVolumeReclaimPolicy"), rp, RECLAIM_POLICIES))
    cap = as_dict(spec.get("capacity"))
    if not cap:
        errs.append(field.required(sp.child("capacity")))
    elif "storage" not in cap or len(cap) > 1:
        errs.append(field.not_supported(sp.child("capacity"), list(cap), ["storage"]))
    for name, raw in cap.items():
        errs.extend(validate_quantity_value(name, raw, sp.child("capacity").key(name))[1])
    sources = [k for k in spec if k in podspec._VOLUME_SOURCES or k == "local"]
    if not sources:
        errs.append(field.required(sp, "must specify a volume type"))
    for k in sources[1:]:
        errs.append(field.forbidden(sp.child(k), "may not specify more than 1 volume type"))
    scn = spec.get("storageClassName")
    if isinstance(scn, str) and scn:
        errs.extend(
            fmt_errors(scn, sp.child("storageClassName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    vm = spec.get("volumeMode")
    if vm is not None and vm not in VOLUME_MODES:
        errs.append(field.not_supported(sp.child("volumeMode"), vm, VOLUME_MODES))
    return errs
