"""The OpenAPI documents kube-apiserver serves: ``/openapi/v3`` (index + one per group-version)
and ``/openapi/v2``, generated from the resource registry and the schema definitions.

Why they matter (``shared/reference/kubectl.md`` sections 5 and 6):

* ``kubectl create|apply -f`` with the default ``--validate=strict`` looks, in the group-version
  document, for a path whose ``patch`` operation carries the resource's
  ``x-kubernetes-group-version-kind`` and a ``fieldValidation`` parameter; without it kubectl
  falls back to ``/openapi/v2`` and finally fails.
* client-side ``apply``/``diff``/``edit`` build a strategic merge patch from
  ``components.schemas`` when the ``patch`` operation lists
  ``application/strategic-merge-patch+json``; every changed leaf needs a described property.
* ``kubectl explain`` renders ``components.schemas`` (``allOf``/``$ref``, descriptions).

The documents follow kube's shapes: sorted JSON, refs wrapped in ``allOf`` when they carry
siblings (v3) or bare with siblings (v2), nullable JSON-schema types collapsed to one type, the
``int-or-string`` and quantity special forms, ``x-kubernetes-*`` extensions passed through.
Only the schemas reachable from a document's paths are included (transitive closure).

Documents are built once per registry content and cached together with their content hash
(uppercase hex SHA-512, as kube-openapi uses both in ``?hash=`` and, quoted, as ``ETag``), so a
request costs a dictionary lookup. Resources without an upstream definition get a minimal
synthetic schema so their paths still validate.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver.errors import StatusError
from apiserver.openapi import schema
from apiserver.rest.resources import Registry, ResourceDef, Subresource

Node = dict[str, Any]

V3_REF = "#/components/schemas/"
V2_REF = "#/definitions/"
_SRC_REF = "#/$defs/"

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
DELETE_OPTIONS = _META + "DeleteOptions"
STATUS = _META + "Status"
PATCH = _META + "Patch"
WATCH_EVENT = _META + "WatchEvent"
API_RESOURCE_LIST = _META + "APIResourceList"
OBJECT_META = _META + "ObjectMeta"
LIST_META = _META + "ListMeta"

JSON = "application/json"
YAML = "application/yaml"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
WATCH_JSON = "application/json;stream=watch"

#: Subresources that stream or upgrade: kube marks them ``connect`` and answers a plain string.
_CONNECT_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy"})

_DUMP = orjson.OPT_SORT_KEYS


# --- parameters -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One operation parameter, rendered as OpenAPI v3 or Swagger 2.0."""

    name: str
    location: str  # "query" | "path"
    type: str
    description: str
    required: bool = False

    def v3(self) -> Node:
        out: Node = {"name": self.name, "in": self.location, "description": self.description}
        out["schema"] = {"type": self.type}
        if self.required:
            out["required"] = True
        return out

    def v2(self) -> Node:
        out: Node = {
            "name": self.name,
            "in": self.location,
            "description": self.description,
            "type": self.type,
        }
        if self.required:
            out["required"] = True
        return out


