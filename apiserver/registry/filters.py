"""List/watch filters from ``labelSelector`` and ``fieldSelector`` query strings.

Field selectors support ``metadata.name``, ``metadata.namespace`` and each resource's own
fields (``ResourceDef.field_selectors``), as kube's per-resource ``GetAttrs`` do; any other
field is a 400, like kube-apiserver's ``field label not supported``.
"""

from __future__ import annotations

from collections.abc import Callable

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.registry.resources import ResourceDef


def _meta_getter(field: str) -> Callable[[Obj], str] | None:
    if field == "metadata.name":
        return lambda o: (o.get("metadata") or {}).get("name", "")
    if field == "metadata.namespace":
        return lambda o: (o.get("metadata") or {}).get("namespace", "")
    return None


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

    def flt(obj: Obj) -> bool:
        if lsel is not None and not lsel.matches((obj.get("metadata") or {}).get("labels") or {}):
            return False
        if fsel is not None:
            return fsel.matches(lambda f: getters[f](obj))
        return True

    return flt
