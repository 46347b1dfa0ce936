"""Kubelet admission arithmetic: does one more pod fit the node's allocatable?

A pod bound by the scheduler normally fits, but a pod created with ``spec.nodeName`` skips the
scheduler, and two schedulers can race; kubelet re-checks at admission and rejects the pod
(phase Failed, reason ``OutOf<resource>``). This module is pure: integers in, a
:class:`Rejection` or None out. The agent keeps a :class:`NodeUsage` per node, updated
incrementally as pods are admitted and released, so admission never rescans the node's pods.

Mirrors ``pkg/kubelet/lifecycle/predicate.go``:

* requests are ``resourcehelper.PodRequests`` (regular containers + sidecars, max'ed with each
  classic init container, pod-level overrides, overhead) in integer units: cpu in millicores,
  everything else in units (bytes, counts);
* the pod-count check comes first, then cpu, memory, ephemeral-storage, then the remaining
  (extended, hugepages) resources in name order; the first shortage is reported;
* an *extended* resource the node does not advertise at all is dropped from the predicate
  (``removeMissingExtendedResources``); the device manager then refuses it, which kubelet
  reports as ``UnexpectedAdmissionError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from apiserver.api.podresources import pod_requests
from apiserver.api.types import Obj
from apiserver.quantity import resource_list_milli, to_int, to_milli

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
_NATIVE_ORDER = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why kubelet refused a pod: ``reason`` goes to ``status.reason`` and the event reason."""

    reason: str
    message: str

    @property
    def status_message(self) -> str:
        """``status.message`` of the rejected pod (kubelet's ``rejectPod`` prefix)."""
        return "Pod was rejected: " + self.message


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io/``."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def pod_request_units(pod: Obj) -> dict[str, int]:
    """The pod's requests as integers (cpu in milli); resources requested as zero are dropped."""
    out: dict[str, int] = {}
    for name, q in pod_requests(pod).items():
        v = to_milli(q) if name == CPU else to_int(q)
        if v:
            out[name] = v
    return out


#: a request memo holds at most this many distinct pod shapes (then starts over)
_MEMO_LIMIT = 1024
_MEMO_KEY_MAX_BYTES = 4096


def _request_key(pod: Obj) -> bytes | None:
    """What a pod's requests are a function of, as JSON text: pod-level resources, overhead, and
    each container's resources (with its restartPolicy, which makes an init container a sidecar).

    Absent or malformed parts are written as ``0`` / ``""``, so a ``null`` in the text can only
    be a NaN (orjson's writing of it): such a pod, or one whose text is too long, gets None."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None

    def part(c: Any) -> Any:
        if not isinstance(c, dict):
            return 0
        res, policy = c.get("resources"), c.get("restartPolicy")
        return (res if isinstance(res, dict) else 0, policy if isinstance(policy, str) else "")

    res, overhead = spec.get("resources"), spec.get("overhead")
    try:
        key = orjson.dumps(
            (
                res if isinstance(res, dict) else 0,
                overhead if isinstance(overhead, dict) else 0,
                [part(c) for c in spec.get("containers") or ()],
                [part(c) for c in spec.get("initContainers") or ()],
            )
        )
    except TypeError:
        return None
    if b"null" in key or len(key) > _MEMO_KEY_MAX_BYTES:
        return None
    return key


class RequestMemo:
    """:func:`pod_request_units` remembered per pod *shape* (the resources of its containers).

    The pods of one template request the same, and kubelet admits each: the exact quantity
    arithmetic (fractions) costs several times the JSON text of the resources, so a node agent
    running thousands of a template's pods computes it once. One memo per agent, bounded.
    """

    def __init__(self, limit: int = _MEMO_LIMIT) -> None:
        self._limit = limit
        self._known: dict[bytes, dict[str, int]] = {}

    def units(self, pod: Obj) -> dict[str, int]:
        key = _request_key(pod)
        if key is None:
            return pod_request_units(pod)
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= self._limit:
                self._known.clear()
            known = self._known[key] = pod_request_units(pod)
        return dict(known)


def resource_units(rl: Mapping[str, Any]) -> dict[str, int]:
    """A ResourceList as integers (cpu in milli); unparseable entries are skipped, not fatal."""
    out: dict[str, int] = {}
    for k, v in rl.items():
        try:
            out.update(resource_list_milli({k: v}))
        except (ValueError, TypeError):
            continue
    return out


def allocatable_units(node: Obj) -> dict[str, int]:
    """``status.allocatable`` (falling back to capacity) as integers."""
    status = node.get("status") or {}
    return resource_units(status.get("allocatable") or status.get("capacity") or {})


def check_fit(
    request: Mapping[str, int],
    used: Mapping[str, int],
    pod_count: int,
    allocatable: Mapping[str, int],
) -> Rejection | None:
    """Would a pod with ``request`` fit next to ``pod_count`` admitted pods using ``used``?

    ``allocatable`` carries ``pods`` as the allowed pod number; a node that does not report
    it allows none, as kubelet's zero-value would.
    """
    for name in sorted(request):
        if is_extended_resource(name) and name not in allocatable and request[name] > 0:
            return Rejection(
                "UnexpectedAdmissionError",
                f"Allocate failed due to can't allocate unregistered device {name}, which is unexpected",
            )
    allowed = allocatable.get(PODS, 0)
    if pod_count + 1 > allowed:
        return _insufficient(PODS, 1, pod_count, allowed)
    rest = sorted(k for k in request if k not in _NATIVE_ORDER and k != PODS)
    for name in (*_NATIVE_ORDER, *rest):
        want = request.get(name, 0)
        if want <= 0:
            continue
        if is_extended_resource(name) and name not in allocatable:
            continue
        cap = allocatable.get(name, 0)
        have = used.get(name, 0)
        if want > cap - have:
            return _insufficient(name, want, have, cap)
    return None


def _insufficient(name: str, requested: int, used: int, capacity: int) -> Rejection:
    return Rejection(
        f"OutOf{name}",
        f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}",
    )


@dataclass
class NodeUsage:
    """What the admitted, non-terminal pods of one node use; updated per admission/release."""

    used: dict[str, int] = field(default_factory=dict)
    pods: set[str] = field(default_factory=set)

    def admit(self, key: str, request: Mapping[str, int]) -> None:
        if key in self.pods:
            return
        self.pods.add(key)
        for k, v in request.items():
            self.used[k] = self.used.get(k, 0) + v

    def release(self, key: str, request: Mapping[str, int]) -> None:
        if key not in self.pods:
            return
        self.pods.discard(key)
        for k, v in request.items():
            left = self.used.get(k, 0) - v
            if left:
                self.used[k] = left
            else:
                self.used.pop(k, None)

    def check(self, request: Mapping[str, int], allocatable: Mapping[str, int]) -> Rejection | None:
        return check_fit(request, self.used, len(self.pods), allocatable)
