"""``pods/ephemeralcontainers``: kube's ``podEphemeralContainersStrategy`` and its validation.

``kubectl debug POD --image=…`` patches this subresource. The write may change nothing of the pod
but ``spec.ephemeralContainers`` (kube's ``dropNonEphemeralContainerUpdates`` starts from the old
pod), containers may only be added (never removed or changed), each must satisfy the common
container rules, carry a name unique across every container of the pod, name an existing
non-ephemeral ``targetContainerName``, and leave unset what an ephemeral container may not have
(ports, probes, lifecycle, resources…: ``validateFieldAllowList``). Static (mirror) pods refuse
ephemeral containers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from apiserver import field
from apiserver.api.types import Obj, as_dict, as_list
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.pod_update_validation import spec_diff
from apiserver.registry.strategies.pod_validation import (
    _validate_container_common,
    _validate_volumes,
    validate_pod_resource_claims,
)
from apiserver.rest.strategy import Strategy, StrategyContext

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"

#: ``allowedEphemeralContainerFields`` entries that are false: set, they are Forbidden (kube's order)
FORBIDDEN_FIELDS = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
_NOT_FOR_EPHEMERAL = "cannot be set for an Ephemeral Container"


def _is_set(value: object) -> bool:
    """Go's non-zero test for the decoded JSON value of an optional field."""
    return value not in (None, "", [], {}, 0, False)


def validate_ephemeral_containers(spec: Obj, path: Path) -> ErrorList:
    """``validateEphemeralContainers``: the common container rules, then what is ephemeral's own.

    The pod's volumes and claims are only looked up here (the pod validation reports their errors).
    """
    volumes, _ = _validate_volumes(spec, Path("spec", "volumes"))
    claims, _ = validate_pod_resource_claims(spec.get("resourceClaims"), Path("spec", "resourceClaims"))
    other: set[str] = set()
    for key in ("containers", "initContainers"):
        for c in as_list(spec.get(key)):
            other.add(str(as_dict(c).get("name") or ""))
    seen = set(other)
    errs: ErrorList = []
    for i, raw in enumerate(as_list(spec.get("ephemeralContainers"))):
        ec = as_dict(raw)
        p = path.index(i)
        errs.extend(_validate_container_common(ec, volumes, claims, p))
        name = str(ec.get("name") or "")
        if name in seen:
            errs.append(field.duplicate(p.child("name"), name))
        else:
            seen.add(name)
        target = str(ec.get("targetContainerName") or "")
        if target and target not in other:
            errs.append(field.not_found(p.child("targetContainerName"), target))
        for key in FORBIDDEN_FIELDS:
            if _is_set(ec.get(key)):
                errs.append(field.forbidden(p.child(key), _NOT_FOR_EPHEMERAL))
        for j, vm in enumerate(as_list(ec.get("volumeMounts"))):
            for key in ("subPath", "subPathExpr"):
                if as_dict(vm).get(key):
                    errs.append(
                        field.forbidden(p.child("volumeMounts").index(j).child(key), _NOT_FOR_EPHEMERAL)
                    )
    return errs


def validate_ephemeral_update(new: Obj, old: Obj) -> ErrorList:
    """Part 2 of ``ValidatePodEphemeralContainersUpdate``: existing containers stay as they are."""
    path = Path("spec", "ephemeralContainers")
    by_name = {
        str(as_dict(c).get("name") or ""): as_dict(c)
        for c in as_list(as_dict(new.get("spec")).get("ephemeralContainers"))
    }
    errs: ErrorList = []
    for raw in as_list(as_dict(old.get("spec")).get("ephemeralContainers")):
        was = as_dict(raw)
        name = str(was.get("name") or "")
        now = by_name.get(name)
        if now is None:
            errs.append(field.forbidden(path, f'existing ephemeral containers "{name}" may not be removed\n'))
        elif now != was:
            diff = spec_diff(was, now, "core.EphemeralContainer")
            errs.append(
                field.forbidden(path, f'existing ephemeral containers "{name}" may not be changed\n{diff}')
            )
    return errs


class PodEphemeralContainersStrategy(Strategy):
    """The update strategy of ``pods/ephemeralcontainers`` (get, patch, update).

    ``common_errors(pod, ctx)`` is the pod strategy's metadata-and-spec validation
    (``validatePodMetadataAndSpec``), passed in because that strategy owns it.
    """

    has_status = True

    def __init__(self, common_errors: Callable[[Obj, StrategyContext], ErrorList]) -> None:
        self._common_errors = common_errors

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        """``dropNonEphemeralContainerUpdates``: the old pod with the new ephemeral containers."""
        ephemeral = as_dict(new.get("spec")).get("ephemeralContainers")
        md = new.get("metadata") or {}
        keep = {k: md[k] for k in ("name", "namespace", "resourceVersion", "uid") if k in md}
        new.clear()
        new.update(copy.deepcopy(old))
        new["metadata"].update(keep)
        spec = new.setdefault("spec", {})
        if ephemeral is None:
            spec.pop("ephemeralContainers", None)
        else:
            spec["ephemeralContainers"] = ephemeral

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        if MIRROR_POD_ANNOTATION in as_dict(as_dict(old.get("metadata")).get("annotations")):
            return [field.forbidden(Path(""), "static pods do not support ephemeral containers")]
        errs = self._common_errors(new, ctx)
        errs.extend(
            validate_ephemeral_containers(as_dict(new.get("spec")), Path("spec", "ephemeralContainers"))
        )
        errs.extend(validate_ephemeral_update(new, old))
        return errs


__all__ = [
    "FORBIDDEN_FIELDS",
    "PodEphemeralContainersStrategy",
    "validate_ephemeral_containers",
    "validate_ephemeral_update",
]
