"""The AdmissionRequest of a request (``admission.k8s.io/v1``), as webhooks receive it and as CEL's
``request`` variable presents it.

``kind``/``resource`` name the version the webhook or policy matched (with ``matchPolicy:
Equivalent`` another version of the same stored resource), ``requestKind``/``requestResource`` the
version the client used. Objects are presented in the matched version (kube's VersionedAttributes):
an ``autoscaling/v1`` HPA write matched by a rule on ``autoscaling/v2`` sends the v2 object, a
custom resource is converted by its CRD's conversion (None: apiVersion rewrite; Webhook: the
conversion webhook).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import orjson

from apiserver.admission import Attributes
from apiserver.api.types import Obj
from apiserver.api.users import LOOPBACK
from apiserver.rest.resources import ResourceDef


def _gvk(rd: ResourceDef, subresource: str) -> dict[str, str]:
    sub = rd.subresource(subresource) if subresource else None
    if sub is not None and sub.kind:
        return {"group": sub.group or rd.group, "version": sub.version or rd.version, "kind": sub.kind}
    return {"group": rd.group, "version": rd.version, "kind": rd.kind}


def _gvr(rd: ResourceDef) -> dict[str, str]:
    return {"group": rd.group, "version": rd.version, "resource": rd.plural}


def view_of(api: Any, rd: ResourceDef, obj: Obj | None) -> Obj | None:
    """A private copy of a stored-shape object in ``rd``'s version."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    if rd.is_view and hasattr(api, "to_view"):
        out = api.to_view(rd, out)
    return out


def attrs_view(api: Any, attrs: Attributes, obj: Obj | None, rd: ResourceDef | None = None) -> Obj | None:
    """A private copy of one of the request's objects as a webhook or policy that matched ``rd`` (the
    request's own version by default) sees it: converted to ``rd``'s version (kube's
    VersionedAttributes), or as it is when it is the subresource's own kind (a Scale)."""
    if attrs.subresource_kind:
        return copy.deepcopy(obj)
    return view_of(api, rd or attrs.rd, obj)


def attrs_stored(api: Any, attrs: Attributes, obj: Obj, rd: ResourceDef | None = None) -> Obj:
    """The inverse of :func:`attrs_view`: a mutated object (in ``rd``'s version) back in the shape
    ``attrs.obj`` holds."""
    rd = rd or attrs.rd
    if attrs.subresource_kind or not rd.is_view:
        return obj
    return api.from_view(rd, obj)


def user_info(attrs: Attributes) -> Obj:
    user = attrs.user or LOOPBACK
    return user.to_api() if hasattr(user, "to_api") else {"username": str(user)}


def admission_request(
    attrs: Attributes, api: Any, uid: str, matched: ResourceDef, *, with_objects: bool = True
) -> Obj:
    """Every field kube sends in ``AdmissionReview.request``."""
    rd = attrs.rd
    req: Obj = {
        "uid": uid,
        "kind": _gvk(matched, attrs.subresource),
        "resource": _gvr(matched),
    }
    if attrs.subresource:
        req["subResource"] = attrs.subresource
    req["requestKind"] = _gvk(rd, attrs.subresource)
    req["requestResource"] = _gvr(rd)
    if attrs.subresource:
        req["requestSubResource"] = attrs.subresource
    if attrs.name:
        req["name"] = attrs.name
    if attrs.namespace:
        req["namespace"] = attrs.namespace
    req["operation"] = attrs.operation
    req["userInfo"] = user_info(attrs)
    if with_objects:
        req["object"] = attrs_view(api, attrs, attrs.obj, matched)
        req["oldObject"] = attrs_view(api, attrs, attrs.old, matched)
    req["dryRun"] = attrs.dry_run
    if attrs.options is not None:
        req["options"] = attrs.options
    return req


def replace_in_place(target: Obj, new: Obj) -> None:
    """Make ``target`` equal ``new`` keeping ``target``'s ``metadata`` dict (the registry holds it)."""
    md = target.get("metadata")
    new_md = new.get("metadata")
    target.clear()
    target.update({k: v for k, v in new.items() if k != "metadata"})
    if isinstance(md, dict) and isinstance(new_md, dict):
        if md is not new_md:
            md.clear()
            md.update(new_md)
        target["metadata"] = md
    elif new_md is not None:
        target["metadata"] = new_md


#: metadata a mutation may not change (the server owns it or it names the object)
PROTECTED_METADATA = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "resourceVersion",
    "generation",
    "deletionTimestamp",
)


def keep_protected(new: Obj, before: Obj) -> None:
    md = new.setdefault("metadata", {})
    old_md = before.get("metadata") or {}
    for k in PROTECTED_METADATA:
        if k in old_md:
            md[k] = old_md[k]
        else:
            md.pop(k, None)


def object_digest(obj: Obj | None) -> str:
    """What reinvocation compares: the object's content after a mutating item ran."""
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()