P_PRETTY = Param("pretty", "query", "string", "If 'true', the response is indented.")
P_NAMESPACE = Param("namespace", "path", "string", "namespace of the object (the scope of the name)", True)
P_DRY_RUN = Param(
    "dryRun", "query", "string", "When 'All', every stage of the request runs but nothing is persisted."
)
P_FIELD_MANAGER = Param(
    "fieldManager",
    "query",
    "string",
    "Name of the actor making the change, recorded in managedFields; required for apply patches.",
)
P_FIELD_VALIDATION = Param(
    "fieldValidation",
    "query",
    "string",
    "How unknown or duplicate fields in the request body are handled: Ignore drops them, Warn drops "
    "them with a Warning header per field, Strict rejects the request with a BadRequest error.",
)
P_FORCE = Param(
    "force", "query", "boolean", "Apply patches only: take over fields owned by other managers on conflict."
)
P_GRACE = Param(
    "gracePeriodSeconds", "query", "integer", "Seconds before the object is deleted; 0 deletes now."
)
P_ORPHAN = Param("orphanDependents", "query", "boolean", "Deprecated: use propagationPolicy.")
P_PROPAGATION = Param(
    "propagationPolicy",
    "query",
    "string",
    "Garbage collection of dependents: Orphan, Background or Foreground.",
)
P_IGNORE_READ_ERRORS = Param(
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "query",
    "boolean",
    "Delete objects that cannot be read from storage (unsafe).",
)
LIST_PARAMS = (
    Param("allowWatchBookmarks", "query", "boolean", "Ask for BOOKMARK events on a watch."),
    Param("continue", "query", "string", "Continue token from a previous paginated list."),
    Param("fieldSelector", "query", "string", "Restrict the result by field values."),
    Param("labelSelector", "query", "string", "Restrict the result by labels."),
    Param("limit", "query", "integer", "Maximum number of items to return."),
    Param("resourceVersion", "query", "string", "Resource version the list or watch is served from."),
    Param("resourceVersionMatch", "query", "string", "How resourceVersion applies: Exact or NotOlderThan."),
    Param("sendInitialEvents", "query", "boolean", "Start a watch with the current objects and a bookmark."),
    Param("timeoutSeconds", "query", "integer", "Limit on the duration of the list or watch call."),
    Param("watch", "query", "boolean", "Stream changes instead of returning a list."),
)
_NO_WATCH = frozenset({"watch", "allowWatchBookmarks"})
LOG_PARAMS = (
    Param("container", "query", "string", "Container to stream logs of."),
    Param("follow", "query", "boolean", "Keep streaming new log lines."),
    Param("insecureSkipTLSVerifyBackend", "query", "boolean", "Skip verifying the kubelet's certificate."),
    Param("limitBytes", "query", "integer", "Stop after this many bytes."),
    Param("previous", "query", "boolean", "Logs of the previous, terminated container instance."),
    Param("sinceSeconds", "query", "integer", "Only lines newer than this many seconds."),
    Param("stream", "query", "string", "Log stream: All, Stdout or Stderr."),
    Param("tailLines", "query", "integer", "Only this many lines from the end."),
    Param("timestamps", "query", "boolean", "Prefix every line with its timestamp."),
)
WRITE_PARAMS = (P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION)
DELETE_PARAMS = (P_DRY_RUN, P_GRACE, P_IGNORE_READ_ERRORS, P_ORPHAN, P_PROPAGATION)


# --- operations -----------------------------------------------------------------------------


@dataclass
class Operation:
    """One HTTP method on one path, format-neutral until rendered."""

    method: str
    action: str
    operation_id: str
    description: str
    gvk: dict[str, str] | None
    params: tuple[Param, ...] = ()
    body: str | None = None  # definition name of the request body
    body_types: tuple[str, ...] = ()
    responses: dict[str, str | None] = field(default_factory=dict)  # code -> definition (None: string)
    response_types: tuple[str, ...] = (JSON, YAML)
    tag: str = ""

    def v3(self) -> Node:
        op: Node = {
            "description": self.description,
            "operationId": self.operation_id,
            "responses": {"401": {"description": "Unauthorized"}},
            "tags": [self.tag],
            "x-kubernetes-action": self.action,
        }
        if self.gvk is not None:
            op["x-kubernetes-group-version-kind"] = self.gvk
        if self.params:
            op["parameters"] = [p.v3() for p in self.params]
        if self.body:
            op["requestBody"] = {
                "content": {ct: {"schema": {"$ref": V3_REF + self.body}} for ct in self.body_types},
                "required": True,
            }
        for code, name in self.responses.items():
            body_schema: Node = {"$ref": V3_REF + name} if name else {"type": "string"}
            op["responses"][code] = {
                "content": {ct: {"schema": body_schema} for ct in self.response_types},
                "description": _RESPONSE_TEXT[code],
            }
        return op

    def v2(self) -> Node:
        op: Node = {
            "consumes": list(self.body_types) if self.body else ["*/*"],
            "description": self.description,
            "operationId": self.operation_id,
            "produces": list(self.response_types),
            "responses": {"401": {"description": "Unauthorized"}},
            "schemes": ["https"],
            "tags": [self.tag],
            "x-kubernetes-action": self.action,
        }
        if self.gvk is not None:
            op["x-kubernetes-group-version-kind"] = self.gvk
        params = [p.v2() for p in self.params]
        if self.body:
            params.append(
                {"in": "body", "name": "body", "required": True, "schema": {"$ref": V2_REF + self.body}}
            )
        if params:
            op["parameters"] = params
        for code, name in self.responses.items():
            op["responses"][code] = {
                "description": _RESPONSE_TEXT[code],
                "schema": {"$ref": V2_REF + name} if name else {"type": "string"},
            }
        return op


