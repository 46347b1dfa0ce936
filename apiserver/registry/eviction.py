"""``pods/eviction``: a graceful delete that honours PodDisruptionBudgets (429 when disallowed).

With no disruption controller in the loop, the budget is evaluated from the live pods at the
moment of the request (healthy = Running and Ready), which is what the disruption controller
would have written into ``status.disruptionsAllowed``.
"""

from __future__ import annotations

import math
from typing import Any

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.registry.generic import DeleteOptions, GenericStore


def _is_healthy(pod: Obj) -> bool:
    st = pod.get("status") or {}
    if st.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def _scaled(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1])
        v = pct * total / 100
        return math.ceil(v) if round_up else math.floor(v)
    return int(value)


def disruptions_allowed(pdb: Obj, pods: list[Obj]) -> tuple[int, int, int]:
    """(allowed, desired healthy, current healthy) for the pods a PDB selects."""
    spec = pdb.get("spec") or {}
    expected = len(pods)
    healthy = sum(1 for p in pods if _is_healthy(p))
    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, True))
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected, True)
    else:
        desired = expected
    return max(0, healthy - desired), desired, healthy


def evict(api: GenericStore, ns: str, name: str, body: Any) -> Obj:
    from apiserver.selectors import label_selector_from_dict

    pod_rd = api.registry.get("", "v1", "pods")
    assert pod_rd is not None
    if body is not None and not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an Eviction")
    pod = api.get(pod_rd, ns, name).copy()
    opts = DeleteOptions()
    dopts = (body or {}).get("deleteOptions") or {}
    if dopts.get("gracePeriodSeconds") is not None:
        opts.grace_period_seconds = int(dopts["gracePeriodSeconds"])
    opts.preconditions = dict(dopts.get("preconditions") or {})
    opts.dry_run = bool(dopts.get("dryRun"))
    phase = (pod.get("status") or {}).get("phase")
    if phase not in ("Succeeded", "Failed", "Pending") and not pod["metadata"].get("deletionTimestamp"):
        labels = pod["metadata"].get("labels") or {}
        matching = []
        for pdb in api.lookup_all("policy", "poddisruptionbudgets", ns):
            try:
                sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not sel.empty and sel.matches(labels):
                matching.append(pdb)
        if len(matching) > 1:
            raise errors.internal_error(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            )
        if matching:
            pdb = matching[0]
            sel = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            pods = [
                p
                for p in api.lookup_all("", "pods", ns)
                if sel.matches((p.get("metadata") or {}).get("labels") or {})
            ]
            allowed, desired, healthy = disruptions_allowed(pdb, pods)
            if allowed <= 0:
                pdb_name = pdb["metadata"]["name"]
                raise errors.too_many_requests(
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    causes=[
                        {
                            "reason": "DisruptionBudget",
                            "message": f"The disruption budget {pdb_name} needs {desired} healthy pods and has {healthy} currently",
                        }
                    ],
                )
    api.delete(pod_rd, ns, name, opts)
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
