"""The Builder: compile a WorkloadItem tree into a Workload, materialise PodGroups, validate.

Usage shared by admission and the controller (KEP-6277 "Field Mapping")::

    b = new_builder(item, opts)
    errs = b.validate(ValidationInput())          # admission: semantic layer
    workload = b.build_workload()                 # controller: create this first
    pod_group = b.new_pod_group(pg_name, item.name)

A builder made by :func:`new_builder_from_existing_workload` only materialises PodGroups from a
persisted Workload (a parent's, or one found by discovery): it refuses ``build_workload`` and
``validate`` so nobody recompiles over an object they do not own.
"""

from __future__ import annotations

import copy
import json

import orjson

from apiserver import field
from apiserver.api.types import Obj
from apiserver.field import ErrorList, Path
from apiserver.workloadbuilder import validation as dv
from apiserver.workloadbuilder._compile import check_item_tree, compile_workload_spec
from apiserver.workloadbuilder._resolve import resolve_scheduling_config
from apiserver.workloadbuilder.types import (
    BuildError,
    BuildOptions,
    DisruptionModeOption,
    SchedulingConfig,
    SchedulingPolicyOption,
    ValidationInput,
    WorkloadItem,
)

SCHEDULING_GROUP = "scheduling.k8s.io"
WORKLOAD_API_VERSION = "scheduling.k8s.io/v1beta1"
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"
COMPOSITE_POD_GROUP_API_VERSION = "scheduling.k8s.io/v1alpha3"

BASIC_WITH_ALL_MESSAGE = "the disruptionMode `all` is not supported with the Basic scheduling policy"

_POD_GROUP_COPIED_FIELDS = (
    "schedulingPolicy",
    "schedulingConstraints",
    "disruptionMode",
    "resourceClaims",
    "priorityClassName",
    "priority",
)
_COMPOSITE_COPIED_FIELDS = (
    "schedulingPolicy",
    "schedulingConstraints",
    "disruptionMode",
    "priorityClassName",
    "priority",
)


def _quote(s: str) -> str:
    """Go's ``%q`` for the ASCII names that appear in these messages."""
    return json.dumps(s)


def parse_group(api_version: str) -> str:
    """``schema.ParseGroupVersion(...).Group``; raises ValueError with apimachinery's message."""
    if api_version in ("", "/"):
        return ""
    slashes = api_version.count("/")
    if slashes == 0:
        return ""
    if slashes == 1:
        return api_version.split("/", 1)[0]
    raise ValueError(f"unexpected GroupVersion string: {api_version}")


def _extend(path: Path, elements: tuple[str, ...]) -> Path:
    return path.child(*elements) if elements else path


def _templates_in_tree(spec: Obj) -> tuple[list[Obj], list[Obj]]:
    """All (leaf, composite) templates of a Workload spec, depth first, in document order."""
    leaves: list[Obj] = []
    composites: list[Obj] = []

    def walk(node: Obj) -> None:
        leaves.extend(t for t in node.get("podGroupTemplates") or [] if isinstance(t, dict))
        for c in node.get("compositePodGroupTemplates") or []:
            if isinstance(c, dict):
                composites.append(c)
                walk(c)

    walk(spec)
    return leaves, composites


