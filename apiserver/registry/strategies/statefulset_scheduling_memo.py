"""A StatefulSet's create-time ``spec.scheduling`` validation once per distinct input.

:func:`~.statefulset_scheduling.validate_scheduling` (the KEP-6277 structural, cross-field and
workloadbuilder layers) is about a fifth of a StatefulSet create, and a pure function of:

* ``spec`` — ``scheduling``, ``podManagementPolicy``, ``updateStrategy`` (the partition rule),
  ``replicas`` (the derived or user ``minCount``) and the template's pod ``spec`` (its
  ``priorityClassName``, its claims); never ``selector``, ``serviceName`` nor the template's
  ``metadata``;
* whether ``metadata.name`` is empty (the workload item is named after the set, and the tree
  check only refuses an empty or a duplicate name: a single leaf has no duplicate);
* three gates: ``DRAWorkloadResourceClaims``, ``StatefulSetWorkloadUserMinCount`` and
  ``StatefulSetWorkloadPartition``.

A controller's or a bench's sets of one shape differ only in their names, which reach ``spec``
exactly through the three fields left out (the selector, its template labels, the service). So an
input that validated without error is remembered by the exact JSON text of ``spec`` without
those three, with the name's emptiness and the gates; a later set with the same key passes.
Anything else is validated in full (errors, in kube's order, are never remembered). The text is
``orjson``'s under ``EXACT_JSON`` (type-exact; subclasses of builtins are refused); a text holding
``null`` is not remembered, since orjson writes NaN and infinities as ``null`` too.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.field import ErrorList
from apiserver.registry.strategies.statefulset_scheduling import validate_scheduling
from apiserver.registry.strategies.validmemo import ValidKeys, exact_text
from apiserver.rest.strategy import StrategyContext
from featuregates import (
    DRA_WORKLOAD_RESOURCE_CLAIMS,
    STATEFULSET_WORKLOAD_PARTITION,
    STATEFULSET_WORKLOAD_USER_MIN_COUNT,
)

#: ``spec`` fields no layer of the scheduling validation reads (see the module docstring)
_UNREAD = ("selector", "serviceName")
#: the gates the scheduling validation reads (part of every key that stands for its answer)
GATES = (DRA_WORKLOAD_RESOURCE_CLAIMS, STATEFULSET_WORKLOAD_USER_MIN_COUNT, STATEFULSET_WORKLOAD_PARTITION)

Key = tuple[bytes, bool, tuple[bool, ...]]


class SchedulingMemo:
    """The valid create-time inputs seen, keyed as the module docstring says."""

    __slots__ = ("_valid",)

    def __init__(self) -> None:
        self._valid: ValidKeys[Key] = ValidKeys()

    def validate(self, ctx: StrategyContext, sts: Obj) -> ErrorList:
        """``validate_scheduling(ctx, sts)``, from memory where the input is known valid."""
        key = _key(ctx, sts)
        if key is not None and key in self._valid:
            return []
        errs = validate_scheduling(ctx, sts)
        if not errs and key is not None:
            self._valid.add(key)
        return errs

    def clear(self) -> None:
        self._valid.clear()


def _key(ctx: StrategyContext, sts: Obj) -> Key | None:
    spec = sts.get("spec")
    meta = sts.get("metadata")
    if type(spec) is not dict or type(meta) is not dict:
        return None
    if spec.get("scheduling") is None:
        return None  # nothing to validate: no key is cheaper than one
    kept: dict[str, Any] = {k: v for k, v in spec.items() if k not in _UNREAD}
    template = kept.get("template")
    if type(template) is dict and "metadata" in template:
        kept["template"] = {k: v for k, v in template.items() if k != "metadata"}
    text = exact_text(kept)
    if text is None:
        return None
    gates = ctx.gates
    return (text, not meta.get("name"), tuple(map(gates.enabled, GATES)))


#: The memo the StatefulSet strategy validates ``spec.scheduling`` with on create.
SCHEDULING = SchedulingMemo()

__all__ = ["GATES", "SCHEDULING", "SchedulingMemo"]
