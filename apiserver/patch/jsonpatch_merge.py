"""The two patch types every client may send: RFC 6902 JSON Patch and RFC 7386 JSON Merge Patch.

JSON Patch is delegated to the ``jsonpatch`` library, one operation at a time so that kube's
bounds (operation count, accumulated copy size) and the nesting limit hold at every step; its
failures become 422/400 Statuses the way kube-apiserver reports them. Merge patch is the (tiny)
RFC 7386 algorithm, iterative so that no nesting can exhaust the stack.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from apiserver import errors
from apiserver.patch.limits import (
    JSON_PATCH_MAX_COPY_BYTES,
    MAX_DEPTH,
    MAX_JSON_PATCH_OPERATIONS,
    max_depth,
    patch_result_too_deep,
)

#: Values a copy may share: immutable, and what JSON and YAML scalars decode to.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _copy_value(v: Any) -> Any:
    """``copy.deepcopy`` of a patch value, made directly for what request bodies hold.

    Maps and lists are copied level by level (iteratively, as :func:`merge_patch` walks: no
    nesting exhausts the stack) and the scalars JSON and YAML decode to are immutable and
    shared, as ``deepcopy`` shares them. A value holding anything else (a YAML timestamp, a
    set) or one map or list twice (YAML aliases; ``deepcopy`` keeps the aliasing) is left to
    ``deepcopy``.
    """
    t = type(v)
    if t in _SCALARS:
        return v
    if t is not dict and t is not list:
        return copy.deepcopy(v)
    root: Any = {} if t is dict else []
    seen = {id(v)}
    stack: list[tuple[Any, Any]] = [(v, root)]
    while stack:
        src, dst = stack.pop()
        is_map = type(dst) is dict
        for k, x in src.items() if is_map else enumerate(src):
            tx = type(x)
            if tx in _SCALARS:
                y = x
            elif (tx is dict or tx is list) and id(x) not in seen:
                seen.add(id(x))
                y = {} if tx is dict else []
                stack.append((x, y))
            else:
                return copy.deepcopy(v)
            if is_map:
                dst[k] = y
            else:
                dst.append(y)
    return root


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces.

    Written as a loop over an explicit stack: the result shares nothing with ``patch``.
    """
    if not isinstance(patch, dict):
        return _copy_value(patch)
    root = dict(target) if isinstance(target, dict) else {}
    stack: list[tuple[dict[str, Any], dict[str, Any]]] = [(root, patch)]
    while stack:
        result, p = stack.pop()
        for k, v in p.items():
            if v is None:
                result.pop(k, None)
            elif isinstance(v, dict):
                cur = result.get(k)
                merged = dict(cur) if isinstance(cur, dict) else {}
                result[k] = merged
                stack.append((merged, v))
            else:
                result[k] = _copy_value(v)
    return root


def _pointer_length(pointer: Any) -> int:
    """How many levels below the root an RFC 6901 pointer reaches (``""`` is 0)."""
    return pointer.count("/") if isinstance(pointer, str) else 0


def _resolve(doc: Any, pointer: Any) -> Any:
    """The value ``pointer`` names in ``doc``; raises like the operation itself would."""
    import jsonpointer  # only JSON Patch requests need it (see json_patch)

    return jsonpointer.JsonPointer(pointer).resolve(doc)


def json_patch(target: dict[str, Any], ops: Any) -> Any:
    """RFC 6902 over ``target`` (unchanged), one operation at a time, within kube's bounds.

    * more than :data:`MAX_JSON_PATCH_OPERATIONS` operations: 413, as kube's patch handler;
    * ``copy`` operations may add at most :data:`JSON_PATCH_MAX_COPY_BYTES` (the JSON size of
      what they copy, summed), as evanphx/json-patch's ``AccumulatedCopySizeLimit`` in kube: 19
      doublings of a small value are refused before they cost anything;
    * an ``add``, ``replace`` or ``copy`` that would put a value deeper than the nesting limit is
      a 422 before it is done (its depth is known exactly: the path's length plus the value's).
      A ``move`` copies nothing and walks nothing; what it nests is checked once, on the result
      (``check_patch_result``), so no operation costs more than the bytes it names or copies.
    """
    # imported here, not with the module: only JSON Patch requests use them, and every
    # ``gangplane serve`` imports this module before it serves (about 5 ms of a cold start)
    import jsonpatch
    import jsonpointer

    if not isinstance(ops, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}"
        )
    doc: Any = copy.deepcopy(target)
    copied = 0
    try:
        for op in ops:
            if not isinstance(op, dict):
                raise jsonpatch.InvalidJsonPatch("Operation must be an object")
            kind = op.get("op")
            depth = -1
            if kind == "copy":
                source = _resolve(doc, op.get("from"))
                try:
                    size = len(orjson.dumps(source))
                except TypeError:  # nested past what can be encoded at all
                    raise patch_result_too_deep() from None
                copied += size
                if copied > JSON_PATCH_MAX_COPY_BYTES:
                    raise errors.StatusError(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request: "
                        "Unable to complete the copy, the accumulated size increase of copy is "
                        f"{copied}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}",
                    )
                depth = max_depth(source)
            elif kind in ("add", "replace"):
                depth = max_depth(op.get("value"))
            if depth > 0 and _pointer_length(op.get("path")) + depth > MAX_DEPTH:
                raise patch_result_too_deep()
            doc = jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
        return doc
    except jsonpatch.JsonPatchTestFailed as e:
        raise errors.StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {e}"
        ) from e
    except (jsonpatch.JsonPatchConflict, jsonpointer.JsonPointerException) as e:
        raise errors.StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {e}"
        ) from e
    except (jsonpatch.InvalidJsonPatch, TypeError, KeyError, ValueError) as e:
        raise errors.bad_request(f"invalid JSON Patch: {e}") from e