_RESPONSE_TEXT = {"200": "OK", "201": "Created", "202": "Accepted"}


@dataclass
class PathItem:
    params: tuple[Param, ...]
    operations: list[Operation]


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[.\-]", text) if p)


def group_tag(group: str, version: str) -> str:
    """kube's tag / operation prefix for a group-version: ``apps_v1``, ``core_v1``, ``scheduling_v1beta1``."""
    if not group:
        return f"core_{version}"
    short = group.removesuffix(".k8s.io")
    head, *rest = short.split(".")
    name = head + "".join(p[:1].upper() + p[1:] for p in rest)
    return f"{name}_{version}"


def _op_prefix(group: str, version: str) -> str:
    tag = group_tag(group, version)
    name, _, ver = tag.rpartition("_")
    return _camel(name) + _camel(ver)


# --- definitions for resources --------------------------------------------------------------


def _synthetic_name(group: str, version: str, kind: str) -> str:
    """Name for a kind without upstream definition, in kube's CRD style (reversed group)."""
    rev = ".".join(reversed(group.split("."))) if group else "io.k8s.api.core"
    return f"{rev}.{version}.{kind}"


@dataclass
class _Defs:
    """Definitions a set of resources needs: upstream names plus synthetic (source-form) ones."""

    synthetic: dict[str, Node] = field(default_factory=dict)

    def kind(self, group: str, version: str, kind: str, published: Node | None = None) -> str:
        if published is not None:
            # a custom resource: its CRD version's schema, under kube's name for it
            name = _synthetic_name(group, version, kind)
            self.synthetic[name] = published
            return name
        name = schema.definition_name_for(group, version, kind)
        if name:
            return name
        name = _synthetic_name(group, version, kind)
        if name not in self.synthetic and name not in schema.definitions():
            self.synthetic[name] = {
                "description": f"{kind} is served by gangplane without a published schema.",
                "properties": {
                    "apiVersion": {"description": "APIVersion of the object.", "type": "string"},
                    "kind": {"description": "Kind of the object.", "type": "string"},
                    "metadata": {"$ref": _SRC_REF + OBJECT_META, "description": "Standard object metadata."},
                },
                "type": "object",
                "x-kubernetes-group-version-kind": [_gvk(group, version, kind)],
                "x-kubernetes-preserve-unknown-fields": True,
            }
        return name

    def list_kind(self, group: str, version: str, kind: str, item: str) -> str:
        name = schema.definition_name_for(group, version, kind + "List")
        if name:
            return name
        name = item + "List"
        if name not in self.synthetic and name not in schema.definitions():
            self.synthetic[name] = {
                "description": f"{kind}List is a list of {kind} objects.",
                "properties": {
                    "apiVersion": {"description": "APIVersion of the list.", "type": "string"},
                    "items": {"items": {"$ref": _SRC_REF + item}, "type": "array"},
                    "kind": {"description": "Kind of the list.", "type": "string"},
                    "metadata": {"$ref": _SRC_REF + LIST_META, "description": "Standard list metadata."},
                },
                "required": ["items"],
                "type": "object",
                "x-kubernetes-group-version-kind": [_gvk(group, version, kind + "List")],
            }
        return name

    def lookup(self, name: str) -> Node | None:
        return self.synthetic.get(name) or schema.definitions().get(name)


