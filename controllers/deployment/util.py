"""Pure Deployment helpers (kube's ``pkg/controller/deployment/util/deployment_util.go``).

Revisions live in ReplicaSet annotations: ``deployment.kubernetes.io/revision`` (the newest one is
the Deployment's revision), ``revision-history`` (earlier numbers of a ReplicaSet that was rolled
back to), ``desired-replicas`` and ``max-replicas`` (the Deployment's size and size+surge when the
ReplicaSet was last scaled, used for proportional scaling). The new ReplicaSet is the one whose
template equals the Deployment's ignoring the ``pod-template-hash`` label.

The hash is FNV-1a (32 bit) over the template's canonical JSON bytes plus the collision count,
encoded with ``rand.SafeEncodeString`` like kube's; kube hashes Go's ``spew`` dump of the struct,
which has no Python equivalent, so the names have kube's shape but not its exact characters.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from apiserver.api.types import Obj
from apiserver.meta import annotations_of, condition, name_of, parse_time, rfc3339
from controllers.history import raw_data, safe_encode

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
POD_TEMPLATE_HASH = "pod-template-hash"
MAX_REV_HISTORY_CHARS = 2000
MAX_INT32 = 2**31 - 1

RECREATE = "Recreate"
ROLLING_UPDATE = "RollingUpdate"

# Condition types and reasons (kube's deploymentutil constants).
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
MIN_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MIN_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"
REPLICASET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"

_SKIP_COPY = frozenset(
    {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO}
)


# ---------------------------------------------------------------------------------- spec access
def spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def replicas(obj: Obj | None) -> int:
    """``*spec.replicas`` (0 for a missing ReplicaSet)."""
    if obj is None:
        return 0
    v = spec(obj).get("replicas")
    return 1 if v is None else int(v)


def status_int(obj: Obj | None, key: str) -> int:
    if obj is None:
        return 0
    return int((obj.get("status") or {}).get(key) or 0)


def strategy_type(d: Obj) -> str:
    return (spec(d).get("strategy") or {}).get("type") or ROLLING_UPDATE


def is_rolling_update(d: Obj) -> bool:
    return strategy_type(d) == ROLLING_UPDATE


def scaled_value(v: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.endswith("%"):
        try:
            pct = int(v[:-1])
        except ValueError:
            return 0
        value = pct * total / 100
        return int(math.ceil(value)) if round_up else int(math.floor(value))
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return 0
    return 0


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable down; both zero means one unavailable."""
    surge = scaled_value(max_surge if max_surge is not None else 0, desired, True)
    unavailable = scaled_value(max_unavailable if max_unavailable is not None else 0, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: Obj) -> Obj:
    return (spec(d).get("strategy") or {}).get("rollingUpdate") or {}


def max_unavailable(d: Obj) -> int:
    """``MaxUnavailable``: 0 for Recreate or zero replicas; at most ``replicas``."""
    want = replicas(d)
    if not is_rolling_update(d) or want == 0:
        return 0
    ru = _rolling(d)
    _, unavailable = resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), want)
    return min(unavailable, want)


def max_surge(d: Obj) -> int:
    if not is_rolling_update(d):
        return 0
    ru = _rolling(d)
    surge, _ = resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), replicas(d))
    return surge


def has_progress_deadline(d: Obj) -> bool:
    v = spec(d).get("progressDeadlineSeconds")
    return v is not None and int(v) != MAX_INT32


def has_revision_history_limit(d: Obj) -> bool:
    v = spec(d).get("revisionHistoryLimit")
    return v is not None and int(v) != MAX_INT32


# ---------------------------------------------------------------------------------- hashing & templates
def compute_hash(template: Obj, collision_count: int | None) -> str:
    """``controller.ComputeHash``: FNV-1a 32 over the template (plus collision count), safe-encoded."""
    data = raw_data(template)
    if collision_count is not None:
        data += int(collision_count).to_bytes(4, "little", signed=False)
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


def _without_hash(template: Obj) -> Obj:
    t = copy.deepcopy(template or {})
    labels = (t.get("metadata") or {}).get("labels")
    if labels is not None:
        labels.pop(POD_TEMPLATE_HASH, None)
        if not labels:
            t["metadata"].pop("labels")
    return t


def equal_ignore_hash(a: Obj, b: Obj) -> bool:
    """``EqualIgnoreHash``: templates equal once the pod-template-hash label is dropped."""
    return _without_hash(a) == _without_hash(b)


def creation_key(rs: Obj) -> tuple[str, str]:
    """``ReplicaSetsByCreationTimestamp``: creation time, then name."""
    return ((rs.get("metadata") or {}).get("creationTimestamp") or "", name_of(rs))


