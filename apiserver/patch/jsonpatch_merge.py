"""The two patch types every client may send: RFC 6902 JSON Patch and RFC 7386 JSON Merge Patch.

JSON Patch is delegated to the ``jsonpatch`` library; its failures become 422/400 Statuses
the way kube-apiserver reports them. Merge patch is the (tiny) RFC 7386 algorithm.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import jsonpointer

from apiserver import errors


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    if not isinstance(ops, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        patch = jsonpatch.JsonPatch(ops)
        return patch.apply(target)
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
