"""PersistentVolumeClaims (``pkg/registry/core/persistentvolumeclaim``)."""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import (
    UntrackedGenerationStrategy,
    _canonical_status_lists,
    _spec,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    fmt_errors,
    quantity_or_none,
    quantity_text,
    validate_quantity_value,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_immutable,
    validate_label_selector,
)

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]  # sets.List order


VOLUME_MODES = ["Block", "Filesystem"]


def validate_pvc_spec(spec: Any, path: Path) -> ErrorList:
    """``ValidatePersistentVolumeClaimSpec``."""
    spec = as_dict(spec)
    errs: ErrorList = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(field.required(path.child("accessModes"), "at least 1 access mode is required"))
    if isinstance(spec.get("selector"), dict):
        errs.extend(validate_label_selector(spec["selector"], path.child("selector")))
    rwop = other = False
    for m in modes:
        if m not in ACCESS_MODES:
            errs.append(field.not_supported(path.child("accessModes"), m, ACCESS_MODES))
        if m == "ReadWriteOncePod":
            rwop = True
        elif m in ACCESS_MODES:
            other = True
    if rwop and other:
        errs.append(
            field.forbidden(path.child("accessModes"), "may not use ReadWriteOncePod with other access modes")
        )
    sp = path.child("resources").key("storage")
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(field.required(sp))
    else:
        q = quantity_or_none(requests["storage"])
        if q is None:
            errs.extend(validate_quantity_value("storage", requests["storage"], sp)[1])
        elif q <= 0:
            errs.append(field.invalid(sp, quantity_text(requests["storage"]), "must be greater than zero"))
    scn = spec.get("storageClassName")
    if isinstance(scn, str) and scn:
        errs.extend(
            fmt_errors(scn, path.child("storageClassName"), lambda s: names.name_is_dns_subdomain(s, False))
        )
    vm = spec.get("volumeMode")
    if vm is not None and vm not in VOLUME_MODES:
        errs.append(field.not_supported(path.child("volumeMode"), vm, VOLUME_MODES))
    return errs


class PersistentVolumeClaimStrategy(UntrackedGenerationStrategy):
    """PVCs: Pending on create; spec immutable except bound-claim growth and one-time binding."""

    has_status = True

    def default(self, obj: Obj) -> None:
        podspec.default_pvc_spec(_spec(obj))
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Pending"
        _canonical_status_lists(obj, "capacity", "allocatedResources")

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_pvc_spec(obj.get("spec"), Path("spec"))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_pvc_update(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs: ErrorList = []
        if not as_list(as_dict(new.get("spec")).get("accessModes")):
            errs.append(field.required(Path("Spec", "accessModes")))
        for name, raw in as_dict(as_dict(new.get("status")).get("capacity")).items():
            errs.extend(validate_quantity_value(name, raw, Path("status", "capacity").key(name))[1])
        return errs


def validate_pvc_update(new: Obj, old: Obj) -> ErrorList:
    """``ValidatePersistentVolumeClaimUpdate`` with volume-expansion recovery enabled (GA)."""
    errs = validate_pvc_spec(new.get("spec"), Path("spec"))
    new_spec, old_spec = copy.deepcopy(as_dict(new.get("spec"))), copy.deepcopy(as_dict(old.get("spec")))
    if not old_spec.get("volumeName"):
        if "volumeName" in new_spec:
            old_spec["volumeName"] = new_spec["volumeName"]
        else:
            old_spec.pop("volumeName", None)
    bound = as_dict(new.get("status")).get("phase") == "Bound"
    new_req = as_dict(as_dict(new_spec.get("resources")).get("requests"))
    if bound and new_req:
        old_storage = as_dict(as_dict(old_spec.get("resources")).get("requests")).get("storage")
        if old_storage is None:
            new_req.pop("storage", None)
        else:
            new_req["storage"] = old_storage
    for spec in (new_spec, old_spec):
        spec.pop("volumeAttributesClassName", None)
    if old_spec.get("storageClassName") is None and new_spec.get("storageClassName") is not None:
        old_spec["storageClassName"] = new_spec["storageClassName"]
    if new_spec != old_spec:
        errs.append(
            field.forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
                + podspec.spec_diff(old_spec, new_spec, "core.PersistentVolumeClaimSpec"),
            )
        )
    old_size = quantity_or_none(
        as_dict(as_dict(as_dict(old.get("spec")).get("resources")).get("requests")).get("storage")
    )
    new_size = quantity_or_none(
        as_dict(as_dict(as_dict(new.get("spec")).get("resources")).get("requests")).get("storage")
    )
    status_size = quantity_or_none(as_dict(as_dict(old.get("status")).get("capacity")).get("storage"))
    if (
        old_size is not None
        and new_size is not None
        and new_size < old_size
        and new_size <= (status_size or 0)
    ):
        errs.append(
            field.forbidden(
                Path("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"
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
