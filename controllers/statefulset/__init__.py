"""The StatefulSet controller: wiring (``controller``), algorithm (``control``), writer
(``pod_control``), pure helpers (``utils``), per-pod-version facts (``podfacts``) and the KEP-6277
extension point (``hooks``)."""

from controllers.statefulset.controller import NAME, StatefulSetController
from controllers.statefulset.hooks import PROCEED, NoopSchedulingHook, SchedulingHook, SchedulingPlan

__all__ = [
    "NAME",
    "PROCEED",
    "NoopSchedulingHook",
    "SchedulingHook",
    "SchedulingPlan",
    "StatefulSetController",
]
