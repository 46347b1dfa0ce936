"""Namespaces (``pkg/registry/core/namespace``): the name label, finalizers and phase."""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import (
    UntrackedGenerationStrategy,
    _keep_old_status,
    _spec,
    _str,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def _validate_namespace_finalizers(finalizers: Any) -> ErrorList:
    p = Path("spec", "finalizers")
    errs: ErrorList = []
    for f in as_list(finalizers):
        f = _str(f)
        errs.extend(fmt_errors(f, p, names.is_qualified_name))
        if "/" not in f and f != "kubernetes":
            errs.append(
                field.invalid(p, f, "name is neither a standard finalizer name nor is it fully qualified")
            )
    return errs


class NamespaceStrategy(UntrackedGenerationStrategy):
    """Namespaces: Active on create with the ``kubernetes`` finalizer; name label enforced."""

    has_status = True

    def holds_deletion(self, obj: Obj) -> bool:
        """kube's namespace REST ``Delete``: ``spec.finalizers`` keep it until the namespace
        controller has emptied it and released them through ``namespaces/finalize``."""
        return bool(as_list(_spec(obj).get("finalizers")))

    def prepare_for_delete(self, obj: Obj) -> None:
        obj.setdefault("status", {})["phase"] = "Terminating"

    def default(self, obj: Obj) -> None:
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Active"
        _ensure_name_label(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"phase": "Active"}
        spec = _spec(obj)
        fins = [f for f in as_list(spec.get("finalizers"))]
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        spec["finalizers"] = fins
        _ensure_name_label(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return _validate_namespace_finalizers(as_dict(obj.get("spec")).get("finalizers"))

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        old_fins = as_dict(old.get("spec")).get("finalizers")
        spec = _spec(new)
        if old_fins is None:
            spec.pop("finalizers", None)
        else:
            spec["finalizers"] = copy.deepcopy(old_fins)
        if not spec and "spec" not in old:
            new.pop("spec", None)
        _ensure_name_label(new)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return _validate_namespace_finalizers(as_dict(new.get("spec")).get("finalizers"))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        """``ValidateNamespaceStatusUpdate``: Active while alive, Terminating once deleted."""
        phase = as_dict(new.get("status")).get("phase") or ""
        p = Path("status", "Phase")
        if not as_dict(new.get("metadata")).get("deletionTimestamp"):
            if phase != "Active":
                return [field.invalid(p, phase, "may only be 'Active' if `deletionTimestamp` is empty")]
        elif phase != "Terminating":
            return [field.invalid(p, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
        return []


def _ensure_name_label(obj: Obj) -> None:
    md = obj.get("metadata")
    if isinstance(md, dict) and md.get("name"):
        labels = md.get("labels")
        if not isinstance(labels, dict):
            labels = {}
            md["labels"] = labels
        labels[NAMESPACE_NAME_LABEL] = md["name"]
