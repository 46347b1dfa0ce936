"""``ValidateCustomResourceDefinition`` and ``…Update`` of kube's apiextensions validation.

Covered: the name (``<plural>.<group>``), group, names (DNS-1035 plural/singular/short names,
kind and listKind), scope, versions (DNS-1035 names, unique, exactly one ``storage``), the
per-version schema (required, structural, CEL rules compile), subresources (``scale`` paths),
``additionalPrinterColumns``, conversion, and on update the immutable scope and the
``status.storedVersions`` that must stay listed in ``spec.versions``. Webhook conversion needs a
``clientConfig`` (url or service, validated as admission webhooks' are) and ``conversionReviewVersions``.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver import field as fe
from apiserver.api.types import Obj
from apiserver.apiextensions.structural import validate_structural
from apiserver.field import ErrorList, Path, new_path
from apiserver.validation.names import is_dns1035_label, is_dns1123_subdomain

SCOPES = ["Cluster", "Namespaced"]
COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
_JSONPATH_SIMPLE = re.compile(r"^(\.[A-Za-z0-9_\-/]+|\[[^\]]+\])+$")


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def validate_crd(crd: Obj, cel_compile: Any = None) -> ErrorList:
    """Every error of a CRD being created (``cel_compile(rule) -> str | None`` checks CEL rules)."""
    errs: ErrorList = []
    spec = _d(crd.get("spec"))
    sp = new_path("spec")
    group = spec.get("group") or ""
    names = _d(spec.get("names"))
    plural = names.get("plural") or ""
    name = _d(crd.get("metadata")).get("name") or ""
    if name != f"{plural}.{group}":
        errs.append(
            fe.invalid(new_path("metadata", "name"), name, 'must be spec.names.plural+"."+spec.group')
        )
    errs.extend(_group(group, sp.child("group")))
    errs.extend(validate_names(names, sp.child("names")))
    scope = spec.get("scope")
    if not scope:
        errs.append(fe.required(sp.child("scope"), ""))
    elif scope not in SCOPES:
        errs.append(fe.not_supported(sp.child("scope"), scope, SCOPES))
    errs.extend(_versions(spec, sp, cel_compile))
    errs.extend(_conversion(_d(spec.get("conversion")), sp.child("conversion")))
    if spec.get("preserveUnknownFields"):
        errs.append(
            fe.invalid(
                sp.child("preserveUnknownFields"),
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            )
        )
    errs.extend(_stored_versions(crd))
    return errs


def validate_crd_update(new: Obj, old: Obj, cel_compile: Any = None) -> ErrorList:
    errs = validate_crd(new, cel_compile)
    ns, os_ = _d(new.get("spec")), _d(old.get("spec"))
    if ns.get("scope") != os_.get("scope") and _established(old):
        errs.append(fe.invalid(new_path("spec", "scope"), ns.get("scope"), "field is immutable"))
    if ns.get("group") != os_.get("group"):
        errs.append(fe.invalid(new_path("spec", "group"), ns.get("group"), "field is immutable"))
    if _d(ns.get("names")).get("plural") != _d(os_.get("names")).get("plural"):
        errs.append(
            fe.invalid(
                new_path("spec", "names", "plural"), _d(ns.get("names")).get("plural"), "field is immutable"
            )
        )
    return errs


def validate_crd_status(crd: Obj) -> ErrorList:
    errs: ErrorList = []
    status = _d(crd.get("status"))
    accepted = status.get("acceptedNames")
    if isinstance(accepted, dict) and accepted:
        errs.extend(validate_names(accepted, new_path("status", "acceptedNames"), require=False))
    errs.extend(_stored_versions(crd, complete=True))
    return errs


def _established(crd: Obj) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in _l(_d(crd.get("status")).get("conditions"))
        if isinstance(c, dict)
    )


def _group(group: str, path: Path) -> ErrorList:
    if not group:
        return [fe.required(path, "")]
    errs = [fe.invalid(path, group, m) for m in is_dns1123_subdomain(group)]
    if "." not in group:
        errs.append(fe.invalid(path, group, "should be a domain with at least one dot"))
    return errs


def validate_names(names: Obj, path: Path, require: bool = True) -> ErrorList:
    """Names' formats; ``require``: plural, kind and listKind must be set (spec, not status)."""
    errs: ErrorList = []
    plural, singular = names.get("plural") or "", names.get("singular") or ""
    kind, list_kind = names.get("kind") or "", names.get("listKind") or ""
    for key, value, required in (("plural", plural, True), ("singular", singular, False)):
        if not value:
            if required and require:
                errs.append(fe.required(path.child(key), ""))
            continue
        errs.extend(fe.invalid(path.child(key), value, m) for m in is_dns1035_label(value))
    for i, short in enumerate(_l(names.get("shortNames"))):
        errs.extend(
            fe.invalid(path.child("shortNames").index(i), short, m) for m in is_dns1035_label(str(short))
        )
    if not kind:
        if require:
            errs.append(fe.required(path.child("kind"), ""))
    else:
        errs.extend(
            fe.invalid(path.child("kind"), kind, "may have mixed case, but should otherwise match: " + m)
            for m in is_dns1035_label(kind.lower())
        )
    if not list_kind:
        if require:
            errs.append(fe.required(path.child("listKind"), ""))
    else:
        errs.extend(
            fe.invalid(
                path.child("listKind"), list_kind, "may have mixed case, but should otherwise match: " + m
            )
            for m in is_dns1035_label(list_kind.lower())
        )
    if kind and kind == list_kind:
        errs.append(fe.invalid(path.child("listKind"), list_kind, "kind and listKind may not be the same"))
    for i, cat in enumerate(_l(names.get("categories"))):
        errs.extend(fe.invalid(path.child("categories").index(i), cat, m) for m in is_dns1035_label(str(cat)))
    return errs


