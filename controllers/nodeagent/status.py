"""Pure builders for the status a kubelet writes: pods (containers, conditions) and nodes.

Everything here maps (object, facts, ``now``) to a new ``status`` dict and never reads a clock
or the API, so the stages in :mod:`controllers.nodeagent.stages` stay data and the golden
shapes are unit-testable. Field values follow what kubelet 1.37 reports:

* pod conditions in kubelet's order ``PodReadyToStartContainers, Initialized, Ready,
  ContainersReady, PodScheduled``, conditions owned by others (``DisruptionTarget``…) kept in
  front; ``lastTransitionTime`` survives when a condition's status does not change;
* reasons ``ContainersNotReady`` (``containers with unready status: [a b]``),
  ``PodCompleted`` / ``PodFailed`` for terminal pods; rejected pods carry only phase, reason
  and ``Pod was rejected: …``;
* container IDs, image IDs, node UUIDs are hashes of stable inputs, so reruns match.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from apiserver.api.types import Obj
from apiserver.meta import rfc3339

KUBELET_VERSION = "v1.37.0"
CONTAINER_RUNTIME_VERSION = "containerd://2.1.4"
OS_IMAGE = "Ubuntu 24.04.2 LTS"
KERNEL_VERSION = "6.8.0-1028-gangplane"
KUBELET_PORT = 10250

KUBELET_POD_CONDITIONS = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
)
NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


# ============================================================================ images & ids


@lru_cache(maxsize=4096)
def normalize_image(image: str) -> str:
    """How containerd reports an image reference: registry and ``library/`` made explicit.

    Memoised: a cluster runs few distinct images, and every container status written names one.

    ``nginx`` -> ``docker.io/library/nginx:latest``; ``my-org/app:v1`` -> ``docker.io/my-org/app:v1``;
    ``registry.k8s.io/pause:3.10`` unchanged.
    """
    if not image:
        return image
    name, at, digest = image.partition("@")
    first, slash, rest = name.partition("/")
    if not slash:
        name = f"docker.io/library/{name}"
    elif not ("." in first or ":" in first or first == "localhost"):
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if not at and ":" not in last:
        name += ":latest"
    return f"{name}@{digest}" if at else name


@lru_cache(maxsize=4096)
def image_id(image: str) -> str:
    """``repo@sha256:…``: the digest given in the reference, else a stable made-up one (memoised
    per image: its hash is the same for every container that runs it)."""
    norm = normalize_image(image)
    if "@" in norm:
        return norm
    repo = norm.rsplit(":", 1)[0] if ":" in norm.rsplit("/", 1)[-1] else norm
    return f"{repo}@sha256:{_sha('image', norm)}"


def container_id(pod_uid: str, name: str, restart_count: int) -> str:
    """A new ID per (pod, container, restart): a restarted container is a new container."""
    return "containerd://" + _sha(pod_uid, name, str(restart_count))


# ============================================================================ pod status


@dataclass(frozen=True, slots=True)
class ContainerFate:
    """What every regular container of the pod is doing right now (pods behave as a unit).

    ``state``: ``running`` | ``waiting`` (CrashLoopBackOff) | ``terminated``.
    """

    state: str
    ready: bool = False
    started_at: float = 0.0
    restart_count: int = 0
    exit_code: int = 0
    finished_at: float = 0.0
    #: previous run for ``lastState.terminated`` (exit code, started, finished)
    last_exit: tuple[int, float, float] | None = None
    backoff: float = 0.0


def _spec(pod: Obj) -> Obj:
    return pod.get("spec") or {}


def _md(pod: Obj) -> Obj:
    return pod.get("metadata") or {}


def _names(containers: Iterable[Obj]) -> list[str]:
    return [c.get("name", "") for c in containers]


def _terminated(exit_code: int, started: float, finished: float, cid: str = "") -> Obj:
    t: Obj = {
        "exitCode": exit_code,
        "reason": "Completed" if exit_code == 0 else "Error",
        "startedAt": rfc3339(started),
        "finishedAt": rfc3339(finished),
    }
    if cid:
        t["containerID"] = cid
    return t


def _container_status(pod: Obj, c: Obj, fate: ContainerFate) -> Obj:
    uid = _md(pod).get("uid", "")
    name = c.get("name", "")
    image = c.get("image", "")
    cid = container_id(uid, name, fate.restart_count)
    cs: Obj = {
        "name": name,
        "image": normalize_image(image),
        "imageID": image_id(image),
        "containerID": cid,
        "ready": fate.ready and fate.state == "running",
        "started": fate.state == "running",
        "restartCount": fate.restart_count,
        "lastState": {},
    }
    if fate.state == "running":
        cs["state"] = {"running": {"startedAt": rfc3339(fate.started_at)}}
    elif fate.state == "waiting":
        back = int(fate.backoff)
        ns = _md(pod).get("namespace", "")
        cs["state"] = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {back}s restarting failed container={name} pod={_md(pod).get('name', '')}_{ns}({uid})",
            }
        }
    else:
        cs["state"] = {"terminated": _terminated(fate.exit_code, fate.started_at, fate.finished_at, cid)}
    if fate.last_exit is not None:
        code, st, fin = fate.last_exit
        cs["lastState"] = {
            "terminated": _terminated(code, st, fin, container_id(uid, name, max(fate.restart_count - 1, 0)))
        }
    return cs


def _init_statuses(pod: Obj, fate: ContainerFate, start: float) -> list[Obj]:
    """Classic init containers completed (exit 0); sidecars (``restartPolicy: Always``) share the pod's fate."""
    out: list[Obj] = []
    uid = _md(pod).get("uid", "")
    for c in _spec(pod).get("initContainers") or []:
        if c.get("restartPolicy") == "Always":
            out.append(_container_status(pod, c, fate))
            continue
        name, image = c.get("name", ""), c.get("image", "")
        cid = container_id(uid, name, 0)
        out.append(
            {
                "name": name,
                "image": normalize_image(image),
                "imageID": image_id(image),
                "containerID": cid,
                "ready": True,
                "started": False,
                "restartCount": 0,
                "lastState": {},
                "state": {"terminated": _terminated(0, start, start, cid)},
            }
        )
    return out


