"""``pods/binding``: the scheduler's write of ``spec.nodeName`` (kube's pod ``BindingREST``).

``spec.nodeName`` is immutable through the Pod strategy, so binding is its own subresource: it
sets the node once, records the PodScheduled condition, clears a nomination (KEP-5278), and
refuses a pod being deleted, one already bound, or a UID precondition that does not match.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver import field as fielderr
from apiserver.api.types import Obj
from apiserver.meta import rfc3339
from apiserver.registry.generic import GenericStore


def _scheduled(now: str) -> Obj:
    """The PodScheduled condition a binding at ``now`` records."""
    return {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}


def _scheduled_only(now: str) -> list[Obj]:
    """The conditions of a pod bound at ``now`` that had no other condition."""
    return [_scheduled(now)]


def bind(api: GenericStore, ns: str, name: str, binding: Any) -> Obj:
    """Bind pod ``ns/name`` to ``binding.target.name``; returns the 201 Success Status."""
    rd = api.registry.get("", "v1", "pods")
    assert rd is not None
    if not isinstance(binding, dict) or not isinstance(binding.get("target"), dict):
        raise errors.bad_request("binding must carry a target")
    target = binding["target"].get("name") or ""
    if not target:
        raise errors.invalid("Binding", name, "", [fielderr.required("target.name")])
    bmd = binding.get("metadata") or {}
    if bmd.get("name") and bmd["name"] != name:
        raise errors.bad_request(
            f"the name of the object ({bmd['name']}) does not match the name on the URL ({name})"
        )
    rec = api.get_record(rd, ns, name)
    # The new revision is the stored one with its spec and status changed: it shares every other
    # subtree with the stored dict (immutable, as every stored object is) instead of decoding a
    # whole copy. The maps it changes are new ones: metadata (the store writes the new
    # resourceVersion into it), spec, status and its condition list.
    cur = rec.obj
    cur_md = cur.get("metadata") or {}
    if cur_md.get("deletionTimestamp"):
        raise errors.conflict(
            "pods/binding", name, "", f"pod {name} is being deleted, cannot be assigned to a host"
        )
    cur_spec = cur.get("spec") or {}
    if cur_spec.get("nodeName"):
        raise errors.conflict(
            "pods/binding", name, "", f'pod {name} is already assigned to node "{cur_spec["nodeName"]}"'
        )
    uid = bmd.get("uid")
    if uid and uid != cur_md.get("uid"):
        raise errors.conflict("pods/binding", name, "", "Precondition failed: UID in precondition: " + uid)
    pod = dict(cur)
    pod["metadata"] = dict(cur_md)
    spec = pod["spec"] = dict(cur_spec)
    spec["nodeName"] = target
    status = pod["status"] = dict(cur.get("status") or {})
    # KEP-5278: a bound pod no longer carries a nomination.
    status.pop("nominatedNodeName", None)
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    now = rfc3339(api.clock.now())
    if conds:
        conds.append(_scheduled(now))
        status["conditions"] = conds
    else:
        # only the new condition: the same list for every pod bound in this second, one object
        status["conditions"] = api.shared_subtrees.built("conditions", now, _scheduled_only)
    new_rec = api.write_record(rd, ns, name, pod, rec.rv)
    if api.validated_metadata is not None:
        # the stored metadata, only its resourceVersion new: as valid as it was
        api.validated_metadata.carried(rd, api._key(rd, ns, name), rec.rv, new_rec.rv)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