def _versions(spec: Obj, sp: Path, cel_compile: Any) -> ErrorList:
    errs: ErrorList = []
    versions = _l(spec.get("versions"))
    vp = sp.child("versions")
    if not versions:
        errs.append(fe.required(vp, "must have exactly one version marked as storage version"))
        return errs
    seen: set[str] = set()
    storage = 0
    for i, v in enumerate(versions):
        p = vp.index(i)
        if not isinstance(v, dict):
            errs.append(fe.invalid(p, v, "must be an object"))
            continue
        name = v.get("name") or ""
        if not name:
            errs.append(fe.required(p.child("name"), ""))
        else:
            errs.extend(fe.invalid(p.child("name"), name, m) for m in is_dns1035_label(name))
            if name in seen:
                errs.append(fe.invalid(vp, versions, "must contain unique version names"))
            seen.add(name)
        if v.get("storage"):
            storage += 1
        sch = _d(v.get("schema")).get("openAPIV3Schema")
        schema_path = p.child("schema", "openAPIV3Schema")
        if sch is None:
            errs.append(fe.required(schema_path, "schemas are required"))
        else:
            structural = validate_structural(sch, schema_path)
            errs.extend(structural)
            if cel_compile is not None and isinstance(sch, dict) and not structural:
                errs.extend(cel_compile(sch, schema_path))
        errs.extend(
            _subresources(
                _d(v.get("subresources")), p.child("subresources"), sch if isinstance(sch, dict) else {}
            )
        )
        for j, col in enumerate(_l(v.get("additionalPrinterColumns"))):
            errs.extend(_column(_d(col), p.child("additionalPrinterColumns").index(j)))
        errs.extend(
            _selectable_fields(
                _l(v.get("selectableFields")),
                p.child("selectableFields"),
                sch if isinstance(sch, dict) else {},
            )
        )
    if storage != 1:
        errs.append(fe.invalid(vp, versions, "must have exactly one version marked as storage version"))
    if not any(_d(v).get("served") for v in versions):
        errs.append(fe.invalid(vp, versions, "must have at least one served version"))
    return errs


def _json_path(value: str, path: Path, prefix: str | None) -> ErrorList:
    if not value:
        return [fe.required(path, "")]
    if not _JSONPATH_SIMPLE.match(value):
        return [fe.invalid(path, value, "must be a simple json path starting with .")]
    if prefix is not None and not value.startswith(prefix + ".") and not value.startswith(prefix + "["):
        return [fe.invalid(path, value, f"should be a json path under {prefix}")]
    return []


def _subresources(subs: Obj, path: Path, sch: Obj) -> ErrorList:
    errs: ErrorList = []
    status = subs.get("status")
    if status is not None and not isinstance(status, dict):
        errs.append(fe.invalid(path.child("status"), status, "must be an object"))
    scale = subs.get("scale")
    if scale is None:
        return errs
    sp = path.child("scale")
    scale = _d(scale)
    errs.extend(_json_path(scale.get("specReplicasPath") or "", sp.child("specReplicasPath"), ".spec"))
    errs.extend(_json_path(scale.get("statusReplicasPath") or "", sp.child("statusReplicasPath"), ".status"))
    selector = scale.get("labelSelectorPath")
    if selector:
        lp = sp.child("labelSelectorPath")
        errs.extend(_json_path(selector, lp, None))
        if not (selector.startswith(".spec") or selector.startswith(".status")):
            errs.append(fe.invalid(lp, selector, "should be a json path under either .spec or .status"))
    return errs