def ephemeral_statuses(pod: Obj, now: float, terminal: bool) -> list[Obj]:
    """``ephemeralContainerStatuses``: a debug container runs from when kubelet first saw it
    (its recorded ``startedAt`` is kept) until the pod stops; it is never ready and never
    restarted, as kubelet treats ephemeral containers."""
    uid = _md(pod).get("uid", "")
    old = {cs.get("name"): cs for cs in (pod.get("status") or {}).get("ephemeralContainerStatuses") or []}
    out: list[Obj] = []
    for c in _spec(pod).get("ephemeralContainers") or []:
        name, image = c.get("name", ""), c.get("image", "")
        cid = container_id(uid, name, 0)
        prev_state = (old.get(name) or {}).get("state") or {}
        started = (prev_state.get("running") or prev_state.get("terminated") or {}).get("startedAt")
        started = started or rfc3339(now)
        state: Obj
        if terminal:
            state = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started,
                    "finishedAt": rfc3339(now),
                    "containerID": cid,
                }
            }
        else:
            state = {"running": {"startedAt": started}}
        out.append(
            {
                "name": name,
                "image": normalize_image(image),
                "imageID": image_id(image),
                "containerID": cid,
                "ready": False,
                "started": not terminal,
                "restartCount": 0,
                "lastState": {},
                "state": state,
            }
        )
    return out


def missing_ephemeral(pod: Obj) -> list[str]:
    """Ephemeral containers of the spec that have no status yet (added by ``kubectl debug``)."""
    have = {cs.get("name") for cs in (pod.get("status") or {}).get("ephemeralContainerStatuses") or []}
    return [
        c.get("name", "") for c in _spec(pod).get("ephemeralContainers") or [] if c.get("name") not in have
    ]


def _cond(ctype: str, ok: bool, reason: str = "", message: str = "", generation: int | None = None) -> Obj:
    c: Obj = {"type": ctype, "status": "True" if ok else "False", "lastProbeTime": None}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    if generation is not None:
        c["observedGeneration"] = generation
    return c


def merge_pod_conditions(old: list[Obj], kubelet: list[Obj], now: float) -> list[Obj]:
    """Foreign conditions first (unchanged), then kubelet's, keeping transition times that did not change."""
    ts = rfc3339(now)
    by_type = {c.get("type"): c for c in old}
    out = [c for c in old if c.get("type") not in KUBELET_POD_CONDITIONS]
    for new in kubelet:
        prev = by_type.get(new["type"])
        c = dict(new)
        if prev is not None and prev.get("status") == c["status"] and prev.get("lastTransitionTime"):
            c["lastTransitionTime"] = prev["lastTransitionTime"]
        else:
            c["lastTransitionTime"] = ts
        out.append(c)
    return out


def _base_status(pod: Obj, *, host_ip: str, pod_ip: str, start: float) -> Obj:
    old = pod.get("status") or {}
    st: Obj = {}
    if old.get("qosClass"):
        st["qosClass"] = old["qosClass"]
    if old.get("nominatedNodeName"):
        st["nominatedNodeName"] = old["nominatedNodeName"]
    for k in ("resourceClaimStatuses", "extendedResourceClaimStatus"):
        if old.get(k):
            st[k] = old[k]
    if host_ip:
        st["hostIP"] = host_ip
        st["hostIPs"] = [{"ip": host_ip}]
    if pod_ip:
        st["podIP"] = pod_ip
        st["podIPs"] = [{"ip": pod_ip}]
    st["startTime"] = old.get("startTime") or rfc3339(start)
    gen = _md(pod).get("generation")
    if gen is not None:
        st["observedGeneration"] = gen
    return st


