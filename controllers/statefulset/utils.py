"""Pure StatefulSet helpers (kube's ``stateful_set_utils.go``): identity, storage, health, revisions.

No I/O and no clock reads: ``now`` is passed in. Objects are plain dicts; functions that build
or fix a pod return or mutate *copies* the caller owns, never cached objects.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable

import orjson

from apiserver.api.types import Obj
from apiserver.meta import (
    annotations_of,
    condition,
    get_path,
    is_being_deleted,
    labels_of,
    name_of,
    namespace_of,
    new_controller_ref,
    owner_references,
    parse_time,
    uid_of,
)
from controllers.podutil import pod_from_template

API_VERSION = "apps/v1"
KIND = "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
RETAIN = "Retain"
DELETE = "Delete"
PARALLEL = "Parallel"
ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"

_POD_RE = re.compile(r"^(.*)-([0-9]+)$")
_MAX_INT32 = 2**31 - 1


# ---------------------------------------------------------------------------------- ordinals
@functools.lru_cache(maxsize=1 << 16)
def parent_and_ordinal(pod_name: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ``("", -1)`` for a name that is not ``<parent>-<n>`` (memoized:
    every sync asks for every pod)."""
    m = _POD_RE.match(pod_name)
    if m is None:
        return "", -1
    n = int(m.group(2))
    return m.group(1), (n if n <= _MAX_INT32 else -1)


def ordinal_of(pod: Obj) -> int:
    return parent_and_ordinal(name_of(pod))[1]


def replicas_of(sts: Obj) -> int:
    return int(get_path(sts, "spec.replicas", 1) or 0)


def start_ordinal(sts: Obj) -> int:
    """``spec.ordinals.start`` (0 when unset)."""
    return int(get_path(sts, "spec.ordinals.start", 0) or 0)


def end_ordinal(sts: Obj) -> int:
    """The last ordinal in range (inclusive); ``start - 1`` when scaled to zero."""
    return start_ordinal(sts) + replicas_of(sts) - 1


def pod_in_ordinal_range(pod: Obj, sts: Obj) -> bool:
    o = ordinal_of(pod)
    return start_ordinal(sts) <= o <= end_ordinal(sts)


def pod_name(sts: Obj, ordinal: int) -> str:
    return f"{name_of(sts)}-{ordinal}"


def claim_name(sts: Obj, template_name: str, ordinal: int) -> str:
    """``<claim>-<sts>-<ordinal>``."""
    return f"{template_name}-{name_of(sts)}-{ordinal}"


def is_member_of(sts: Obj, pod: Obj) -> bool:
    return parent_and_ordinal(name_of(pod))[0] == name_of(sts)


# ---------------------------------------------------------------------------------- identity
def identity_matches(sts: Obj, pod: Obj) -> bool:
    parent, ordinal = parent_and_ordinal(name_of(pod))
    return (
        ordinal >= 0
        and parent == name_of(sts)
        and name_of(pod) == pod_name(sts, ordinal)
        and namespace_of(pod) == namespace_of(sts)
        and labels_of(pod).get(POD_NAME_LABEL) == name_of(pod)
    )


