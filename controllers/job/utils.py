"""Pure helpers of the Job controller (kube's ``pkg/controller/job/{utils,indexed_job_utils,pod_failure_policy,success_policy}.go``).

Everything here decides from object contents and ``now`` alone: condition constructors with kube's
types, reasons and messages, pod classification, completion-index bookkeeping (``"0-2,5"``
interval strings), pod failure policy and success policy matching, and the pod-failure back-off.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from apiserver.api.types import Obj
from apiserver.batch.labels import JOB_COMPLETION_INDEX, JOB_INDEX_FAILURE_COUNT, JOB_TRACKING_FINALIZER
from apiserver.meta import (
    annotations_of,
    finalizers_of,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    parse_time,
)

# condition types
COMPLETE = "Complete"
FAILED = "Failed"
SUSPENDED = "Suspended"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"

# reasons and messages (k8s.io/api/batch/v1 constants and the controller's texts)
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT_EXCEEDED = "Job has reached the specified backoff limit"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
MESSAGE_DEADLINE_EXCEEDED = "Job was active longer than specified deadline"
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
MESSAGE_MAX_FAILED_INDEXES_EXCEEDED = "Job has exceeded the specified maximal number of failed indexes"
REASON_FAILED_INDEXES = "FailedIndexes"
MESSAGE_FAILED_INDEXES = "Job has failed indexes"
REASON_SUCCESS_POLICY = "SuccessPolicy"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
REASON_SUSPENDED = "JobSuspended"
MESSAGE_SUSPENDED = "Job suspended"
REASON_RESUMED = "JobResumed"
MESSAGE_RESUMED = "Job resumed"

#: ``DefaultJobPodFailureBackOff`` / ``MaxJobPodFailureBackOff``
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0


def spec_of(job: Obj) -> Obj:
    spec = job.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(job: Obj) -> Obj:
    status = job.get("status")
    return status if isinstance(status, dict) else {}


def _int(v: Any, default: int | None = None) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def parallelism(job: Obj) -> int:
    return _int(spec_of(job).get("parallelism"), 1) or 0


def completions(job: Obj) -> int | None:
    return _int(spec_of(job).get("completions"))


def is_indexed(job: Obj) -> bool:
    return spec_of(job).get("completionMode") == "Indexed"


def is_suspended(job: Obj) -> bool:
    return spec_of(job).get("suspend") is True


# ------------------------------------------------------------------------------ conditions


def find_condition(status: Obj, ctype: str) -> Obj | None:
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == ctype:
            return c
    return None


def condition_true(status: Obj, ctype: str) -> bool:
    c = find_condition(status, ctype)
    return c is not None and c.get("status") == "True"


def is_finished(job: Obj) -> bool:
    """``IsJobFinished``: a ``Complete`` or ``Failed`` condition is True."""
    st = status_of(job)
    return condition_true(st, COMPLETE) or condition_true(st, FAILED)


def new_condition(ctype: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": ctype,
        "status": status,
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def ensure_condition(status: Obj, cond: Obj) -> bool:
    """``ensureJobConditionStatus``: add or update ``cond``; the transition time moves only on a status change."""
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") != cond["type"]:
            continue
        if (
            c.get("status") == cond["status"]
            and c.get("reason") == cond["reason"]
            and c.get("message") == cond["message"]
        ):
            return False
        new = copy.deepcopy(cond)
        if c.get("status") == cond["status"]:
            new["lastTransitionTime"] = c.get("lastTransitionTime", cond["lastTransitionTime"])
        conds[i] = new
        return True
    conds.append(copy.deepcopy(cond))
    return True


# ------------------------------------------------------------------------------ pods


def has_tracking_finalizer(pod: Obj) -> bool:
    return JOB_TRACKING_FINALIZER in finalizers_of(pod)


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_terminal(pod: Obj) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    """``IsPodActive``: not terminal and not being deleted."""
    return not is_terminal(pod) and not is_being_deleted(pod)


def is_terminating(pod: Obj) -> bool:
    return is_being_deleted(pod) and not is_terminal(pod)


def is_ready(pod: Obj) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def is_failed(pod: Obj, job: Obj) -> bool:
    """``isPodFailed``: phase Failed, or (replacing terminating pods) deleting and not Succeeded."""
    if phase(pod) == "Failed":
        return True
    spec = spec_of(job)
    only_failed = spec.get("podFailurePolicy") is not None or spec.get("podReplacementPolicy") == "Failed"
    if only_failed:
        return False
    return is_being_deleted(pod) and phase(pod) != "Succeeded"


def completion_index(pod: Obj) -> int | None:
    """``getCompletionIndex``: the annotation (or label), a non-negative integer, else None."""
    raw = annotations_of(pod).get(JOB_COMPLETION_INDEX)
    if raw is None:
        raw = labels_of(pod).get(JOB_COMPLETION_INDEX)
    if raw is None or not str(raw).isdigit():
        return None
    return int(raw)


def valid_index(pod: Obj, job: Obj) -> int | None:
    """The pod's completion index when it lies in ``[0, completions)``."""
    idx = completion_index(pod)
    c = completions(job)
    if idx is None or c is None or idx >= c:
        return None
    return idx


def index_failure_count(pod: Obj) -> int:
    raw = annotations_of(pod).get(JOB_INDEX_FAILURE_COUNT)
    return int(raw) if raw is not None and str(raw).isdigit() else 0


def restart_count(pod: Obj) -> int:
    st = pod.get("status") or {}
    return sum(
        int(cs.get("restartCount") or 0)
        for key in ("initContainerStatuses", "containerStatuses")
        for cs in st.get(key) or []
    )


