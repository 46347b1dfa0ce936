"""REST strategies: the CRD's own (kube's ``pkg/registry/customresourcedefinition/strategy.go``) and
the one every custom resource version gets (``pkg/registry/customresource/strategy.go``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from apiserver import errors
from apiserver import field as fe
from apiserver.api.types import Obj
from apiserver.apiextensions import CLEANUP_FINALIZER, celrules
from apiserver.apiextensions.crd_validation import validate_crd, validate_crd_status, validate_crd_update
from apiserver.apiextensions.defaulting import apply_defaults
from apiserver.apiextensions.values import MISSING, validate_value
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Strategy, StrategyContext


def default_crd(crd: Obj) -> None:
    """``SetDefaults_CustomResourceDefinition`` (v1): singular, listKind, conversion strategy."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        kind = names.get("kind")
        if isinstance(kind, str) and kind:
            names.setdefault("singular", kind.lower())
            names.setdefault("listKind", kind + "List")
    conv = spec.setdefault("conversion", {})
    if isinstance(conv, dict):
        conv.setdefault("strategy", "None")
        hook = conv.get("webhook")
        if isinstance(hook, dict):
            svc = (hook.get("clientConfig") or {}).get("service")
            if isinstance(svc, dict):
                svc.setdefault("port", 443)
    for v in spec.get("versions") or ():
        if isinstance(v, dict):
            v.setdefault("served", False)
            v.setdefault("storage", False)


def record_storage_version(crd: Obj) -> None:
    """The storage version joins ``status.storedVersions`` (kube's CRD PrepareForCreate/Update)."""
    stored = crd.setdefault("status", {}).setdefault("storedVersions", [])
    for v in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(v, dict) and v.get("storage") and v.get("name") not in stored:
            stored.append(v.get("name"))


def set_condition(crd: Obj, ctype: str, status: str, reason: str, message: str, now: str) -> bool:
    """Set one CRD condition; ``lastTransitionTime`` moves only when ``status`` changes. True if changed."""
    st = crd.setdefault("status", {})
    conds = [c for c in st.get("conditions") or [] if isinstance(c, dict)]
    for c in conds:
        if c.get("type") == ctype:
            if (c.get("status"), c.get("reason"), c.get("message")) == (status, reason, message):
                return False
            if c.get("status") != status:
                c["lastTransitionTime"] = now or c.get("lastTransitionTime")
            c.update(status=status, reason=reason, message=message)
            st["conditions"] = conds
            return True
    conds.append(
        {
            "type": ctype,
            "status": status,
            "lastTransitionTime": now or None,
            "reason": reason,
            "message": message,
        }
    )
    st["conditions"] = conds
    return True


class CRDStrategy(Strategy):
    """CustomResourceDefinitions: a ``/status`` subresource; spec validated with CEL rules compiled."""

    has_status = True

    def default(self, obj: Obj) -> None:
        default_crd(obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}
        record_storage_version(obj)

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        super().prepare_for_update(ctx, new, old)
        new["status"] = copy.deepcopy(new.get("status") or {})
        record_storage_version(new)

    def holds_deletion(self, obj: Obj) -> bool:
        """A delete of a CRD not yet being deleted is held: its custom resources go first."""
        return not (obj.get("metadata") or {}).get("deletionTimestamp")

    def prepare_for_delete(self, obj: Obj) -> None:
        """kube's CRD ``Delete``: the cleanup finalizer and the Terminating condition come first."""
        md = obj["metadata"]
        fins = list(md.get("finalizers") or [])
        if CLEANUP_FINALIZER not in fins:
            md["finalizers"] = fins + [CLEANUP_FINALIZER]
        set_condition(
            obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            str(md.get("deletionTimestamp") or ""),
        )

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_crd(obj, celrules.compile_errors)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_crd_update(new, old, celrules.compile_errors)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_crd_status(new)