# --- paths ----------------------------------------------------------------------------------


def _sub_target(d: ResourceDef, sub: Subresource) -> tuple[str, str, str]:
    if not sub.kind:
        return d.group, d.version, d.kind
    return sub.group or d.group, sub.version or d.version, sub.kind


def resource_paths(d: ResourceDef, defs: _Defs) -> tuple[dict[str, PathItem], set[str]]:
    """Paths of one resource (collection, item, all-namespaces, watch, subresources) and the
    definitions they reference."""
    prefix = d.url_prefix()
    ns = f"{prefix}/namespaces/{{namespace}}" if d.namespaced else prefix
    scope = (P_NAMESPACE,) if d.namespaced else ()
    opx = _op_prefix(d.group, d.version)
    tag = group_tag(d.group, d.version)
    nsd = "Namespaced" if d.namespaced else ""
    gvk = _gvk(d.group, d.version, d.kind)
    kind_def = defs.kind(d.group, d.version, d.kind, d.schema)
    list_def = defs.list_kind(d.group, d.version, d.kind, kind_def)
    refs = {kind_def}
    verbs = set(d.verbs)
    name_param = Param("name", "path", "string", f"name of the {d.kind}", True)
    patch_types = (
        (JSON_PATCH, MERGE_PATCH) + ((STRATEGIC_MERGE_PATCH,) if d.strategic_merge else ()) + (APPLY_PATCH,)
    )

    def op(method: str, action: str, verb: str, what: str, **kw: Any) -> Operation:
        return Operation(
            method, action, f"{verb}{opx}{what}", kw.pop("description"), kw.pop("gvk", gvk), tag=tag, **kw
        )

    paths: dict[str, PathItem] = {}
    collection: list[Operation] = []
    if "list" in verbs:
        refs.add(list_def)
        collection.append(
            op(
                "get",
                "list",
                "list",
                f"{nsd}{d.kind}",
                description=f"list or watch objects of kind {d.kind}",
                params=LIST_PARAMS,
                responses={"200": list_def},
                response_types=(JSON, YAML, WATCH_JSON),
            )
        )
    if "create" in verbs:
        collection.append(
            op(
                "post",
                "post",
                "create",
                f"{nsd}{d.kind}",
                description=f"create a {d.kind}",
                params=WRITE_PARAMS,
                body=kind_def,
                body_types=("*/*",),
                responses={"200": kind_def, "201": kind_def, "202": kind_def},
            )
        )
    if "deletecollection" in verbs:
        refs.update((DELETE_OPTIONS, STATUS))
        collection.append(
            op(
                "delete",
                "deletecollection",
                "delete",
                f"Collection{nsd}{d.kind}",
                description=f"delete collection of {d.kind}",
                params=DELETE_PARAMS + tuple(p for p in LIST_PARAMS if p.name not in _NO_WATCH),
                body=DELETE_OPTIONS,
                body_types=("*/*",),
                responses={"200": STATUS},
            )
        )
    if collection:
        paths[f"{ns}/{d.plural}"] = PathItem(scope + (P_PRETTY,), collection)

    item: list[Operation] = []
    if "get" in verbs:
        item.append(
            op(
                "get",
                "get",
                "read",
                f"{nsd}{d.kind}",
                description=f"read the specified {d.kind}",
                responses={"200": kind_def},
            )
        )
    if "update" in verbs:
        item.append(
            op(
                "put",
                "put",
                "replace",
                f"{nsd}{d.kind}",
                description=f"replace the specified {d.kind}",
                params=WRITE_PARAMS,
                body=kind_def,
                body_types=("*/*",),
                responses={"200": kind_def, "201": kind_def},
            )
        )
    if "patch" in verbs:
        refs.add(PATCH)
        item.append(
            op(
                "patch",
                "patch",
                "patch",
                f"{nsd}{d.kind}",
                description=f"partially update the specified {d.kind}",
                params=WRITE_PARAMS + (P_FORCE,),
                body=PATCH,
                body_types=patch_types,
                responses={"200": kind_def, "201": kind_def},
            )
        )
    if "delete" in verbs:
        refs.update((DELETE_OPTIONS, STATUS))
        item.append(
            op(
                "delete",
                "delete",
                "delete",
                f"{nsd}{d.kind}",
                description=f"delete a {d.kind}",
                params=DELETE_PARAMS,
                body=DELETE_OPTIONS,
                body_types=("*/*",),
                responses={"200": STATUS, "202": STATUS},
            )
        )
    if item:
        paths[f"{ns}/{d.plural}/{{name}}"] = PathItem((name_param,) + scope + (P_PRETTY,), item)

    if d.namespaced and "list" in verbs:
        paths[f"{prefix}/{d.plural}"] = PathItem(
            (P_PRETTY,) + LIST_PARAMS,
            [
                op(
                    "get",
                    "list",
                    "list",
                    f"{d.kind}ForAllNamespaces",
                    description=f"list or watch objects of kind {d.kind}",
                    responses={"200": list_def},
                    response_types=(JSON, YAML, WATCH_JSON),
                )
            ],
        )
    if "watch" in verbs:
        refs.add(WATCH_EVENT)
        watch_types = (JSON, YAML, WATCH_JSON)
        wns = f"{prefix}/watch/namespaces/{{namespace}}" if d.namespaced else f"{prefix}/watch"
        paths[f"{wns}/{d.plural}"] = PathItem(
            scope + (P_PRETTY,) + LIST_PARAMS,
            [
                op(
                    "get",
                    "watchlist",
                    "watch",
                    f"{nsd}{d.kind}List",
                    description=f"watch individual changes to a list of {d.kind}",
                    responses={"200": WATCH_EVENT},
                    response_types=watch_types,
                )
            ],
        )
        paths[f"{wns}/{d.plural}/{{name}}"] = PathItem(
            (name_param,) + scope + (P_PRETTY,) + LIST_PARAMS,
            [
                op(
                    "get",
                    "watch",
                    "watch",
                    f"{nsd}{d.kind}",
                    description=f"watch changes to an object of kind {d.kind}",
                    responses={"200": WATCH_EVENT},
                    response_types=watch_types,
                )
            ],
        )
        if d.namespaced:
            paths[f"{prefix}/watch/{d.plural}"] = PathItem(
                (P_PRETTY,) + LIST_PARAMS,
                [
                    op(
                        "get",
                        "watchlist",
                        "watch",
                        f"{d.kind}ListForAllNamespaces",
                        description=f"watch individual changes to a list of {d.kind}",
                        responses={"200": WATCH_EVENT},
                        response_types=watch_types,
                    )
                ],
            )

    for sub in d.subresources:
        sub_paths, sub_refs = _subresource_path(d, sub, defs, ns, scope, opx, tag, nsd, patch_types)
        paths.update(sub_paths)
        refs |= sub_refs
    return paths, refs