def _column(col: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    if not col.get("name"):
        errs.append(fe.required(path.child("name"), ""))
    typ = col.get("type")
    if not typ:
        errs.append(fe.required(path.child("type"), f"must be one of {', '.join(COLUMN_TYPES)}"))
    elif typ not in COLUMN_TYPES:
        errs.append(fe.not_supported(path.child("type"), typ, COLUMN_TYPES))
    priority = col.get("priority", 0)
    if not isinstance(priority, int) or priority < 0:
        errs.append(fe.invalid(path.child("priority"), priority, "must be greater than or equal to 0"))
    errs.extend(_json_path(col.get("jsonPath") or "", path.child("jsonPath"), None))
    return errs


def _schema_at(sch: Obj, json_path: str) -> Obj | None:
    node: Any = sch
    for part in json_path.strip(".").split("."):
        node = _d(_d(node).get("properties")).get(part)
        if node is None:
            return None
    return _d(node)


def _selectable_fields(fields: list[Any], path: Path, sch: Obj) -> ErrorList:
    errs: ErrorList = []
    if len(fields) > 8:
        errs.append(fe.too_many(path, len(fields), 8))
    seen: set[str] = set()
    for i, f in enumerate(fields):
        fp = path.index(i).child("jsonPath")
        jp = _d(f).get("jsonPath") or ""
        bad = _json_path(jp, fp, None)
        if bad:
            errs.extend(bad)
            continue
        if jp in seen:
            errs.append(fe.duplicate(fp, jp))
        seen.add(jp)
        node = _schema_at(sch, jp)
        if node is None:
            errs.append(fe.invalid(fp, jp, "is an invalid path: does not refer to a valid field"))
        elif node.get("type") not in ("string", "integer", "boolean"):
            errs.append(
                fe.invalid(
                    fp,
                    jp,
                    "must point to a field of type string, boolean or integer. Enum string fields and strings "
                    "with formats are allowed.",
                )
            )
    return errs


def _conversion(conv: Obj, path: Path) -> ErrorList:
    strategy = conv.get("strategy") or "None"
    if strategy == "None":
        if conv.get("webhook") is not None:
            return [
                fe.forbidden(path.child("webhook"), "should not be set when strategy is not set to Webhook")
            ]
        return []
    if strategy == "Webhook":
        return _conversion_webhook(conv.get("webhook"), path.child("webhook"))
    return [fe.not_supported(path.child("strategy"), strategy, ["None", "Webhook"])]


def _conversion_webhook(hook: Any, path: Path) -> ErrorList:
    """``spec.conversion.webhook`` of a Webhook strategy: a client config and review versions."""
    from apiserver.registry.strategies.admissionregistration_validation import (
        validate_webhook_service,
        validate_webhook_url,
    )

    if not isinstance(hook, dict):
        return [fe.required(path, "required when strategy is set to Webhook")]
    errs: ErrorList = []
    cc = hook.get("clientConfig")
    if not isinstance(cc, dict):
        errs.append(fe.required(path.child("clientConfig"), "required when strategy is set to Webhook"))
    else:
        url, svc = cc.get("url"), cc.get("service")
        if (url is None) == (svc is None):
            errs.append(fe.required(path.child("clientConfig"), "exactly one of url or service is required"))
        elif url is not None:
            errs.extend(validate_webhook_url(path.child("clientConfig", "url"), str(url)))
        else:
            errs.extend(validate_webhook_service(path.child("clientConfig", "service"), _d(svc)))
    versions = _l(hook.get("conversionReviewVersions"))
    vp = path.child("conversionReviewVersions")
    if not versions:
        errs.append(fe.required(vp, "must specify one of v1, v1beta1"))
    elif not any(v in ("v1", "v1beta1") for v in versions):
        errs.append(fe.invalid(vp, versions, "must include at least one of v1, v1beta1"))
    return errs


def _stored_versions(crd: Obj, complete: bool = False) -> ErrorList:
    """``status.storedVersions`` name only versions of the spec; ``complete`` (a status write, as
    kube's ``ValidateUpdateCustomResourceDefinitionStatus``): it also keeps at least one entry and
    the storage version, so no status write leaves the CRD without the versions its objects are
    stored in (``{"status": null}`` is a 422, not a CRD its controller cannot read)."""
    errs: ErrorList = []
    raw = _d(crd.get("status")).get("storedVersions")
    stored = _l(raw)
    versions = [_d(v) for v in _l(_d(crd.get("spec")).get("versions"))]
    names = {v.get("name") for v in versions}
    path = new_path("status", "storedVersions")
    if complete:
        if not stored:
            return [
                fe.invalid(path, raw if raw is not None else None, "must have at least one stored version")
            ]
        for v in versions:
            if v.get("storage") is True and v.get("name") not in stored:
                errs.append(fe.invalid(path, stored, f"must have the storage version {v.get('name')}"))
    for i, v in enumerate(stored):
        if v not in names:
            errs.append(
                fe.invalid(new_path("status", "storedVersions").index(i), v, "must appear in spec.versions")
            )
    return errs
