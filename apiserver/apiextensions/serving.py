"""The served resources of a CRD: one :class:`ResourceDef` per served version.

All versions share one storage (``(group, plural)``) and, with ``conversion: None``, differ only
in ``apiVersion``: :class:`NoneConverter` rewrites it to the storage version on the way in and to
the request's version on the way out, which is kube's ``nopConverter``. Each version carries its
own schema (validation, defaults, pruning, SSA, OpenAPI), Table printer, and ``status``/``scale``
subresources. Versions are ordered as kube orders them (``v1`` > ``v1beta2`` > ``v1beta1`` >
``v1alpha1`` > anything else alphabetically), so discovery prefers the same one.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.apiextensions.conversion import WebhookConverter
from apiserver.apiextensions.defaulting import apply_defaults
from apiserver.apiextensions.printers import printer_for_columns
from apiserver.apiextensions.pruning import prune
from apiserver.apiextensions.strategy import CustomResourceStrategy, ScalePaths, ServingState
from apiserver.rest.resources import ALL_VERBS, ResourceDef, Subresource
from apiserver.selectors import field_value_getter

OBJECT_META_REF = "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Sort key giving kube's ``CompareKubeAwareVersionStrings`` order (smallest first = preferred)."""
    m = _KUBE_VERSION.match(name)
    if not m:
        return (3, 0, 0, name)
    major = int(m.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor, name)


@dataclass(frozen=True, eq=False)
class NoneConverter:
    """``conversion.strategy: None``: stored objects are presented in any version by their apiVersion.

    On the way out the object is first decoded as kube's storage codec does: pruned and defaulted
    by the schema of the version it was stored in (``schemas``), so a field the schema no longer
    specifies disappears and a newly added default appears; then only ``apiVersion`` changes.
    """

    group: str
    version: str
    storage_version: str
    schemas: dict[str, Obj] = field(default_factory=dict)
    #: (uid, resourceVersion) of stored objects whose decoding changes nothing: most of them,
    #: since writes prune and default already; remembered so reads skip the walk
    _unchanged: dict[tuple[str, str], bool] = field(default_factory=dict)

    def to_view(self, stored: Obj) -> Obj:
        md = stored.get("metadata") or {}
        key = (str(md.get("uid", "")), str(md.get("resourceVersion", "")))
        if not self._unchanged.get(key):
            stored_version = str(stored.get("apiVersion") or "").rpartition("/")[2]
            schema = self.schemas.get(stored_version)
            if schema is not None:
                before = orjson.dumps(stored)
                prune(schema, stored, "", [], root=True)
                apply_defaults(schema, stored)
                if len(self._unchanged) > 100_000:
                    self._unchanged.clear()
                self._unchanged[key] = orjson.dumps(stored) == before
        stored["apiVersion"] = f"{self.group}/{self.version}"
        return stored

    def from_view(self, obj: Obj) -> Obj:
        obj["apiVersion"] = f"{self.group}/{self.storage_version}"
        return obj


def published_schema(group: str, version: str, kind: str, schema: Obj) -> Obj:
    """The version's schema as served: ``apiVersion``, ``kind`` and ``metadata`` (ObjectMeta) added.

    This is what kube's OpenAPI builder publishes for a CRD, and what server-side apply and the
    field validation walk (``metadata`` resolves to the built-in ObjectMeta definition).
    """
    out = copy.deepcopy(schema)
    props = out.setdefault("properties", {})
    props["apiVersion"] = {
        "description": "APIVersion defines the versioned schema of this representation of an object. Servers "
        "should convert recognized schemas to the latest internal value, and may reject unrecognized values. More "
        "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
        "type": "string",
    }
    props["kind"] = {
        "description": "Kind is a string value representing the REST resource this object represents. Servers "
        "may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More "
        "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
        "type": "string",
    }
    props["metadata"] = {
        "$ref": OBJECT_META_REF,
        "description": "Standard object's metadata. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    }
    out["type"] = "object"
    out["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return out


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def selectable_fields(version: Obj) -> dict[str, Any]:
    """``selectableFields``: extra field selectors (``spec.color``), as for built-in kinds."""
    out: dict[str, Any] = {}
    for f in version.get("selectableFields") or ():
        path = _d(f).get("jsonPath")
        if isinstance(path, str) and path.startswith("."):
            out[path[1:]] = field_value_getter(path.strip("."))
    return out


def converter_for(
    spec: Obj, group: str, kind: str, version: str, storage: str, schemas: dict[str, Obj], state: ServingState
) -> Any:
    """``conversion.strategy``: None (apiVersion rewritten) or Webhook (:mod:`.conversion`)."""
    conv = _d(spec.get("conversion"))
    if conv.get("strategy") == "Webhook":
        return WebhookConverter(group, kind, version, storage, _d(conv.get("webhook")), state.resolve_service)
    return NoneConverter(group, version, storage, schemas)


def resource_defs(crd: Obj, state: ServingState) -> list[ResourceDef]:
    """The defs to serve for ``crd`` (accepted names, served versions), preferred version first."""
    spec = _d(crd.get("spec"))
    names = _d(_d(crd.get("status")).get("acceptedNames")) or _d(spec.get("names"))
    group = spec.get("group") or ""
    plural = names.get("plural") or ""
    kind = names.get("kind") or ""
    namespaced = spec.get("scope") == "Namespaced"
    versions = [v for v in spec.get("versions") or () if isinstance(v, dict)]
    storage = next((v.get("name") for v in versions if v.get("storage")), "")
    md = _d(crd.get("metadata"))
    accepted = ",".join(f"{k}={names[k]}" for k in sorted(names))
    revision = f"{md.get('uid', '')}/{md.get('generation', '')}/{accepted}"
    schemas = {
        str(v.get("name")): published_schema(
            group, str(v.get("name")), kind, _d(_d(v.get("schema")).get("openAPIV3Schema"))
        )
        for v in versions
    }
    out: list[ResourceDef] = []
    for v in sorted(versions, key=lambda v: version_priority(str(v.get("name") or ""))):
        if not v.get("served"):
            continue
        name = str(v.get("name"))
        full = schemas[name]
        subs = _d(v.get("subresources"))
        subresources: list[Subresource] = []
        scale = None
        if "status" in subs:
            subresources.append(Subresource("status", kind, verbs=("get", "patch", "update")))
        if isinstance(subs.get("scale"), dict):
            sc = subs["scale"]
            scale = ScalePaths(
                sc.get("specReplicasPath") or "",
                sc.get("statusReplicasPath") or "",
                sc.get("labelSelectorPath") or "",
            )
            subresources.append(
                Subresource("scale", "Scale", "autoscaling", "v1", verbs=("get", "patch", "update"))
            )
        warning = ""
        if v.get("deprecated"):
            warning = v.get("deprecationWarning") or f"{group}/{name} {kind} is deprecated"
        strategy = CustomResourceStrategy(kind, full, state, has_status="status" in subs, scale=scale)
        out.append(
            ResourceDef(
                group,
                name,
                kind,
                plural,
                namespaced,
                strategy=strategy,
                singular=names.get("singular") or kind.lower(),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=tuple(subresources),
                verbs=ALL_VERBS,
                strategic_merge=False,
                converter=converter_for(spec, group, kind, name, storage, schemas, state),
                schema=full,
                printer=printer_for_columns(list(v.get("additionalPrinterColumns") or [])),
                field_selectors=selectable_fields(v),
                deprecation_warning=warning,
                list_kind_name=names.get("listKind") or "",
                revision=revision,
            )
        )
    return out
