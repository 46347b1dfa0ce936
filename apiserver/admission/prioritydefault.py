"""Priority admission's global default PriorityClass, looked for once per state of the classes.

Every pod and PodGroup created without ``priorityClassName`` takes the lowest-valued
PriorityClass marked ``globalDefault`` (kube's ``getDefaultPriorityClass``). Finding it listed
every stored PriorityClass on every such create (~3 µs per pod; gangs-1000x3 creates four such
objects per set). The answer is a function of the stored classes alone, and a stored record is
immutable (an update or delete replaces or removes it): so where the storage lends its live
dict of the classes (:meth:`apiserver.registry.generic.GenericStore.live_records`), the answer
is kept with the records it came from, and given again while the dict holds exactly those
records, in the same order, by identity. Anything else (another record, one more or fewer, no
dict to look at) looks again, as before.
"""

from __future__ import annotations

import operator
from typing import Any

from apiserver.api.types import Obj

GROUP = "scheduling.k8s.io"
PLURAL = "priorityclasses"


def lowest_global_default(classes: list[Obj]) -> Obj | None:
    """The ``globalDefault`` class of the lowest value, the first in ``classes``' order on a tie."""
    default = None
    for pc in classes:
        if pc.get("globalDefault") and (
            default is None or int(pc.get("value", 0)) < int(default.get("value", 0))
        ):
            default = pc
    return default


class GlobalDefault:
    """The global default of the last state of the classes it was asked about (one per plugin)."""

    __slots__ = ("_default", "_records")

    def __init__(self) -> None:
        #: the records the answer came from, in the storage's dict order (held: their ids stay theirs)
        self._records: tuple[Any, ...] | None = None
        self._default: Obj | None = None

    def find(self, api: Any) -> Obj | None:
        """The global default PriorityClass as stored now (read only), or None."""
        live = getattr(api, "live_records", None)
        records = live(GROUP, PLURAL) if live is not None else None
        if records is None:
            return lowest_global_default(api.peek_all(GROUP, PLURAL))
        now = tuple(records.values())
        held = self._records
        if held is not None and len(held) == len(now) and all(map(operator.is_, held, now)):
            return self._default
        default = lowest_global_default(api.peek_all(GROUP, PLURAL))  # read only
        self._records, self._default = now, default
        return default


__all__ = ["GlobalDefault", "lowest_global_default"]
