"""Strategies of storage.k8s.io/v1 StorageClass and CSIDriver (kube's ``pkg/registry/storage``).

StorageClasses default their reclaim policy and binding mode, and once created keep their
provisioner, parameters, reclaim policy and binding mode. CSIDrivers default every optional
behaviour flag (as ``SetDefaults_CSIDriver`` does), keep ``attachRequired`` and the lifecycle
modes, and bump ``metadata.generation`` on spec changes; unlike StorageClasses they refuse an
unconditional update (kube's ``AllowUnconditionalUpdate`` is false for CSIDrivers).
"""

from __future__ import annotations

from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import validate_immutable

GROUP = "storage.k8s.io"
RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]
MAX_PARAMETERS_BYTES = 256 * 1024
MIN_TOKEN_SECONDS = 600
MAX_TOKEN_SECONDS = 1 << 32


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


# ---------------------------------------------------------------------------------- StorageClass


def default_storage_class(obj: Obj) -> None:
    if not obj.get("reclaimPolicy"):
        obj["reclaimPolicy"] = "Delete"
    if not obj.get("volumeBindingMode"):
        obj["volumeBindingMode"] = "Immediate"


def validate_provisioner(provisioner: Any, path: Path) -> ErrorList:
    p = provisioner if isinstance(provisioner, str) else ""
    if not p:
        return [field.required(path, p)]
    return [field.invalid(path, p, m) for m in names.is_qualified_name(p.lower())]


def validate_storage_class(obj: Obj) -> ErrorList:
    """``ValidateStorageClass``."""
    errs = validate_provisioner(obj.get("provisioner"), Path("provisioner"))
    params = _dict(obj.get("parameters"))
    size = 0
    for k, v in params.items():
        if not k:
            errs.append(field.invalid(Path("parameters"), k, "field can not be empty."))
        size += len(k) + len(str(v))
    if size > MAX_PARAMETERS_BYTES:
        errs.append(field.too_long(Path("parameters"), MAX_PARAMETERS_BYTES))
    rp = obj.get("reclaimPolicy")
    if rp not in RECLAIM_POLICIES:
        errs.append(field.not_supported(Path("reclaimPolicy"), rp, RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if not mode:
        errs.append(field.required(Path("volumeBindingMode")))
    elif mode not in BINDING_MODES:
        errs.append(field.not_supported(Path("volumeBindingMode"), mode, BINDING_MODES))
    for i, term in enumerate(_list(obj.get("allowedTopologies"))):
        tp = Path("allowedTopologies").index(i)
        exprs = _list(_dict(term).get("matchLabelExpressions"))
        if not exprs:
            errs.append(
                field.required(tp.child("matchLabelExpressions"), "must contain at least one requirement")
            )
        for j, req in enumerate(exprs):
            rp2 = tp.child("matchLabelExpressions").index(j)
            key = _dict(req).get("key") or ""
            errs.extend(field.invalid(rp2.child("key"), key, m) for m in names.is_qualified_name(key))
            if not _list(_dict(req).get("values")):
                errs.append(field.required(rp2.child("values"), "must specify as least one value"))
    return errs


def validate_storage_class_update(new: Obj, old: Obj) -> ErrorList:
    errs: ErrorList = []
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        errs.append(field.forbidden(Path("parameters"), "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errs.append(field.forbidden(Path("provisioner"), "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(field.forbidden(Path("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
    errs.extend(
        validate_immutable(
            new.get("volumeBindingMode"), old.get("volumeBindingMode"), Path("volumeBindingMode")
        )
    )
    return errs


class StorageClassStrategy(UntrackedGenerationStrategy):
    def default(self, obj: Obj) -> None:
        default_storage_class(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_storage_class(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_storage_class(new) + validate_storage_class_update(new, old)


# ------------------------------------------------------------------------------------ CSIDriver


def default_csi_driver(obj: Obj) -> None:
    """``SetDefaults_CSIDriverSpec``."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    for key, value in (
        ("attachRequired", True),
        ("podInfoOnMount", False),
        ("storageCapacity", False),
        ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
        ("requiresRepublish", False),
        ("seLinuxMount", False),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def validate_csi_driver_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    for key in ("attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish"):
        if spec.get(key) is None:
            errs.append(field.required(sp.child(key)))
    fsg = spec.get("fsGroupPolicy")
    if fsg is not None and fsg not in FS_GROUP_POLICIES:
        errs.append(field.not_supported(sp.child("fsGroupPolicy"), fsg, FS_GROUP_POLICIES))
    for i, mode in enumerate(_list(spec.get("volumeLifecycleModes"))):
        if mode not in LIFECYCLE_MODES:
            errs.append(field.not_supported(sp.child("volumeLifecycleModes").index(i), mode, LIFECYCLE_MODES))
    seen: set[str] = set()
    for i, tr in enumerate(_list(spec.get("tokenRequests"))):
        tp = sp.child("tokenRequests").index(i)
        audience = _dict(tr).get("audience") or ""
        if audience in seen:
            errs.append(field.duplicate(tp.child("audience"), audience))
        seen.add(audience)
        secs = _dict(tr).get("expirationSeconds")
        if isinstance(secs, int) and not isinstance(secs, bool):
            if secs < MIN_TOKEN_SECONDS:
                errs.append(
                    field.invalid(
                        tp.child("expirationSeconds"), secs, "may not specify a duration less than 10 minutes"
                    )
                )
            if secs > MAX_TOKEN_SECONDS:
                errs.append(
                    field.invalid(
                        tp.child("expirationSeconds"),
                        secs,
                        "may not specify a duration larger than 2^32 seconds",
                    )
                )
    return errs


class CSIDriverStrategy(Strategy):
    allow_unconditional_update = False

    def default(self, obj: Obj) -> None:
        default_csi_driver(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_csi_driver_spec(_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        ns, os_ = _dict(new.get("spec")), _dict(old.get("spec"))
        errs = validate_csi_driver_spec(ns)
        # kube's path really is "attachedRequired".
        errs.extend(
            validate_immutable(
                ns.get("attachRequired"), os_.get("attachRequired"), Path("spec", "attachedRequired")
            )
        )
        errs.extend(
            validate_immutable(
                ns.get("volumeLifecycleModes"),
                os_.get("volumeLifecycleModes"),
                Path("spec", "volumeLifecycleModes"),
            )
        )
        return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "storageclasses"): StorageClassStrategy(),
    (GROUP, "csidrivers"): CSIDriverStrategy(),
}
