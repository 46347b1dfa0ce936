"""The bounds every request body and every patch result is held to before anything acts on it.

kube-apiserver decodes with Go's ``encoding/json`` (at most 10000 nested levels) and go-yaml
(``exceeded max depth of 10000``, alias expansion bounded by ``allowedAliasRatio``), caps request
bodies at 3 MiB (``MaxRequestBodyBytes``) and the bytes a JSON patch may copy at 3 MiB
(``JSONPatchMaxCopyBytes``), and refuses JSON patches of more than 10000 operations.

gangplane keeps kube's byte and operation limits. Its nesting limit is lower than Go's because
two things below it are: orjson, which encodes every stored object and every response, refuses
values nested more than 254 levels, and Python's recursion limit (1000 frames) bounds the
recursive walks of patching, apply, pruning and validation. An object may therefore be at most
:data:`MAX_DEPTH` levels deep, which leaves room for what the server nests around it
(``metadata.managedFields[].fieldsV1`` mirrors the object five levels down; a Table row embeds it
three levels down) and keeps every walk at a few frames per level far below the recursion limit.
A body deeper than that is a 400 before any handler sees it, and a patch whose *result* is
deeper (a JSON patch ``add``/``copy`` can deepen an object) is a 422 naming the patch, as kube
answers a patched object its decoder cannot read.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

from apiserver import errors
from apiserver import field as fielderr

#: kube's ``MaxRequestBodyBytes`` (k8s.io/apiserver server config): 3 MiB for every request body
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: kube's ``JSONPatchMaxCopyBytes``: the accumulated size ``copy`` operations of one JSON patch may add
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024
#: kube's ``maxJSONPatchOperations`` (endpoints/handlers/patch.go)
MAX_JSON_PATCH_OPERATIONS = 10000
#: the deepest nesting of objects and arrays gangplane accepts (see the module docs for why not 10000)
MAX_DEPTH = 200


#: how much deeper than :data:`MAX_DEPTH` ``metadata.managedFields`` may nest (its ``fieldsV1``
#: mirrors the object five levels down)
MANAGED_FIELDS_SLACK = 8


def max_depth(value: Any) -> int:
    """How many levels ``value`` nests objects/arrays (``{}`` is 1, a scalar 0). Iterative."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > deepest:
            deepest = d
        for c in v.values() if type(v) is dict else v:
            if isinstance(c, (dict, list)):
                stack.append((c, d + 1))
    return deepest


def _orjson_depth_limit() -> int:
    """The deepest nesting ``orjson.dumps`` writes (254 levels as of orjson 3.x), found by trying."""
    lo, hi = 0, 4096  # lo: known to be written; hi: known not to be (or the probe's ceiling)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        v: Any = 0
        for _ in range(mid):
            v = [v]
        try:
            orjson.dumps(v)
            lo = mid
        except orjson.JSONEncodeError:
            hi = mid
    return lo


#: orjson refuses to write a value nested past this many objects/arrays
_ORJSON_DEPTH = _orjson_depth_limit()
_chains = threading.local()  # per thread (bodies are decoded off the event loop): limit -> chain


def _within(value: Any, limit: int) -> bool:
    """A fast sufficient test that ``value`` nests at most ``limit`` levels: True means so.

    orjson walks in C and stops past :data:`_ORJSON_DEPTH` levels, so ``value`` wrapped in
    ``_ORJSON_DEPTH - limit`` arrays is written exactly when it is at most ``limit`` deep.
    False also when orjson cannot write ``value`` for another reason (a non-string key, an
    integer past 64 bits): the exact walk then decides.
    """
    wrap = _ORJSON_DEPTH - limit
    if wrap < 1:
        return False
    chains = _chains.__dict__
    chain = chains.get(limit)
    if chain is None:
        inner: list[Any] = [None]
        outer = inner
        for _ in range(wrap - 1):
            outer = [outer]
        chain = chains[limit] = (outer, inner)
    outer, inner = chain
    inner[0] = value
    try:
        orjson.dumps(outer)
        return True
    except Exception:  # too deep, or not plain JSON: let the walk decide
        return False
    finally:
        inner[0] = None


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests deeper than ``limit`` levels, ``metadata.managedFields`` aside.

    The managed fields of an object at the limit nest a few levels more, by construction; they
    may go :data:`MANAGED_FIELDS_SLACK` deeper. Iterative, so it is itself safe on any input, and
    it stops at the first level past the limit. Nearly every value is far shallower than the
    limit: one C-level check (:func:`_within`) answers for those before any Python walk.
    """
    if not isinstance(value, (dict, list)):
        return False
    if _within(value, limit):
        return False
    meta = value.get("metadata") if type(value) is dict else None
    stack: list[tuple[Any, int, int]] = [(value, 1, limit)]
    while stack:
        v, d, lim = stack.pop()
        if d > lim:
            return True
        if type(v) is dict:
            for k, c in v.items():
                if isinstance(c, (dict, list)):
                    managed = v is meta and k == "managedFields"
                    stack.append((c, d + 1, limit + MANAGED_FIELDS_SLACK if managed else lim))
        else:
            for c in v:
                if isinstance(c, (dict, list)):
                    stack.append((c, d + 1, lim))
    return False


def json_too_deep() -> errors.StatusError:
    """Go's ``encoding/json`` scanner error for a body nested past the limit, as kube's decoder wraps it."""
    return errors.bad_request("couldn't get version/kind; json parse error: exceeded max depth")


def yaml_too_deep(limit: int = MAX_DEPTH) -> str:
    """go-yaml's text for nesting past its limit (kube prefixes ``error converting YAML to JSON: ``)."""
    return f"yaml: exceeded max depth of {limit}"


def patch_result_too_deep(limit: int = MAX_DEPTH) -> errors.StatusError:
    """The 422 kube answers when a patched object cannot be decoded: ``Invalid`` on field ``patch``."""
    return errors.invalid(
        "",
        "",
        "",
        [fielderr.invalid("patch", f"<an object nested more than {limit} levels>", "exceeded max depth")],
    )


def check_patch_result(obj: Any) -> None:
    """Refuse a patch result nested deeper than :data:`MAX_DEPTH` (before anything walks it)."""
    if depth_exceeds(obj):
        raise patch_result_too_deep()


__all__ = [
    "JSON_PATCH_MAX_COPY_BYTES",
    "MAX_DEPTH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MAX_REQUEST_BODY_BYTES",
    "check_patch_result",
    "MANAGED_FIELDS_SLACK",
    "depth_exceeds",
    "max_depth",
    "json_too_deep",
    "patch_result_too_deep",
    "yaml_too_deep",
]