def _subresource_path(
    d: ResourceDef,
    sub: Subresource,
    defs: _Defs,
    ns: str,
    scope: tuple[Param, ...],
    opx: str,
    tag: str,
    nsd: str,
    patch_types: tuple[str, ...],
) -> tuple[dict[str, PathItem], set[str]]:
    group, version, kind = _sub_target(d, sub)
    gvk = _gvk(group, version, kind)
    what = f"{nsd}{d.kind}{_camel(sub.name)}"
    name_param = Param("name", "path", "string", f"name of the {kind}", True)
    verbs = set(sub.verbs)
    ops: list[Operation] = []
    refs: set[str] = set()

    def op(method: str, action: str, verb: str, description: str, **kw: Any) -> Operation:
        return Operation(method, action, f"{verb}{opx}{what}", description, gvk, tag=tag, **kw)

    if sub.name in _CONNECT_SUBRESOURCES:
        text = ("*/*",)
        for verb, method in (("get", "get"), ("create", "post")):
            if verb in verbs:
                ops.append(
                    Operation(
                        method,
                        "connect",
                        f"connect{opx}{_camel(method)}{what}",
                        f"connect {method.upper()} requests to {sub.name} of {d.kind}",
                        gvk,
                        tag=tag,
                        responses={"200": None},
                        response_types=text,
                    )
                )
        params: tuple[Param, ...] = (name_param,) + scope
    elif sub.name == "log":
        if "get" in verbs:
            ops.append(
                op(
                    "get",
                    "get",
                    "read",
                    f"read log of the specified {d.kind}",
                    params=LOG_PARAMS,
                    responses={"200": None},
                    response_types=("text/plain", JSON, YAML),
                )
            )
        params = (name_param,) + scope + (P_PRETTY,)
    else:
        target = defs.kind(group, version, kind)
        refs.add(target)
        label = f"{sub.name} of the specified {d.kind}"
        if "get" in verbs:
            ops.append(op("get", "get", "read", f"read {label}", responses={"200": target}))
        if "update" in verbs:
            ops.append(
                op(
                    "put",
                    "put",
                    "replace",
                    f"replace {label}",
                    params=WRITE_PARAMS,
                    body=target,
                    body_types=("*/*",),
                    responses={"200": target, "201": target},
                )
            )
        if "patch" in verbs:
            refs.add(PATCH)
            ops.append(
                op(
                    "patch",
                    "patch",
                    "patch",
                    f"partially update {label}",
                    params=WRITE_PARAMS + (P_FORCE,),
                    body=PATCH,
                    body_types=patch_types,
                    responses={"200": target, "201": target},
                )
            )
        if "create" in verbs:
            ops.append(
                op(
                    "post",
                    "post",
                    "create",
                    f"create {label}",
                    params=WRITE_PARAMS,
                    body=target,
                    body_types=("*/*",),
                    responses={"200": target, "201": target, "202": target},
                )
            )
        params = (name_param,) + scope + (P_PRETTY,)
    if not ops:
        return {}, refs
    return {f"{ns}/{d.plural}/{{name}}/{sub.name}": PathItem(params, ops)}, refs