class Builder:
    """Build and validate from one WorkloadItem tree; materialise PodGroups from its Workload."""

    def __init__(self, root: WorkloadItem | None, opts: BuildOptions, existing_workload: Obj | None = None):
        self._root = root
        self._opts = opts
        self._existing = existing_workload
        self._workload: Obj | None = None

    # -- compile ---------------------------------------------------------------------------

    def build_workload(self) -> Obj:
        """The v1beta1 Workload for the tree; cached after the first success (a copy is returned)."""
        if self._existing is not None:
            raise BuildError(
                "BuildWorkload is not available on a Builder created from an existing Workload: "
                "it materializes from the supplied Workload"
            )
        if self._workload is None:
            self._workload = self._build()
        return _json_copy(self._workload)

    def _build(self) -> Obj:
        return workload_for_spec(compile_workload_spec(self._root), self._opts)

    def _metadata(self, name: str, namespace: str) -> Obj:
        return _metadata(name, namespace, self._opts.owner)

    # -- materialise -----------------------------------------------------------------------

    def _resolve_workload(self) -> Obj:
        if self._existing is not None:
            return self._existing
        if self._workload is None:
            raise BuildError(
                "no Workload available: call BuildWorkload or use NewBuilderFromExistingWorkload first"
            )
        return self._workload

    def new_pod_group(self, pod_group_name: str, template_name: str) -> Obj:
        """A v1beta1 PodGroup instantiated from the named PodGroupTemplate.

        Only ``opts.owner`` becomes an ownerReference: the caller adds the Workload ownerRef and
        any annotations; the protection finalizer comes from admission.
        """
        workload = self._resolve_workload()
        wl_meta = workload.get("metadata") or {}
        leaves, _ = _templates_in_tree(workload.get("spec") or {})
        tmpl = next((t for t in leaves if t.get("name") == template_name), None)
        if tmpl is None:
            have = " ".join(str(t.get("name", "")) for t in leaves)
            raise BuildError(
                f"podGroupTemplate {_quote(template_name)} not found in workload "
                f"{_quote(str(wl_meta.get('name', '')))} (have [{have}])"
            )
        spec: Obj = {"workloadRef": {"workloadName": wl_meta.get("name", ""), "templateName": template_name}}
        spec.update({k: _json_copy(tmpl[k]) for k in _POD_GROUP_COPIED_FIELDS if k in tmpl})
        return {
            "apiVersion": POD_GROUP_API_VERSION,
            "kind": "PodGroup",
            "metadata": self._metadata(pod_group_name, str(wl_meta.get("namespace", ""))),
            "spec": spec,
        }

    def new_composite_pod_group(self, name: str, template_name: str) -> Obj:
        """A v1alpha3 CompositePodGroup from the named template; parent link and children are the caller's."""
        workload = self._resolve_workload()
        wl_meta = workload.get("metadata") or {}
        _, composites = _templates_in_tree(workload.get("spec") or {})
        tmpl = next((t for t in composites if t.get("name") == template_name), None)
        if tmpl is None:
            have = " ".join(str(t.get("name", "")) for t in composites)
            raise BuildError(
                f"compositePodGroupTemplate {_quote(template_name)} not found in workload "
                f"{_quote(str(wl_meta.get('name', '')))} (have [{have}])"
            )
        spec: Obj = {"workloadRef": {"workloadName": wl_meta.get("name", ""), "templateName": template_name}}
        spec.update({k: copy.deepcopy(tmpl[k]) for k in _COMPOSITE_COPIED_FIELDS if k in tmpl})
        return {
            "apiVersion": COMPOSITE_POD_GROUP_API_VERSION,
            "kind": "CompositePodGroup",
            "metadata": self._metadata(name, str(wl_meta.get("namespace", ""))),
            "spec": spec,
        }

    # -- validate --------------------------------------------------------------------------

    def validate(self, inp: ValidationInput | None = None) -> ErrorList:
        """Invocation checks, then per item: DV on the input blocks (unless disabled) and the
        controller-policy checks on the *resolved* config. ``old_root`` set ⇒ an update."""
        inp = inp or ValidationInput()
        if self._existing is not None:
            return [field.internal("", "cannot validate a builder constructed from an existing workload")]
        root = self._root
        if root is None:
            return [field.invalid("", None, "invalid builder: missing root WorkloadItem")]
        if inp.old_root is not None and inp.old_root.name != root.name:
            return [
                field.internal(
                    root.path,
                    f"old root name {_quote(inp.old_root.name)} does not match new root name {_quote(root.name)}",
                )
            ]
        try:
            check_item_tree(root)
        except BuildError as e:
            return [field.internal(root.path, str(e))]
        return self._validate_item(root, inp.old_root)

    def _validate_item(self, item: WorkloadItem, old: WorkloadItem | None) -> ErrorList:
        errs: ErrorList = []
        if not self._opts.disable_declarative_validation:
            errs.extend(_declarative(item, old))
        resolved = resolve_scheduling_config(item)
        errs.extend(self._allowed_policies(item, resolved))
        errs.extend(self._allowed_disruption_modes(item, resolved))
        errs.extend(_disruption_mode_compatible(item, resolved))
        old_children = {c.name: c for c in old.children} if old is not None else {}
        for child in item.children:
            errs.extend(self._validate_item(child, old_children.get(child.name)))
        return errs

    def _allowed_policies(self, item: WorkloadItem, cfg: SchedulingConfig) -> ErrorList:
        if cfg.policy is None:
            return []
        path = _extend(item.path, item.input.policy.path_elements)
        allowed = self._opts.allowed_policies
        errs: ErrorList = []
        if cfg.policy.basic is not None and SchedulingPolicyOption.BASIC not in allowed:
            errs.append(field.forbidden(path, "basic scheduling policy is not supported by this controller"))
        if cfg.policy.gang is not None and SchedulingPolicyOption.GANG not in allowed:
            errs.append(field.forbidden(path, "gang scheduling policy is not supported by this controller"))
        return errs

    def _allowed_disruption_modes(self, item: WorkloadItem, cfg: SchedulingConfig) -> ErrorList:
        if cfg.disruption_mode is None:
            return []
        path = _extend(item.path, item.input.disruption_mode.path_elements)
        allowed = self._opts.allowed_disruption_modes
        errs: ErrorList = []
        if cfg.disruption_mode.single and DisruptionModeOption.SINGLE not in allowed:
            errs.append(
                field.forbidden(path, "the disruptionMode `single` is not supported by this controller")
            )
        if cfg.disruption_mode.all and DisruptionModeOption.ALL not in allowed:
            errs.append(field.forbidden(path, "the disruptionMode `all` is not supported by this controller"))
        return errs