@dataclass
class ServingState:
    """What the API server's CRD controllers know about one CRD, shared by its versions' strategies."""

    crd_name: str
    terminating: bool = False
    #: where a conversion webhook behind a Service listens (``(namespace, name, port) -> host:port``)
    resolve_service: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class ScalePaths:
    """A CRD's ``subresources.scale``: where the Scale's fields live in the custom resource."""

    spec_replicas: str
    status_replicas: str
    label_selector: str = ""


def _get(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in path.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set(obj: Obj, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[parts[-1]] = value


class CustomResourceStrategy(Strategy):
    """One served version of a custom resource: schema defaults, validation, CEL rules, subresources."""

    def __init__(
        self,
        kind: str,
        schema: Obj,
        state: ServingState,
        has_status: bool = False,
        scale: ScalePaths | None = None,
    ) -> None:
        self.kind = kind
        self.schema = schema
        self.state = state
        self.has_status = has_status
        self.scale = scale
        self.has_rules = celrules.has_rules(schema)

    def default(self, obj: Obj) -> None:
        apply_defaults(self.schema, obj)

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        if self.state.terminating:
            raise errors.StatusError(
                405, "MethodNotAllowed", "create not allowed while custom resource definition is terminating"
            )
        super().prepare_for_create(ctx, obj)

    def _validate(self, obj: Obj, old: Obj | None) -> ErrorList:
        errs: ErrorList = []
        validate_value(self.schema, obj, Path(), errs, root=True, old=old if old is not None else MISSING)
        if self.scale is not None and not errs:
            errs.extend(self._validate_scale(obj))
        if self.has_rules:
            if any(e.type == fe.ErrorType.TYPE_INVALID for e in errs):
                # kube's hasBlockingErr: rules are not evaluated over values of the wrong type
                errs.append(
                    fe.invalid(
                        "<nil>",
                        None,
                        "some validation rules were not checked because the object was invalid; "
                        "correct the existing errors to complete validation",
                    )
                )
            else:
                errs.extend(celrules.validate_object(self.schema, obj, old))
        return errs

    def _validate_scale(self, obj: Obj) -> ErrorList:
        """kube checks the replicas fields the scale subresource reads are integers."""
        assert self.scale is not None
        errs: ErrorList = []
        for path in (self.scale.spec_replicas, self.scale.status_replicas):
            value = _get(obj, path)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                errs.append(fe.invalid(path.strip("."), value, "must be an integer"))
            elif value < 0:
                errs.append(fe.invalid(path.strip("."), value, "should be a non-negative integer"))
            elif value > 2**31 - 1:
                errs.append(fe.invalid(path.strip("."), value, "must be less than or equal to 2147483647"))
        return errs

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return self._validate(obj, None)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return self._validate(new, old)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return self._validate(new, old)

    def generation_relevant(self, obj: Obj) -> Any:
        skip = ("metadata", "status") if self.has_status else ("metadata",)
        return {k: v for k, v in obj.items() if k not in skip and k not in ("apiVersion", "kind")}

    def prepare_for_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        status = new.get("status")
        for k in list(new):
            if k not in ("metadata", "apiVersion", "kind"):
                del new[k]
        for k, v in old.items():
            if k not in ("metadata", "apiVersion", "kind", "status"):
                new[k] = copy.deepcopy(v)
        if status is not None:
            new["status"] = status

    def scale_of(self, obj: Obj) -> tuple[int, int, str] | None:
        if self.scale is None:
            return None
        spec = _get(obj, self.scale.spec_replicas)
        status = _get(obj, self.scale.status_replicas)
        selector = _get(obj, self.scale.label_selector) if self.scale.label_selector else ""
        return (
            spec if isinstance(spec, int) else 0,
            status if isinstance(status, int) else 0,
            selector if isinstance(selector, str) else "",
        )

    def set_scale_replicas(self, obj: Obj, replicas: int) -> bool:
        if self.scale is None:
            return False
        _set(obj, self.scale.spec_replicas, replicas)
        return True
