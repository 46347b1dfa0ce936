"""KEP-5501 (``SchedulerPreEnqueuePodStatus``): a pod PreEnqueue holds says why it waits.

Upstream, a pod a PreEnqueue plugin rejects never enters a scheduling cycle, so it used to stay
``Pending`` with no condition and no Event — the state a stuck gang member was found in. With the
gate on, kube-scheduler reports a rejection that lasts: after a fixed 5 seconds with the same
message it patches ``PodScheduled=False`` with reason ``NotReadyForScheduling`` and the plugin's
message, and records an Event with that reason and message. A message that changes restarts the
delay; a pod released meanwhile reports nothing; an identical condition already on the pod is not
written again. Scheduling gates are left to the API server's ``SchedulingGated`` condition.

:class:`HeldPodReports` is the bookkeeping only (what is due now); the scheduler does the writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from apiserver.api.types import Obj

#: kube's ``PodReasonNotReadyForScheduling``
REASON_NOT_READY_FOR_SCHEDULING = "NotReadyForScheduling"
#: upstream's hard-coded delay before a rejection is reported
REPORT_DELAY = 5.0


@dataclass
class _Seen:
    message: str
    since: float
    reported: bool = False


class HeldPodReports:
    """Which held pods are due a report, given the pods held now and the time."""

    def __init__(self, delay: float = REPORT_DELAY) -> None:
        self.delay = delay
        self._seen: dict[str, _Seen] = {}

    def due(self, now: float, held: Iterable[tuple[str, Obj, str]]) -> list[tuple[Obj, str]]:
        """``held``: ``(uid, pod, message)`` of every pod PreEnqueue holds now. Returns the
        ``(pod, message)`` pairs to report: held with one message for ``delay`` seconds, not yet
        reported, and not already carrying that very condition."""
        out: list[tuple[Obj, str]] = []
        current: dict[str, _Seen] = {}
        for uid, pod, message in held:
            seen = self._seen.get(uid)
            if seen is None or seen.message != message:
                seen = _Seen(message, now)
            current[uid] = seen
            if seen.reported or now - seen.since < self.delay:
                continue
            seen.reported = True
            if not _carries(pod, message):
                out.append((pod, message))
        self._seen = current  # released or deleted pods are forgotten
        return out


def _carries(pod: Obj, message: str) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if (
            isinstance(c, dict)
            and c.get("type") == "PodScheduled"
            and c.get("reason") == REASON_NOT_READY_FOR_SCHEDULING
            and c.get("message") == message
        ):
            return True
    return False