def _discovery_path(group: str, version: str) -> tuple[str, PathItem]:
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    op = Operation(
        "get",
        "get",
        f"get{_op_prefix(group, version)}APIResources",
        "get available resources",
        None,
        responses={"200": API_RESOURCE_LIST},
        tag=group_tag(group, version),
    )
    return prefix + "/", PathItem((), [op])


# --- schema conversion ----------------------------------------------------------------------


def _single_type(value: Any) -> str | None:
    if isinstance(value, list):
        types = [t for t in value if t != "null"]
        return types[0] if types else None
    return value


def _convert(node: Any, ref_prefix: str, v3: bool) -> Any:
    """JSON-schema ``$defs`` form -> OpenAPI v3 (``allOf`` around refs with siblings) or v2."""
    if not isinstance(node, dict):
        return node
    out: Node = {}
    for key, value in node.items():
        if key == "$ref":
            continue
        if key == "type":
            t = _single_type(value)
            if t is not None:
                out["type"] = t
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _convert(prop, ref_prefix, v3) for name, prop in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _convert(value, ref_prefix, v3)
        elif key in ("oneOf", "anyOf", "allOf") and isinstance(value, list):
            out[key] = [_convert(v, ref_prefix, v3) for v in value]
        else:
            out[key] = value
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = {"$ref": ref_prefix + schema.ref_name(ref)}
        if not out:
            return target
        if v3:
            return {"allOf": [target], **out}
        return {**target, **out}
    if not v3 and "oneOf" in out:
        # Swagger 2.0 has no oneOf: quantity-like unions are strings on the wire.
        types = [o.get("type") for o in out.pop("oneOf") if isinstance(o, dict)]
        out.setdefault("type", "string" if "string" in types else (types[0] if types else "string"))
    return out