def find_new_replicaset(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """``FindNewReplicaSet``: the oldest ReplicaSet whose template equals the Deployment's."""
    template = spec(d).get("template") or {}
    for rs in sorted(rs_list, key=creation_key):
        if equal_ignore_hash(spec(rs).get("template") or {}, template):
            return rs
    return None


def find_old_replicasets(d: Obj, rs_list: list[Obj], new_rs: Obj | None) -> list[Obj]:
    return [rs for rs in rs_list if new_rs is None or rs["metadata"]["uid"] != new_rs["metadata"]["uid"]]


def filter_active(rs_list: list[Obj | None]) -> list[Obj]:
    """``FilterActiveReplicaSets``: ReplicaSets with spec.replicas > 0."""
    return [rs for rs in rs_list if rs is not None and replicas(rs) > 0]


def replica_count(rs_list: list[Obj | None]) -> int:
    """``GetReplicaCountForReplicaSets``: the sum of spec.replicas."""
    return sum(replicas(rs) for rs in rs_list if rs is not None)


def actual_replica_count(rs_list: list[Obj | None]) -> int:
    return sum(status_int(rs, "replicas") for rs in rs_list if rs is not None)


def ready_replica_count(rs_list: list[Obj | None]) -> int:
    return sum(status_int(rs, "readyReplicas") for rs in rs_list if rs is not None)


def available_replica_count(rs_list: list[Obj | None]) -> int:
    return sum(status_int(rs, "availableReplicas") for rs in rs_list if rs is not None)


def terminating_replica_count(rs_list: list[Obj | None]) -> int:
    return sum(status_int(rs, "terminatingReplicas") for rs in rs_list if rs is not None)


# ---------------------------------------------------------------------------------- revisions
def revision_of(obj: Obj | None) -> int:
    if obj is None:
        return 0
    try:
        return int(annotations_of(obj).get(REVISION, "0") or 0)
    except ValueError:
        return 0


def revision_annotation(rs: Obj) -> str:
    return annotations_of(rs).get(REVISION, "")


def max_revision(rs_list: list[Obj]) -> int:
    return max((revision_of(rs) for rs in rs_list), default=0)


def copy_deployment_annotations(d: Obj, rs: Obj) -> bool:
    """``copyDeploymentAnnotationsToReplicaSet``: every annotation but the controller's own."""
    changed = False
    rs_ann = rs["metadata"].setdefault("annotations", {})
    for k, v in annotations_of(d).items():
        if k in _SKIP_COPY or rs_ann.get(k) == v:
            continue
        rs_ann[k] = v
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_replicas))):
        if ann.get(k) != v:
            ann[k] = v
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = annotations_of(rs)
    return ann.get(DESIRED_REPLICAS) != str(desired) or ann.get(MAX_REPLICAS) != str(max_replicas)


def set_new_replicaset_annotations(d: Obj, rs: Obj, new_revision: str, exists: bool) -> bool:
    """``SetNewReplicaSetAnnotations``: copy annotations, bump the revision, keep the history."""
    changed = copy_deployment_annotations(d, rs)
    ann = rs["metadata"].setdefault("annotations", {})
    had = REVISION in ann
    old_revision = ann.get(REVISION, "")
    try:
        old_int = int(old_revision) if old_revision else 0
    except ValueError:
        return False
    new_int = int(new_revision)
    if old_int < new_int:
        ann[REVISION] = new_revision
        changed = True
    if had and old_int < new_int:
        history = ann.get(REVISION_HISTORY, "")
        old_revisions = history.split(",")
        if not old_revisions[0]:
            ann[REVISION_HISTORY] = old_revision
        else:
            total = len(history) + len(old_revision) + 1
            start = 0
            while total > MAX_REV_HISTORY_CHARS and start < len(old_revisions):
                total -= len(old_revisions[start]) + 1
                start += 1
            if total <= MAX_REV_HISTORY_CHARS:
                ann[REVISION_HISTORY] = ",".join([*old_revisions[start:], old_revision])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def desired_replicas_annotation(rs: Obj) -> int | None:
    raw = annotations_of(rs).get(DESIRED_REPLICAS)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def max_replicas_annotation(rs: Obj) -> int | None:
    raw = annotations_of(rs).get(MAX_REPLICAS)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def set_deployment_revision(d: Obj, revision: str) -> bool:
    ann = d["metadata"].setdefault("annotations", {})
    if ann.get(REVISION) != revision:
        ann[REVISION] = revision
        return True
    return False