def update_identity(sts: Obj, pod: Obj) -> None:
    """Name, namespace and the pod-name / pod-index labels for the pod's ordinal."""
    ordinal = ordinal_of(pod)
    md = pod.setdefault("metadata", {})
    md["name"] = pod_name(sts, ordinal)
    md["namespace"] = namespace_of(sts)
    labels = md.get("labels") or {}
    labels[POD_NAME_LABEL] = md["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)
    md["labels"] = labels


def init_identity(sts: Obj, pod: Obj) -> None:
    """Identity plus the fields only set at creation: hostname and subdomain."""
    update_identity(sts, pod)
    spec = pod.setdefault("spec", {})
    spec["hostname"] = name_of(pod)
    service = get_path(sts, "spec.serviceName", "")
    if service:
        spec["subdomain"] = service


# ---------------------------------------------------------------------------------- storage
def claim_templates(sts: Obj) -> list[Obj]:
    """``spec.volumeClaimTemplates`` (its objects). Read a dozen times per created pod (stamping,
    claims, retention, storage checks), so without :func:`get_path`'s parsing of the path: most
    sets have none."""
    spec = sts.get("spec")
    templates = spec.get("volumeClaimTemplates") if isinstance(spec, dict) else None
    if not templates:
        return []
    return [t for t in templates if isinstance(t, dict)]


def claims_for(sts: Obj, ordinal: int) -> list[tuple[str, Obj]]:
    """``getPersistentVolumeClaims``: (template name, claim to create) in template order."""
    out: list[tuple[str, Obj]] = []
    match_labels = get_path(sts, "spec.selector.matchLabels", {}) or {}
    for tmpl in claim_templates(sts):
        claim = copy.deepcopy(tmpl)
        tname = name_of(tmpl)
        md = claim.setdefault("metadata", {})
        md["name"] = claim_name(sts, tname, ordinal)
        md["namespace"] = namespace_of(sts)
        labels = dict(md.get("labels") or {})
        labels.update(match_labels)
        md["labels"] = labels
        claim["apiVersion"] = "v1"
        claim["kind"] = "PersistentVolumeClaim"
        claim.pop("status", None)
        out.append((tname, claim))
    return out


def storage_matches(sts: Obj, pod: Obj) -> bool:
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in get_path(pod, "spec.volumes", []) or []}
    for tmpl in claim_templates(sts):
        v = volumes.get(name_of(tmpl))
        pvc = (v or {}).get("persistentVolumeClaim")
        if not pvc or pvc.get("claimName") != claim_name(sts, name_of(tmpl), ordinal):
            return False
    return True


def update_storage(sts: Obj, pod: Obj) -> None:
    """Point the template-named volumes at the pod's claims, keep the pod's other volumes."""
    ordinal = ordinal_of(pod)
    claims = claims_for(sts, ordinal)
    names = {t for t, _ in claims}
    spec = pod.setdefault("spec", {})
    current = spec.get("volumes") or []
    volumes = [{"name": t, "persistentVolumeClaim": {"claimName": name_of(c)}} for t, c in claims] + [
        v for v in current if v.get("name") not in names
    ]
    if volumes or "volumes" in spec:
        spec["volumes"] = volumes


# ---------------------------------------------------------------------------------- pods
def new_pod(sts: Obj, template: Obj, ordinal: int) -> Obj:
    """``newStatefulSetPod`` for ``template`` (the current or the update revision's).

    ``GetPodFromTemplate`` gives it ``generateName: <set>-`` as it gives every controller's pods;
    the name set next wins, so only the field shows it (as on a real cluster).
    """
    pod = pod_from_template(sts, template, API_VERSION, KIND)
    pod["metadata"]["name"] = pod_name(sts, ordinal)
    init_identity(sts, pod)
    update_storage(sts, pod)
    return pod


def at_current_revision(sts: Obj, ordinal: int) -> bool:
    """``newVersionedStatefulSetPod``'s choice: ordinals below the partition (or, without a
    rollingUpdate block, below ``status.currentReplicas``) stay at the current revision."""
    strategy = get_path(sts, "spec.updateStrategy", {}) or {}
    ru = strategy.get("rollingUpdate")
    start = start_ordinal(sts)
    return strategy.get("type", ROLLING_UPDATE) == ROLLING_UPDATE and (
        (ru is None and ordinal < start + int(get_path(sts, "status.currentReplicas", 0) or 0))
        or (ru is not None and ordinal < start + int(ru.get("partition") or 0))
    )