def _convert_definition(name: str, node: Node, v3: bool) -> Node:
    if name == INT_OR_STRING:
        base = {k: v for k, v in node.items() if k == "description"}
        if v3:
            return {**base, "format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
        return {**base, "format": "int-or-string", "type": "string"}
    out = _convert(node, V3_REF if v3 else V2_REF, v3)
    if node.get("x-kubernetes-group-version-kind") and isinstance(out.get("properties"), dict):
        # kubernetes-validate pins apiVersion/kind with an enum; kube's documents do not.
        props = out["properties"]
        for key in ("apiVersion", "kind"):
            if isinstance(props.get(key), dict) and "enum" in props[key]:
                props[key] = {k: v for k, v in props[key].items() if k != "enum"}
    return out


@functools.lru_cache(maxsize=4096)
def _upstream_converted(name: str, v3: bool) -> Node:
    return _convert_definition(name, schema.definitions()[name], v3)


def _collect_refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.add(schema.ref_name(ref))
        for value in node.values():
            if isinstance(value, dict | list):
                _collect_refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _collect_refs(value, out)


@functools.lru_cache(maxsize=4096)
def _upstream_refs(name: str) -> frozenset[str]:
    out: set[str] = set()
    _collect_refs(schema.definitions().get(name), out)
    return frozenset(out)


def _closure(roots: Iterable[str], defs: _Defs) -> list[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        node = defs.lookup(name)
        if node is None:
            continue
        seen.add(name)
        if name in defs.synthetic:
            refs: set[str] = set()
            _collect_refs(node, refs)
            todo.extend(refs - seen)
        else:
            todo.extend(_upstream_refs(name) - seen)
    return sorted(seen)


def _schemas(names: list[str], defs: _Defs, v3: bool) -> dict[str, Node]:
    out = {}
    for name in names:
        if name in defs.synthetic:
            out[name] = _convert_definition(name, defs.synthetic[name], v3)
        else:
            out[name] = _upstream_converted(name, v3)
    return out


# --- documents ------------------------------------------------------------------------------


def content_hash(doc: bytes) -> str:
    """kube-openapi's content hash: uppercase hex SHA-512, used in ``?hash=``."""
    return hashlib.sha512(doc).hexdigest().upper()


def etag(doc_bytes: bytes) -> str:
    """The ``ETag`` header value for a document: its content hash, quoted (as kube-openapi)."""
    return f'"{_hash_of(doc_bytes)}"'


_HASHES: dict[int, tuple[bytes, str]] = {}


def _hash_of(doc: bytes) -> str:
    """Content hash, remembered for the cached documents so a request does not rehash 1 MB."""
    hit = _HASHES.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1]
    return content_hash(doc)


def _remember(doc: bytes) -> str:
    h = content_hash(doc)
    if len(_HASHES) > 256:  # documents of registries evicted from the build cache
        _HASHES.clear()
    _HASHES[id(doc)] = (doc, h)
    return h


def v3_path_key(group: str, version: str) -> str:
    """Index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


@dataclass
class _Built:
    group_versions: dict[tuple[str, str], bytes]
    hashes: dict[tuple[str, str], str]
    index: dict[str, Any]
    v2: bytes | None = None


def _registry_key(registry: Registry | Iterable[ResourceDef]) -> tuple[ResourceDef, ...]:
    return tuple(registry.all() if isinstance(registry, Registry) else registry)


def _group_version_doc(resources: list[ResourceDef], group: str, version: str) -> bytes:
    defs = _Defs()
    paths: dict[str, Node] = {}
    roots: set[str] = set()
    disc_path, disc = _discovery_path(group, version)
    items = {disc_path: disc}
    roots.add(API_RESOURCE_LIST)
    for d in resources:
        rp, refs = resource_paths(d, defs)
        items.update(rp)
        roots |= refs
    for path, item in items.items():
        rendered: Node = {op.method: op.v3() for op in item.operations}
        if item.params:
            rendered["parameters"] = [p.v3() for p in item.params]
        paths[path] = rendered
    doc = {
        "components": {
            "schemas": _schemas(_closure(roots, defs), defs, v3=True),
            "securitySchemes": {
                "BearerToken": {
                    "description": "Bearer Token authentication",
                    "in": "header",
                    "name": "authorization",
                    "type": "apiKey",
                }
            },
        },
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "openapi": "3.0.0",
        "paths": paths,
    }
    return orjson.dumps(doc, option=_DUMP)


@functools.lru_cache(maxsize=8)
def _build(key: tuple[ResourceDef, ...]) -> _Built:
    by_gv: dict[tuple[str, str], list[ResourceDef]] = {}
    for d in key:
        by_gv.setdefault((d.group, d.version), []).append(d)
    docs: dict[tuple[str, str], bytes] = {}
    hashes: dict[tuple[str, str], str] = {}
    for (group, version), resources in by_gv.items():
        doc = _group_version_doc(resources, group, version)
        docs[(group, version)] = doc
        hashes[(group, version)] = _remember(doc)
    index = {
        "paths": {
            v3_path_key(g, v): {"serverRelativeURL": f"/openapi/v3/{v3_path_key(g, v)}?hash={hashes[(g, v)]}"}
            for (g, v) in sorted(docs)
        }
    }
    return _Built(docs, hashes, index)


def openapi_v3_index(registry: Registry | Iterable[ResourceDef]) -> dict[str, Any]:
    """``GET /openapi/v3``: ``{"paths": {"apis/apps/v1": {"serverRelativeURL": ".../apps/v1?hash=H"}}}``.

    Building the index builds (and caches) every group-version document, since each entry
    carries its document's content hash. The result is a fresh copy the caller may keep.
    """
    index = _build(_registry_key(registry)).index
    return {"paths": {key: dict(entry) for key, entry in index["paths"].items()}}


def openapi_v3_group_version(registry: Registry | Iterable[ResourceDef], group: str, version: str) -> bytes:
    """``GET /openapi/v3/apis/<group>/<version>`` (``/api/v1`` for core) as JSON bytes.

    Raises a 404 :class:`StatusError` for a group-version the registry does not serve.
    """
    built = _build(_registry_key(registry))
    doc = built.group_versions.get((group, version))
    if doc is None:
        raise StatusError(
            404,
            "NotFound",
            f"the server could not find the requested resource ({v3_path_key(group, version)})",
        )
    return doc


def openapi_v3_for_path(registry: Registry | Iterable[ResourceDef], path: str) -> bytes | None:
    """The document for a request path such as ``/openapi/v3/apis/apps/v1`` (``None`` if unknown)."""
    rest = path.strip("/").removeprefix("openapi/v3/")
    parts = rest.split("/")
    if len(parts) == 2 and parts[0] == "api":
        group, version = "", parts[1]
    elif len(parts) == 3 and parts[0] == "apis":
        group, version = parts[1], parts[2]
    else:
        return None
    return _build(_registry_key(registry)).group_versions.get((group, version))


def openapi_v2(registry: Registry | Iterable[ResourceDef]) -> bytes:
    """``GET /openapi/v2``: one Swagger 2.0 document for every served resource, as JSON bytes."""
    key = _registry_key(registry)
    built = _build(key)
    if built.v2 is None:
        built.v2 = _swagger(key)
        _remember(built.v2)
    return built.v2


def _swagger(resources: tuple[ResourceDef, ...]) -> bytes:
    defs = _Defs()
    items: dict[str, PathItem] = {}
    roots: set[str] = {API_RESOURCE_LIST}
    for group, version in dict.fromkeys((d.group, d.version) for d in resources):
        path, item = _discovery_path(group, version)
        items[path] = item
    for d in resources:
        rp, refs = resource_paths(d, defs)
        items.update(rp)
        roots |= refs
    paths: dict[str, Node] = {}
    for path, item in items.items():
        rendered: Node = {op.method: op.v2() for op in item.operations}
        if item.params:
            rendered["parameters"] = [p.v2() for p in item.params]
        paths[path] = rendered
    doc = {
        "definitions": _schemas(_closure(roots, defs), defs, v3=False),
        "info": {"title": "Kubernetes", "version": schema.K8S_SCHEMA_VERSION},
        "paths": paths,
        "security": [{"BearerToken": []}],
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        },
        "swagger": "2.0",
    }
    return orjson.dumps(doc, option=_DUMP)
