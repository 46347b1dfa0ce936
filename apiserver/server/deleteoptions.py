"""``DeleteOptions`` from a DELETE request: the body decoded into ``metav1.DeleteOptions`` as Go would.

kube-apiserver decodes the body into the typed struct, so a value of the wrong JSON type never
reaches the registry: ``{"preconditions": 5}`` is the decoder's ``json: cannot unmarshal number
into Go struct field DeleteOptions.preconditions of type v1.Preconditions``. This module does the
same check, field by field, and answers 400 with Go's wording, before anything is looked up.
Query parameters (``gracePeriodSeconds``, ``propagationPolicy``, ``orphanDependents``,
``dryRun``) are parsed as kube's parameter codec parses them.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver import field as fielderr
from apiserver.registry.generic import DeleteOptions
from apiserver.server.queryparams import parse_int64

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# field -> Go type name, as encoding/json names it in an UnmarshalTypeError
_SCALARS = {
    "gracePeriodSeconds": "int64",
    "orphanDependents": "bool",
    "propagationPolicy": "v1.DeletionPropagation",
    "ignoreStoreReadErrorWithClusterBreakingPotential": "bool",
    "kind": "string",
    "apiVersion": "string",
}
_PRECONDITIONS = {"uid": "types.UID", "resourceVersion": "string"}


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _mismatch(value: Any, struct: str, path: str, go: str) -> errors.StatusError:
    shown = _json_kind(value)
    if go == "int64" and isinstance(value, (int, float)) and not isinstance(value, bool):
        shown = f"number {_go_number(value)}"
    return errors.bad_request(
        f"json: cannot unmarshal {shown} into Go struct field {struct}.{path} of type {go}"
    )


def _go_number(v: int | float) -> str:
    if isinstance(v, int):
        return str(v)
    text = repr(v)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        text = f"{mant}e{sign}{exp.lstrip('+-').rjust(2, '0')}"
    return text


def _is_int64(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _INT64_MIN <= v <= _INT64_MAX


def _check_scalar(name: str, value: Any) -> None:
    if value is None:
        return
    go = _SCALARS[name]
    if go == "int64":
        if isinstance(value, float) and value.is_integer() and _INT64_MIN <= value <= _INT64_MAX:
            return  # Go's decoder accepts 5.0 for an int64
        if not _is_int64(value):
            raise _mismatch(value, "DeleteOptions", name, go)
    elif go == "bool":
        if not isinstance(value, bool):
            raise _mismatch(value, "DeleteOptions", name, go)
    elif not isinstance(value, str):
        raise _mismatch(value, "DeleteOptions", name, go)


def check_body(body: Any) -> dict[str, Any]:
    """The body's fields, type-checked as ``json.Unmarshal`` into ``metav1.DeleteOptions`` would."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {_json_kind(body)} into Go value of type v1.DeleteOptions"
        )
    for name, value in body.items():
        if name in _SCALARS:
            _check_scalar(name, value)
        elif name == "preconditions" and value is not None:
            if not isinstance(value, dict):
                raise _mismatch(value, "DeleteOptions", "preconditions", "v1.Preconditions")
            for pname, pvalue in value.items():
                go = _PRECONDITIONS.get(pname)
                if go is not None and pvalue is not None and not isinstance(pvalue, str):
                    raise _mismatch(pvalue, "Preconditions", f"preconditions.{pname}", go)
        elif name == "dryRun" and value is not None:
            if not isinstance(value, list):
                raise _mismatch(value, "DeleteOptions", "dryRun", "[]string")
            for item in value:
                if not isinstance(item, str):
                    raise _mismatch(item, "DeleteOptions", "dryRun", "string")
    kind = body.get("kind")
    if kind not in (None, "", "DeleteOptions"):
        raise errors.bad_request(f"the kind in the data ({kind}) does not match DeleteOptions")
    return body


def _query_bool(value: str) -> bool:
    # kube's parameter codec: strconv.ParseBool's spellings; anything else is false
    return value in ("1", "t", "T", "true", "TRUE", "True")


def delete_options(body: Any, query: Any) -> DeleteOptions:
    """DeleteOptions from the decoded body (None when the request had none) or, only when there is
    no body, from the query string: kube's delete handlers decode one or the other, so with a body
    the query's ``gracePeriodSeconds``, ``propagationPolicy``, ``orphanDependents`` and ``dryRun``
    are not read (a client sending both gets what the body says, as from a real cluster)."""
    src = dict(check_body(body))
    if body is None:
        if query.get("propagationPolicy"):
            src["propagationPolicy"] = query.get("propagationPolicy")
        if query.get("gracePeriodSeconds") is not None:
            src["gracePeriodSeconds"] = parse_int64(query.get("gracePeriodSeconds"))
        if query.get("orphanDependents") is not None:
            src["orphanDependents"] = _query_bool(query.get("orphanDependents"))
        dry = query.getlist("dryRun") if hasattr(query, "getlist") else []
        if dry:
            src["dryRun"] = dry
    for d in src.get("dryRun") or []:
        if d != "All":
            raise errors.invalid(
                "DeleteOptions", "", "meta.k8s.io", [fielderr.not_supported("dryRun", d, ["All"])]
            )
    opts = DeleteOptions()
    opts.propagation_policy = src.get("propagationPolicy")
    gps = src.get("gracePeriodSeconds")
    opts.grace_period_seconds = int(gps) if gps is not None else None
    pre = src.get("preconditions") or {}
    opts.preconditions = {k: v for k, v in pre.items() if k in _PRECONDITIONS and v is not None}
    opts.dry_run = bool(src.get("dryRun"))
    if src.get("orphanDependents") is not None:
        opts.orphan_dependents = bool(src["orphanDependents"])
    return opts


__all__ = ["check_body", "delete_options"]