def new_versioned_pod(
    sts: Obj, current_template: Obj, update_template: Obj, current_rev: str, update_rev: str, ordinal: int
) -> Obj:
    """``newVersionedStatefulSetPod``: ordinals below the partition stay at the current revision."""
    if at_current_revision(sts, ordinal):
        pod = new_pod(sts, current_template, ordinal)
        set_revision(pod, current_rev)
        return pod
    pod = new_pod(sts, update_template, ordinal)
    set_revision(pod, update_rev)
    return pod


def pod_prototype(sts: Obj, template: Obj, revision: str) -> Obj:
    """What :func:`new_pod` plus :func:`set_revision` build for every ordinal alike, once.

    The per-ordinal fields (name, the pod-name / pod-index labels, hostname) hold placeholders
    at the very positions :func:`new_pod` inserts them, so :func:`stamp_pod` gives the same
    object, key order included. Shared: never handed out, only copied by :func:`stamp_pod`.
    """
    pod = pod_from_template(sts, template, API_VERSION, KIND)
    md = pod["metadata"]
    md["name"] = ""
    md["namespace"] = namespace_of(sts)
    labels = md.get("labels") or {}
    labels[POD_NAME_LABEL] = ""
    labels[POD_INDEX_LABEL] = ""
    md["labels"] = labels
    spec = pod.setdefault("spec", {})
    spec["hostname"] = ""
    service = get_path(sts, "spec.serviceName", "")
    if service:
        spec["subdomain"] = service
    set_revision(pod, revision)
    return pod


def stamp_pod(sts: Obj, prototype: Obj, ordinal: int) -> Obj:
    """The pod of ``ordinal`` from its revision's :func:`pod_prototype`: a copy (JSON values, an
    orjson round trip) with the ordinal's identity and, with claim templates, its volumes."""
    pod = _json_copy(prototype)
    name = pod_name(sts, ordinal)
    md = pod["metadata"]
    md["name"] = name
    labels = md["labels"]
    labels[POD_NAME_LABEL] = name
    labels[POD_INDEX_LABEL] = str(ordinal)
    pod["spec"]["hostname"] = name
    if claim_templates(sts):
        update_storage(sts, pod)
    return pod


def revision_of(pod: Obj) -> str:
    return labels_of(pod).get(REVISION_LABEL, "")


def set_revision(pod: Obj, revision: str) -> None:
    pod.setdefault("metadata", {}).setdefault("labels", {})[REVISION_LABEL] = revision


def phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_created(pod: Obj) -> bool:
    """The pod exists in the API (the server assigned a uid); kube tests ``status.phase != ""``."""
    return bool(uid_of(pod))


def is_pending(pod: Obj) -> bool:
    return phase(pod) == "Pending"


def is_failed(pod: Obj) -> bool:
    return phase(pod) == "Failed"


def is_succeeded(pod: Obj) -> bool:
    return phase(pod) == "Succeeded"


def is_terminating(pod: Obj) -> bool:
    return is_being_deleted(pod)


def is_pod_ready(pod: Obj) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def is_running_and_ready(pod: Obj) -> bool:
    return phase(pod) == "Running" and is_pod_ready(pod)


