"""Strategies of gangplane's own API group ``scheduling.gangplane.dev`` (not part of Kubernetes).

``SchedulingRecord`` (``v1alpha1``): why the scheduler placed a pod or a PodGroup where it did,
attempt by attempt (see ``docs/scheduling-records.md``). The scheduler writes them; users read
them (``kubectl get schedulingrecords``, ``gangplane explain``). They are kept outside the pod
so that no annotation limit applies, and owner-referenced to the pod or PodGroup so that the
garbage collector removes them with it.
"""

from __future__ import annotations

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy
from apiserver.rest.strategy import Obj, Strategy, StrategyContext

GROUP = "scheduling.gangplane.dev"
SUBJECT_KINDS = ["Pod", "PodGroup"]


def validate_record(obj: Obj) -> ErrorList:
    """A record names its subject (kind and name) and lists its attempts."""
    errs: ErrorList = []
    subject = obj.get("subject")
    if not isinstance(subject, dict):
        return [field.required(Path("subject"))]
    kind = subject.get("kind")
    if kind not in SUBJECT_KINDS:
        errs.append(field.not_supported(Path("subject", "kind"), kind, SUBJECT_KINDS))
    if not isinstance(subject.get("name"), str) or not subject.get("name"):
        errs.append(field.required(Path("subject", "name")))
    attempts = obj.get("attempts")
    if attempts is not None and not isinstance(attempts, list):
        errs.append(field.invalid(Path("attempts"), attempts, "must be a list"))
    elif attempts:
        for i, a in enumerate(attempts):
            if not isinstance(a, dict):
                errs.append(field.invalid(Path("attempts").index(i), a, "must be an object"))
    return errs


class SchedulingRecordStrategy(UntrackedGenerationStrategy):
    """``scheduling.gangplane.dev/v1alpha1`` SchedulingRecord: a subject and its attempts."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_record(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_record(new)
        if isinstance(old.get("subject"), dict) and new.get("subject") != old.get("subject"):
            errs.append(field.invalid(Path("subject"), new.get("subject"), "field is immutable"))
        return errs


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "schedulingrecords"): SchedulingRecordStrategy(),
}