def pod_status(
    pod: Obj, fate: ContainerFate, *, host_ip: str, pod_ip: str, start: float, now: float, phase: str
) -> Obj:
    """The full status kubelet reports for a started pod whose containers share ``fate``.

    ``phase`` is ``Running`` while containers run or back off, ``Succeeded``/``Failed`` once
    they terminated for good.
    """
    spec = _spec(pod)
    gen = _md(pod).get("generation")
    st = _base_status(pod, host_ip=host_ip, pod_ip=pod_ip, start=start)
    st["phase"] = phase
    containers = spec.get("containers") or []
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    st["containerStatuses"] = [_container_status(pod, c, fate) for c in containers]
    inits = _init_statuses(pod, fate, start)
    if inits:
        st["initContainerStatuses"] = inits
    terminal = phase in ("Succeeded", "Failed")
    ephemeral = ephemeral_statuses(pod, now, terminal)
    if ephemeral:
        st["ephemeralContainerStatuses"] = ephemeral
    if terminal:
        term_reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        conds = [
            _cond("PodReadyToStartContainers", False, generation=gen),
            _cond("Initialized", True, "PodCompleted" if phase == "Succeeded" else "", generation=gen),
            _cond("Ready", False, term_reason, generation=gen),
            _cond("ContainersReady", False, term_reason, generation=gen),
        ]
    else:
        ready = fate.ready and fate.state == "running"
        unready = [] if ready else sorted(_names(sidecars) + _names(containers))
        msg = "containers with unready status: [" + " ".join(unready) + "]" if unready else ""
        conds = [
            _cond("PodReadyToStartContainers", True, generation=gen),
            _cond("Initialized", True, generation=gen),
            _cond("Ready", ready, "" if ready else "ContainersNotReady", msg, generation=gen),
            _cond("ContainersReady", ready, "" if ready else "ContainersNotReady", msg, generation=gen),
        ]
    conds.append(_cond("PodScheduled", True, generation=gen))
    st["conditions"] = merge_pod_conditions((pod.get("status") or {}).get("conditions") or [], conds, now)
    return st


def rejected_status(pod: Obj, reason: str, message: str, now: float) -> Obj:
    """``rejectPod``: phase Failed with kubelet's reason/message; no containers ever ran."""
    old = pod.get("status") or {}
    st: Obj = {k: v for k, v in old.items() if k in ("qosClass", "conditions", "nominatedNodeName")}
    st["phase"] = "Failed"
    st["reason"] = reason
    st["message"] = message
    st["startTime"] = old.get("startTime") or rfc3339(now)
    gen = _md(pod).get("generation")
    if gen is not None:
        st["observedGeneration"] = gen
    return st


def gc_status(pod: Obj, now: float) -> Obj:
    """PodGC's last word on a pod of a vanished node: Failed (unless terminal) + ``DisruptionTarget``."""
    old = dict(pod.get("status") or {})
    if old.get("phase") not in ("Succeeded", "Failed"):
        old["phase"] = "Failed"
    conds = [c for c in old.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conds.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": rfc3339(now),
            "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists",
        }
    )
    old["conditions"] = conds
    return old


# ============================================================================ pod status readers


def container_state(pod: Obj) -> str:
    """The simulated containers' state as last written: '' (none yet), running, waiting, terminated."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        state = cs.get("state") or {}
        for k in ("running", "waiting", "terminated"):
            if k in state:
                return k
    return ""


def restart_count(pod: Obj) -> int:
    counts = [
        int(cs.get("restartCount") or 0) for cs in (pod.get("status") or {}).get("containerStatuses") or []
    ]
    return max(counts) if counts else 0


def is_ready(pod: Obj) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def phase_of(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


# ============================================================================ node status

NODE_CONDITION_ORDER = ("NetworkUnavailable", "MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
_KUBELET_NODE_CONDITIONS: dict[str, tuple[str, str, str]] = {
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}
_NETWORK = ("False", "RouteCreated", "RouteController created a route")
#: Ready as kubelet posts it while its container runtime is down (the ``not-ready`` node fault)
KUBELET_NOT_READY = ("False", "KubeletNotReady", "container runtime is down")

#: capacity a Node created without one gets (KWOK gives huge numbers; these look like a real host)
DEFAULT_CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "500Gi"}


def node_info(name: str, arch: str = "amd64", os_name: str = "linux") -> Obj:
    """``status.nodeInfo`` with IDs derived from the node name (stable across restarts)."""
    h = _sha("node", name)
    return {
        "machineID": h[:32],
        "systemUUID": f"{h[32:40]}-{h[40:44]}-{h[44:48]}-{h[48:52]}-{h[52:64]}",
        "bootID": _sha("boot", name)[:32],
        "kernelVersion": KERNEL_VERSION,
        "osImage": OS_IMAGE,
        "containerRuntimeVersion": CONTAINER_RUNTIME_VERSION,
        "kubeletVersion": KUBELET_VERSION,
        "kubeProxyVersion": "",
        "operatingSystem": os_name,
        "architecture": arch,
    }


def node_resources(node: Obj) -> tuple[Obj, Obj]:
    """(capacity, allocatable): the node's own, base resources filled in; allocatable = capacity unless given."""
    status = node.get("status") or {}
    cap = dict(status.get("capacity") or {})
    alloc = dict(status.get("allocatable") or {})
    for k, v in DEFAULT_CAPACITY.items():
        if k not in cap:
            cap[k] = alloc.get(k, v)
    for k, v in cap.items():
        alloc.setdefault(k, v)
    return cap, alloc