def finish_time(pod: Obj) -> float | None:
    """When the pod's containers last terminated (for the failure back-off); else its ready/creation time."""
    latest: float | None = None
    st = pod.get("status") or {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in st.get(key) or []:
            t = parse_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
            if t is not None and (latest is None or t > latest):
                latest = t
    if latest is None:
        md = pod.get("metadata") or {}
        latest = parse_time(md.get("deletionTimestamp")) or parse_time(md.get("creationTimestamp"))
    return latest


def active_pods_for_deletion(pods: Iterable[Obj]) -> list[Obj]:
    """``controller.ActivePods`` order: the pods kube deletes first come first.

    Unassigned before assigned, Pending before Running, not Ready before Ready, more restarts
    first, newer before older.
    """

    def key(p: Obj) -> tuple[int, int, int, int, float]:
        spec = p.get("spec") or {}
        created = parse_time((p.get("metadata") or {}).get("creationTimestamp")) or 0.0
        return (
            1 if spec.get("nodeName") else 0,
            {"Pending": 0, "Unknown": 1, "Running": 2}.get(phase(p), 0),
            1 if is_ready(p) else 0,
            -restart_count(p),
            -created,
        )

    return sorted(pods, key=key)


def pod_key(pod: Obj) -> str:
    return f"{namespace_of(pod)}/{name_of(pod)}"


# ------------------------------------------------------------------------------ index intervals


def parse_index_set(text: str | None, limit: int | None) -> set[int]:
    """``parseIndexesFromString``: the indexes of an interval string below ``limit``; garbage is skipped."""
    out: set[int] = set()
    if not text:
        return out
    for part in text.split(","):
        bounds = part.split("-")
        try:
            lo = int(bounds[0])
            hi = int(bounds[1]) if len(bounds) == 2 else lo
        except ValueError:
            continue
        if len(bounds) > 2:
            continue
        for i in range(lo, hi + 1):
            if limit is None or i < limit:
                out.add(i)
    return out


def format_index_set(indexes: Iterable[int]) -> str:
    """``orderedIntervals.String()``: ``"0-2,5,7,8"`` — runs of three or more as ``first-last``, a
    pair as ``a,b``, singletons alone."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if i == j:
            parts.append(str(ordered[i]))
        elif j == i + 1:
            parts.append(f"{ordered[i]},{ordered[j]}")
        else:
            parts.append(f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


# ------------------------------------------------------------------------------ pod failure policy


@dataclass(frozen=True)
class FailureMatch:
    """What ``matchPodFailurePolicy`` decided for one failed pod."""

    action: str  # "Count" | "FailJob" | "FailIndex" | "Ignore"
    message: str = ""


def _terminated_codes(pod: Obj) -> list[tuple[str, int]]:
    st = pod.get("status") or {}
    out = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in st.get(key) or []:
            term = (cs.get("state") or {}).get("terminated")
            if isinstance(term, dict):
                code = int(term.get("exitCode") or 0)
                if code != 0:
                    out.append((str(cs.get("name") or ""), code))
    return out


def match_pod_failure_policy(job: Obj, pod: Obj) -> FailureMatch:
    """``matchPodFailurePolicy``: the first rule that matches decides; no match counts the failure."""
    policy = spec_of(job).get("podFailurePolicy")
    if not isinstance(policy, dict) or phase(pod) != "Failed":
        return FailureMatch("Count")
    for i, rule in enumerate(policy.get("rules") or []):
        action = str(rule.get("action") or "")
        on_exit = rule.get("onExitCodes")
        if isinstance(on_exit, dict):
            values = set(on_exit.get("values") or [])
            want = on_exit.get("containerName")
            for cname, code in _terminated_codes(pod):
                if want is not None and want != cname:
                    continue
                hit = code in values if on_exit.get("operator") == "In" else code not in values
                if hit:
                    msg = (
                        f"Container {cname} for pod {pod_key(pod)} failed with exit code {code} "
                        f"matching {action} rule at index {i}"
                    )
                    return FailureMatch(action, msg)
        for pattern in rule.get("onPodConditions") or []:
            for c in (pod.get("status") or {}).get("conditions") or []:
                if c.get("type") == pattern.get("type") and c.get("status") == (
                    pattern.get("status") or "True"
                ):
                    msg = f"Pod {pod_key(pod)} has condition {c.get('type')} matching {action} rule at index {i}"
                    return FailureMatch(action, msg)
    return FailureMatch("Count")


# ------------------------------------------------------------------------------ success policy


def match_success_policy(job: Obj, succeeded: set[int]) -> tuple[int, str] | None:
    """``matchSuccessPolicy``: the first rule met by the succeeded indexes, as (index, message)."""
    policy = spec_of(job).get("successPolicy")
    if not isinstance(policy, dict):
        return None
    limit = completions(job)
    for i, rule in enumerate(policy.get("rules") or []):
        wanted = (
            parse_index_set(rule.get("succeededIndexes"), limit)
            if rule.get("succeededIndexes") is not None
            else None
        )
        count = _int(rule.get("succeededCount"))
        if wanted is not None:
            hit = len(wanted & succeeded)
            ok = hit >= count if count is not None else wanted <= succeeded
        else:
            ok = count is not None and len(succeeded) >= count
        if ok:
            return i, f"Matched rules at index {i}"
    return None


# ------------------------------------------------------------------------------ back-off


def failure_backoff(
    failures: int, base: float = DEFAULT_POD_FAILURE_BACKOFF, cap: float = MAX_POD_FAILURE_BACKOFF
) -> float:
    """``getRemainingTime``'s delay: ``base * 2^(failures-1)``, capped; 0 without failures."""
    if failures <= 0 or base <= 0:
        return 0.0
    return min(base * (2 ** (failures - 1)), cap)
