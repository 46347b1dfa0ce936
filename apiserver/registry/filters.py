"""List/watch filters from ``labelSelector`` and ``fieldSelector`` query strings.

Field selectors support ``metadata.name``, ``metadata.namespace`` and each resource's own
fields (``ResourceDef.field_selectors``), as kube's per-resource ``GetAttrs`` do; any other
field is a 400, like kube-apiserver's ``field label not supported``.
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.rest.resources import ResourceDef


def _meta_getter(field: str) -> Callable[[Obj], str] | None:
    if field == "metadata.name":
        return lambda o: (o.get("metadata") or {}).get("name", "")
    if field == "metadata.namespace":
        return lambda o: (o.get("metadata") or {}).get("namespace", "")
    return None


def _labels(obj: Obj) -> dict[str, str]:
    """An object's labels for selector matching; a malformed label map (never written through the
    API, which type-checks it, but possible in old stored state) matches as no labels rather than
    failing every list and watch of the resource."""
    md = obj.get("metadata")
    labels = md.get("labels") if isinstance(md, dict) else None
    if type(labels) is not dict:
        return {}
    if all(type(v) is str for v in labels.values()):
        return labels
    return {k: v for k, v in labels.items() if type(v) is str}


def build_filter(rd: ResourceDef, label_selector: str, field_selector: str) -> Callable[[Obj], bool] | None:
    from apiserver.selectors import parse_field_selector, parse_label_selector

    lsel = None
    if label_selector and label_selector.strip():
        try:
            lsel = parse_label_selector(label_selector)
        except ValueError as e:
            raise errors.bad_request(str(e)) from e
        if lsel.empty:
            lsel = None
    fsel = None
    getters: dict[str, Callable[[Obj], str]] = {}
    if field_selector and field_selector.strip():
        try:
            fsel = parse_field_selector(field_selector)
        except ValueError as e:
            raise errors.bad_request(str(e)) from e
        for fname in fsel.fields():
            g = _meta_getter(fname) or rd.field_selectors.get(fname)
            if g is None:
                raise errors.bad_request(f"field label not supported: {fname}")
            getters[fname] = g
        if not fsel.requirements:
            fsel = None
    if lsel is None and fsel is None:
        return None
    fields = fsel.matcher(getters) if fsel is not None else None
    if lsel is None and fields is not None:
        return fields

    def flt(obj: Obj) -> bool:
        if lsel is not None and not lsel.matches(_labels(obj)):
            return False
        if fields is not None:
            return fields(obj)
        return True

    return flt