def _wanted(ctype: str, not_ready: bool) -> tuple[str, str, str]:
    if ctype == "NetworkUnavailable":
        return _NETWORK
    if ctype == "Ready" and not_ready:
        return KUBELET_NOT_READY
    return _KUBELET_NODE_CONDITIONS[ctype]


def node_conditions(old: list[Obj], now: float, heartbeat: bool = True, not_ready: bool = False) -> list[Obj]:
    """Kubelet's conditions (healthy, or Ready=False when ``not_ready``) plus
    NetworkUnavailable=False, transition times preserved.

    ``heartbeat`` refreshes ``lastHeartbeatTime`` of kubelet-owned conditions;
    NetworkUnavailable belongs to the network plugin and keeps its first heartbeat.
    """
    ts = rfc3339(now)
    by_type = {c.get("type"): c for c in old}
    out: list[Obj] = []
    for ctype in NODE_CONDITION_ORDER:
        status, reason, message = _wanted(ctype, not_ready)
        prev = by_type.get(ctype)
        same = prev is not None and prev.get("status") == status
        hb = ts
        if (
            prev is not None
            and prev.get("lastHeartbeatTime")
            and (ctype == "NetworkUnavailable" or not heartbeat)
            and same
        ):
            hb = prev["lastHeartbeatTime"]
        out.append(
            {
                "type": ctype,
                "status": status,
                "lastHeartbeatTime": hb,
                "lastTransitionTime": prev["lastTransitionTime"]
                if same and prev.get("lastTransitionTime")
                else ts,
                "reason": reason,
                "message": message,
            }
        )
    out.extend(c for c in old if c.get("type") not in NODE_CONDITION_ORDER)
    return out


def node_status(node: Obj, *, internal_ip: str, now: float, not_ready: bool = False) -> Obj:
    """The full status kubelet posts for a healthy node (Ready=False when ``not_ready``)."""
    md = node.get("metadata") or {}
    labels = md.get("labels") or {}
    name = md.get("name", "")
    old = node.get("status") or {}
    cap, alloc = node_resources(node)
    st: Obj = dict(old)
    st["capacity"] = cap
    st["allocatable"] = alloc
    st["conditions"] = node_conditions(old.get("conditions") or [], now, not_ready=not_ready)
    addresses = [a for a in old.get("addresses") or [] if a.get("type") not in ("InternalIP", "Hostname")]
    st["addresses"] = [
        {"type": "InternalIP", "address": internal_ip},
        {"type": "Hostname", "address": name},
        *addresses,
    ]
    st["daemonEndpoints"] = {"kubeletEndpoint": {"Port": KUBELET_PORT}}
    st["nodeInfo"] = node_info(
        name, labels.get("kubernetes.io/arch", "amd64"), labels.get("kubernetes.io/os", "linux")
    )
    st.setdefault("features", {"supplementalGroupsPolicy": True})
    return st


def is_node_ready(node: Obj) -> bool:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def node_needs_status(node: Obj, not_ready: bool = False) -> bool:
    """True until the node carries the full status kubelet posts (any condition off, info missing):
    healthy, or Ready=False when ``not_ready``."""
    status = node.get("status") or {}
    if not status.get("nodeInfo") or not status.get("addresses") or not status.get("allocatable"):
        return True
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return any(conds.get(ctype) != _wanted(ctype, not_ready)[0] for ctype in NODE_CONDITION_ORDER)


def has_not_ready_taint(node: Obj) -> bool:
    return any(t.get("key") == NOT_READY_TAINT_KEY for t in (node.get("spec") or {}).get("taints") or [])


def without_not_ready_taint(taints: list[Obj]) -> list[Obj]:
    return [t for t in taints if t.get("key") != NOT_READY_TAINT_KEY]
