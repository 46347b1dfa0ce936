"""``namespaces/{name}/finalize``: the namespace controller's release of ``spec.finalizers``.

kube's namespace ``FinalizeREST``: only ``spec.finalizers`` change (the Namespace strategy keeps
them on ordinary updates), and a Namespace being deleted whose last finalizer is released here is
removed at once.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.registry.generic import GenericStore, Result


def finalize_namespace(api: GenericStore, name: str, body: Any) -> Result:
    """Set Namespace ``name``'s ``spec.finalizers`` from ``body``; may complete its deletion."""
    rd = api.registry.get("", "v1", "namespaces")
    assert rd is not None
    rec = api.get_record(rd, "", name)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a Namespace")
    obj = rec.copy()
    obj.setdefault("spec", {})["finalizers"] = list(((body.get("spec") or {}).get("finalizers")) or [])
    if not obj["spec"]["finalizers"]:
        obj["spec"].pop("finalizers")
    md = obj["metadata"]
    if md.get("deletionTimestamp") and not obj["spec"].get("finalizers") and not md.get("finalizers"):
        gone = api.remove_record(rd, "", name)
        return Result(gone.copy(), [], 200)
    new_rec = api.write_record(rd, "", name, obj, rec.rv)
    return Result(new_rec.copy(), [], 200, new_rec.raw)