def is_running_and_available(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """``podutil.IsPodAvailable``: Ready for longer than minReadySeconds (strictly) at ``now``."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    ready_since = parse_time((condition(pod, "Ready") or {}).get("lastTransitionTime"))
    return ready_since is not None and ready_since + min_ready_seconds < now


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)


def is_unavailable(pod: Obj, min_ready_seconds: int, now: float) -> bool:
    return not is_running_and_available(pod, min_ready_seconds, now) or is_terminating(pod)


def allows_burst(sts: Obj) -> bool:
    return get_path(sts, "spec.podManagementPolicy", "OrderedReady") == PARALLEL


def min_ready_seconds(sts: Obj) -> int:
    return int(get_path(sts, "spec.minReadySeconds", 0) or 0)


def max_unavailable(sts: Obj) -> int:
    """``getStatefulSetMaxUnavailable``: int or percent of replicas rounded down, at least 1."""
    v = get_path(sts, "spec.updateStrategy.rollingUpdate.maxUnavailable", 1)
    if v is None:
        v = 1
    if isinstance(v, str) and v.endswith("%"):
        n = int(v[:-1]) * replicas_of(sts) // 100
    else:
        n = int(v)
    return max(n, 1)


# ---------------------------------------------------------------------------------- revisions
def _json_copy(value: Obj) -> Obj:
    """An independent copy of JSON values (what an API object holds): an orjson round trip,
    several times faster than ``copy.deepcopy``."""
    out: Obj = orjson.loads(orjson.dumps(value))
    return out


def revision_data(sts: Obj) -> Obj:
    """``getPatch``: the template, marked ``$patch: replace``, as kube stores it in a revision."""
    template = _json_copy(get_path(sts, "spec.template", {}) or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_of_revision(revision: Obj) -> Obj:
    """``ApplyRevision`` for a StatefulSet: the replaced template, without the directive."""
    template = _json_copy(get_path(revision, "data.spec.template", {}) or {})
    template.pop("$patch", None)
    return template


def revision_template_view(revision: Obj) -> Obj:
    """The revision's template as stored, *not* copied (``$patch`` still in it), for readers that
    take only its ``metadata`` and copy its ``spec`` (:func:`pod_prototype`): the same pod as from
    :func:`template_of_revision`, without a copy of the whole template per revision."""
    template: Obj = get_path(revision, "data.spec.template", {}) or {}
    return template


def revision_annotations(sts: Obj) -> dict[str, str]:
    return dict(annotations_of(sts))


# ---------------------------------------------------------------------------------- status
STATUS_COUNTERS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas")


def count_pods(
    pods: Iterable[Obj], min_ready: int, now: float, current_rev: str, update_rev: str
) -> dict[str, int]:
    """``computeReplicaStatus`` over the pods that exist."""
    out = dict.fromkeys(STATUS_COUNTERS, 0)
    for pod in pods:
        if not is_created(pod):
            continue
        out["replicas"] += 1
        if is_running_and_ready(pod):
            out["readyReplicas"] += 1
            if is_running_and_available(pod, min_ready, now):
                out["availableReplicas"] += 1
        if not is_terminating(pod):
            rev = revision_of(pod)
            if rev == current_rev:
                out["currentReplicas"] += 1
            if rev == update_rev:
                out["updatedReplicas"] += 1
    return out


def complete_rolling_update(sts: Obj, status: Obj) -> None:
    """Once every replica is updated and ready, the update revision becomes the current one."""
    complete_rolling_update_of(
        get_path(sts, "spec.updateStrategy.type", ROLLING_UPDATE), replicas_of(sts), status
    )


def complete_rolling_update_of(strategy: str, replicas: int, status: Obj) -> None:
    """:func:`complete_rolling_update` for a set of this update strategy type and replica count."""
    if (
        strategy == ROLLING_UPDATE
        and status.get("updatedReplicas") == replicas
        and status.get("readyReplicas") == replicas
        and status.get("replicas") == replicas
    ):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


_STATUS_KEYS = (*STATUS_COUNTERS, "currentRevision", "updateRevision", "collisionCount")


def inconsistent_status(sts: Obj, status: Obj) -> bool:
    """Whether ``status`` differs from what the object holds (``inconsistentStatus``)."""
    old = sts.get("status") or {}
    if int(status.get("observedGeneration") or 0) > int(old.get("observedGeneration") or 0):
        return True
    # conditions are compared only when this sync computes some (gangplane's
    # StatefulSetWorkloadStatusCondition); otherwise the write decision is upstream's
    if "conditions" in status and (old.get("conditions") or []) != status["conditions"]:
        return True
    return any((old.get(k) or 0) != (status.get(k) or 0) for k in _STATUS_KEYS)


# ---------------------------------------------------------------------------------- PVC retention
def retention_policy(sts: Obj) -> tuple[str, str]:
    """(whenDeleted, whenScaled), Retain when unset."""
    p = get_path(sts, "spec.persistentVolumeClaimRetentionPolicy", {}) or {}
    return p.get("whenDeleted") or RETAIN, p.get("whenScaled") or RETAIN


def _matches_ref(ref: Obj, obj: Obj, api_version: str, kind: str) -> bool:
    return (
        ref.get("apiVersion") == api_version and ref.get("kind") == kind and ref.get("name") == name_of(obj)
    )


def has_owner_ref(target: Obj, owner: Obj) -> bool:
    uid = uid_of(owner)
    return any(r.get("uid") == uid for r in owner_references(target))


def has_stale_owner_ref(target: Obj, owner: Obj, api_version: str, kind: str) -> bool:
    """A reference that names ``owner`` but carries another uid (a previous incarnation)."""
    for r in owner_references(target):
        if _matches_ref(r, owner, api_version, kind):
            return r.get("uid") != uid_of(owner)
    return False


def has_unexpected_controller(claim: Obj, sts: Obj, pod: Obj) -> bool:
    if retention_policy(sts) == (RETAIN, RETAIN):
        return False
    for r in owner_references(claim):
        if _matches_ref(r, sts, API_VERSION, KIND):
            if r.get("uid") != uid_of(sts):
                return True
            continue
        if _matches_ref(r, pod, "v1", "Pod"):
            if r.get("uid") != uid_of(pod):
                return True
            continue
        if r.get("controller"):
            return True
    return False


def _has_non_controller_owner(claim: Obj, sts: Obj, pod: Obj) -> bool:
    uids = {uid_of(sts), uid_of(pod)}
    return any(r.get("uid") in uids and not r.get("controller") for r in owner_references(claim))


def claim_owner_up_to_date(claim: Obj, sts: Obj, pod: Obj) -> bool:
    """``isClaimOwnerUpToDate``: the claim's refs follow the retention policy (or must not be touched)."""
    if has_stale_owner_ref(claim, sts, API_VERSION, KIND) or has_stale_owner_ref(claim, pod, "v1", "Pod"):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (has_owner_ref(claim, sts) or has_owner_ref(claim, pod))
    if _has_non_controller_owner(claim, sts, pod):
        return False
    when_deleted, when_scaled = retention_policy(sts)
    set_ref, pod_ref = has_owner_ref(claim, sts), has_owner_ref(claim, pod)
    scaled_down = not pod_in_ordinal_range(pod, sts)
    if when_scaled == DELETE and when_deleted == DELETE:
        return set_ref != scaled_down and pod_ref == scaled_down
    if when_scaled == DELETE:
        return not set_ref and pod_ref == scaled_down
    if when_deleted == DELETE:
        return set_ref and not pod_ref
    return not set_ref and not pod_ref


def claim_owner_refs(claim: Obj, sts: Obj, pod: Obj) -> list[Obj]:
    """``updateClaimOwnerRefForSetAndPod``: the claim's refs rewritten for the retention policy.

    whenDeleted=Delete -> controller ref to the StatefulSet (while the pod is in range);
    whenScaled=Delete -> controller ref to the pod once its ordinal is out of range.
    """
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [
        r
        for r in owner_references(claim)
        if not (_matches_ref(r, sts, API_VERSION, KIND) or _matches_ref(r, pod, "v1", "Pod"))
    ]
    if unexpected:
        return refs
    when_deleted, when_scaled = retention_policy(sts)
    scaled_down = not pod_in_ordinal_range(pod, sts)

    def add(owner: Obj, api_version: str, kind: str) -> None:
        if not any(r.get("uid") == uid_of(owner) for r in refs):
            refs.append(new_controller_ref(owner, api_version, kind))

    if when_scaled == DELETE and scaled_down:
        add(pod, "v1", "Pod")
    if when_deleted == DELETE and (when_scaled != DELETE or not scaled_down):
        add(sts, API_VERSION, KIND)
    return refs
