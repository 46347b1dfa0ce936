"""A StatefulSet create's two validations (``spec``, ``spec.scheduling``) answered by one key.

:mod:`.statefulset_spec_memo` and :mod:`.statefulset_scheduling_memo` each remember the inputs
they passed, each by its own JSON text of (most of) ``spec``: two ``orjson`` texts, two ``null``
scans and two sets of copied dicts per created set (~4 us of the bench's ~75 us create). One of
the two keys already holds what the other one reads:

* the spec memo's key is the whole ``spec`` with only the per-set strings blanked (the
  selector's ``matchLabels`` values, the template's label values, ``serviceName``), plus the
  flags of which selector values equal their template label;
* the scheduling validation reads ``spec`` without ``selector``, ``serviceName`` and the
  template's ``metadata``, whether ``metadata.name`` is empty, and three gates
  (:mod:`.statefulset_scheduling_memo`'s docstring).

So the spec key with the name's emptiness and those gates determines both answers: a set whose
combined key passed both validations before, and whose blanked strings pass their own rules
(the spec memo's hit condition), passes both now. Like the scheduling memo, only a set with a
``spec.scheduling`` gets a key. Anything else, and the first set of each key, goes through the
two memos as before, in kube's order (spec errors, then scheduling's); errors are never
remembered.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj, as_dict
from apiserver.field import ErrorList
from apiserver.registry.strategies.statefulset_scheduling_memo import GATES, SchedulingMemo
from apiserver.registry.strategies.statefulset_spec_memo import (
    StatefulSetSpecMemo,
    own_strings_valid,
    spec_key,
)
from apiserver.registry.strategies.validmemo import ValidKeys
from apiserver.rest.strategy import StrategyContext


class StatefulSetCreateMemo:
    """The sets seen valid by both validations, keyed by (spec key, name empty, gates)."""

    __slots__ = ("_scheduling", "_specs", "_valid")

    def __init__(self, specs: StatefulSetSpecMemo, scheduling: SchedulingMemo) -> None:
        self._valid: ValidKeys[Any] = ValidKeys()
        self._specs = specs
        self._scheduling = scheduling

    def validate(self, ctx: StrategyContext, sts: Obj) -> ErrorList:
        """The spec memo's answer for ``spec`` followed by the scheduling memo's for ``sts``."""
        spec = as_dict(sts.get("spec"))
        meta = sts.get("metadata")
        key = None
        if type(meta) is dict and spec.get("scheduling") is not None:
            found = spec_key(spec)
            if found is not None:
                gates = ctx.gates
                key = (found[0], not meta.get("name"), tuple(map(gates.enabled, GATES)))
                if key in self._valid and own_strings_valid(spec, found[1]):
                    return []
        errs = self._specs.validate(spec)
        errs.extend(self._scheduling.validate(ctx, sts))
        if not errs and key is not None:
            self._valid.add(key)
        return errs

    def clear(self) -> None:
        self._valid.clear()


__all__ = ["StatefulSetCreateMemo"]