# ---------------------------------------------------------------------------------- scaling math
def new_rs_new_replicas(d: Obj, all_rs: list[Obj | None], new_rs: Obj) -> int:
    """``NewRSNewReplicas``: how far the new ReplicaSet may grow now."""
    if is_rolling_update(d):
        surge = scaled_value(_rolling(d).get("maxSurge"), replicas(d), True)
        current = replica_count(all_rs)
        max_total = replicas(d) + surge
        if current >= max_total:
            return replicas(new_rs)
        scale_up = min(max_total - current, replicas(d) - replicas(new_rs))
        return replicas(new_rs) + scale_up
    return replicas(d)


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = desired_replicas_annotation(rs)
    if desired is None:
        return False
    return (
        replicas(rs) == replicas(d)
        and desired == replicas(d)
        and status_int(rs, "availableReplicas") == replicas(d)
    )


def find_active_or_latest(new_rs: Obj | None, old_rs: list[Obj]) -> Obj | None:
    """``FindActiveOrLatest``: the only active ReplicaSet, or the newest when none is active."""
    if new_rs is None and not old_rs:
        return None
    olds = sorted(old_rs, key=creation_key, reverse=True)
    active = filter_active([*olds, new_rs])
    if not active:
        return new_rs if new_rs is not None else olds[0]
    if len(active) == 1:
        return active[0]
    return None


def _round_half_away(x: float) -> int:
    """``integer.RoundToInt32``: math.Round (half away from zero)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def replicaset_fraction(rs: Obj, d: Obj) -> int:
    """``getReplicaSetFraction``: this ReplicaSet's share of the new size, minus its size."""
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_max = replicas(d) + max_surge(d)
    annotated = max_replicas_annotation(rs)
    if not annotated:
        annotated = status_int(d, "replicas")
    if not annotated:
        return 0
    new_size = replicas(rs) * deployment_max / annotated
    return _round_half_away(new_size) - replicas(rs)


def proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """``GetProportion``."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replicaset_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def sort_by_size_newer(rs_list: list[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeNewer``: larger first, then newer first."""
    return sorted(sorted(rs_list, key=creation_key, reverse=True), key=lambda rs: -replicas(rs))


def sort_by_size_older(rs_list: list[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeOlder``: larger first, then older first."""
    return sorted(rs_list, key=lambda rs: (-replicas(rs), *creation_key(rs)))


# ---------------------------------------------------------------------------------- conditions
def new_condition(ctype: str, status: str, reason: str, message: str, now: float) -> Obj:
    t = rfc3339(now)
    return {
        "type": ctype,
        "status": status,
        "lastUpdateTime": t,
        "lastTransitionTime": t,
        "reason": reason,
        "message": message,
    }


def get_condition(status: Obj, ctype: str) -> Obj | None:
    for c in status.get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def set_condition(status: Obj, cond: Obj) -> None:
    """``SetDeploymentCondition``: same status and reason => no change; same status keeps the transition time."""
    current = get_condition(status, cond["type"])
    if (
        current is not None
        and current.get("status") == cond["status"]
        and current.get("reason") == cond["reason"]
    ):
        return
    if current is not None and current.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, cond["type"])
    status.setdefault("conditions", []).append(cond)


def remove_condition(status: Obj, ctype: str) -> None:
    conds = [c for c in status.get("conditions") or [] if c.get("type") != ctype]
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)


def deployment_complete(d: Obj, status: Obj) -> bool:
    """``DeploymentComplete``: every replica updated and available, the latest generation observed."""
    want = replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == want
        and int(status.get("replicas") or 0) == want
        and int(status.get("availableReplicas") or 0) == want
        and int(status.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0)
    )


def deployment_progressing(d: Obj, new_status: Obj) -> bool:
    """``DeploymentProgressing``: more updated/ready/available replicas, or fewer old ones."""
    old = d.get("status") or {}

    def g(s: Obj, k: str) -> int:
        return int(s.get(k) or 0)

    old_old = g(old, "replicas") - g(old, "updatedReplicas")
    new_old = g(new_status, "replicas") - g(new_status, "updatedReplicas")
    return (
        g(new_status, "updatedReplicas") > g(old, "updatedReplicas")
        or new_old < old_old
        or g(new_status, "readyReplicas") > g(old, "readyReplicas")
        or g(new_status, "availableReplicas") > g(old, "availableReplicas")
    )


def deployment_timed_out(d: Obj, status: Obj, now: float) -> bool:
    """``DeploymentTimedOut``: no progress for progressDeadlineSeconds since the last update."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, PROGRESSING)
    if cond is None:
        return False
    if cond.get("reason") == NEW_RS_AVAILABLE:
        return False
    if cond.get("reason") == TIMED_OUT:
        return True
    since = parse_time(cond.get("lastUpdateTime"))
    if since is None:
        return False
    return since + int(spec(d)["progressDeadlineSeconds"]) < now


def is_paused_condition(d: Obj) -> bool:
    c = condition(d, PROGRESSING)
    return c is not None and c.get("reason") == PAUSED