def _disruption_mode_compatible(item: WorkloadItem, cfg: SchedulingConfig) -> ErrorList:
    """A Basic group is scheduled pod by pod, so an all-or-nothing disruption unit is meaningless."""
    if (
        cfg.policy is None
        or cfg.policy.basic is None
        or cfg.disruption_mode is None
        or not cfg.disruption_mode.all
    ):
        return []
    return [
        field.invalid(
            _extend(item.path, item.input.disruption_mode.path_elements), "", BASIC_WITH_ALL_MESSAGE
        )
    ]


def _declarative(item: WorkloadItem, old: WorkloadItem | None) -> ErrorList:
    """The generated building-block validators, at ``item.path`` + each block's path elements."""
    inp, old_inp = item.input, (old.input if old is not None else None)
    errs: ErrorList = []
    if item.is_composite:
        checks = (
            (dv.validate_composite_scheduling_policy, inp.policy, old_inp.policy if old_inp else None),
            (
                dv.validate_composite_scheduling_constraints,
                inp.constraints,
                old_inp.constraints if old_inp else None,
            ),
            (
                dv.validate_composite_disruption_mode,
                inp.disruption_mode,
                old_inp.disruption_mode if old_inp else None,
            ),
        )
        for check, block, old_block in checks:
            if block.composite_pod_group_data is not None:
                old_data = old_block.composite_pod_group_data if old_block else None
                errs.extend(
                    check(block.composite_pod_group_data, _extend(item.path, block.path_elements), old_data)
                )
        return errs
    checks = (
        (dv.validate_scheduling_policy, inp.policy, old_inp.policy if old_inp else None),
        (dv.validate_scheduling_constraints, inp.constraints, old_inp.constraints if old_inp else None),
        (dv.validate_disruption_mode, inp.disruption_mode, old_inp.disruption_mode if old_inp else None),
    )
    for check, block, old_block in checks:
        if block.pod_group_data is not None:
            old_data = old_block.pod_group_data if old_block else None
            errs.extend(check(block.pod_group_data, _extend(item.path, block.path_elements), old_data))
    # Claims are correlated by name and validated one by one, as upstream does; the list-level
    # rules (maxItems, unique names) belong to the embedding field.
    claims = inp.resource_claims.pod_group_data or []
    old_by_name = {
        c.get("name"): c
        for c in ((old_inp.resource_claims.pod_group_data or []) if old_inp else [])
        if isinstance(c, dict)
    }
    claims_path = _extend(item.path, inp.resource_claims.path_elements)
    for i, claim in enumerate(claims):
        old_claim = old_by_name.get(claim.get("name")) if isinstance(claim, dict) else None
        errs.extend(dv.validate_resource_claim(claim, claims_path.index(i), old_claim))
    return errs


def workload_for_spec(spec: Obj, opts: BuildOptions) -> Obj:
    """The v1beta1 Workload ``opts`` describes around an already compiled ``spec``.

    What :meth:`Builder.build_workload` wraps around :func:`compile_workload_spec`'s result (the
    controllerRef from ``opts.owner``, the metadata); ``spec`` becomes part of the result, not
    copied. A caller that compiles one spec for many owners (a controller keeping the compile
    of each scheduling shape) builds each owner's Workload with this.
    """
    owner = opts.owner
    if owner is None:
        raise BuildError("a Workload must be owned by its controller for garbage collection")
    api_version = str(owner.get("apiVersion") or "")
    try:
        group = parse_group(api_version)
    except ValueError as e:
        raise BuildError(f"invalid owner apiVersion {_quote(api_version)}: {e}") from None
    controller_ref: Obj = {}
    if group:
        controller_ref["apiGroup"] = group
    controller_ref["kind"] = owner.get("kind", "")
    controller_ref["name"] = owner.get("name", "")
    return {
        "apiVersion": WORKLOAD_API_VERSION,
        "kind": "Workload",
        "metadata": _metadata(opts.name, opts.namespace, owner),
        "spec": {"controllerRef": controller_ref, **spec},
    }


def _metadata(name: str, namespace: str, owner: Obj | None) -> Obj:
    meta: Obj = {}
    if name:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    if owner is not None:
        meta["ownerReferences"] = [_json_copy(owner)]
    return meta


def new_builder(root: WorkloadItem | None, opts: BuildOptions) -> Builder:
    return Builder(root, opts)


def new_builder_from_existing_workload(workload: Obj, opts: BuildOptions) -> Builder:
    """Materialise-only builder over a persisted Workload (see module docstring)."""
    return Builder(None, opts, existing_workload=_json_copy(workload))


def _json_copy(obj: Obj) -> Obj:
    """An independent copy of a Workload (JSON values only): a fraction of ``copy.deepcopy``'s cost,
    paid once per StatefulSet or Job the controllers give a Workload and a PodGroup."""
    copied: Obj = orjson.loads(orjson.dumps(obj))
    return copied
