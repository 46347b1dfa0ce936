"""Per-pod and per-node facts the plugins read, precomputed once (re-exported by :mod:`scheduler.framework`).

:class:`PodInfo` parses a pod once per object version: its resource requests in integer units
(cpu in millicores, memory and other resources in units), kube's non-zero scoring requests,
host ports, and its pod (anti-)affinity terms with compiled selectors. :class:`NodeInfo`
aggregates the pods on a node the way kube's ``framework.NodeInfo`` does: requested and
non-zero-requested resources, used host ports, the pods with (anti-)affinity, and a
``generation`` bumped on every change so the cache can copy only changed nodes into a snapshot.
Image states are not tracked (no ImageLocality plugin).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import orjson

from apiserver.api.podresources import is_supported_pod_level_resource, pod_requests
from apiserver.api.types import Obj
from apiserver.meta import parse_time
from apiserver.quantity import resource_list_milli, to_int, to_milli
from apiserver.selectors import NOTHING, label_selector_from_dict, selector_dict_key

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
#: kube's ``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``: used for *scoring* only,
#: so that pods without requests still spread instead of piling onto one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_generation = itertools.count(1)


def next_generation() -> int:
    """A process-wide increasing number; every NodeInfo change takes a fresh one."""
    return next(_generation)


class Selector(Protocol):
    def matches(self, labels: Mapping[str, str]) -> bool: ...


def compile_selector(sel: Obj | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: nil matches nothing, ``{}`` matches everything.

    An invalid selector matches nothing (kube reports it as a plugin error; API validation
    already rejects such pods).
    """
    key = selector_dict_key(sel)
    if key is not None:
        got = _compiled.get(key)
        if got is not None:
            return got
    try:
        compiled: Selector = label_selector_from_dict(sel)
    except ValueError:
        compiled = NOTHING
    if key is not None:
        if len(_compiled) >= MAX_COMPILED_SELECTORS:
            _compiled.clear()
        _compiled[key] = compiled
    return compiled


#: compiled selectors (immutable) by :func:`~apiserver.selectors.selector_dict_key` (invalid
#: ones as ``NOTHING``): the pods of one StatefulSet or
#: ReplicaSet ask for the same default-spreading selector in every cycle
_compiled: dict[tuple[Any, ...], Selector] = {}
MAX_COMPILED_SELECTORS = 4096


# --- resources ---------------------------------------------------------------------------------


def _units(rl: Mapping[str, Any] | None) -> dict[str, int]:
    """A ResourceList (strings or exact Fractions) as integers: cpu in milli, the rest in units."""
    if not rl:
        return {}
    out: dict[str, int] = {}
    strings: dict[str, str] = {}
    for k, v in rl.items():
        if isinstance(v, Fraction | int) and not isinstance(v, bool):
            out[k] = to_milli(v) if k == CPU else to_int(v)
        else:
            strings[k] = v
    if strings:
        out.update(resource_list_milli(strings))
    return out


def _add_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        if v > acc.get(k, 0):
            acc[k] = v


def _is_sidecar(c: Obj) -> bool:
    return c.get("restartPolicy") == "Always"


def _container_requests(c: Obj, non_missing: Mapping[str, int] | None) -> dict[str, int]:
    reqs = _units((c.get("resources") or {}).get("requests"))
    if non_missing:
        for k, v in non_missing.items():
            if k not in reqs:
                reqs[k] = v
    return reqs


def compute_pod_requests(pod: Obj, non_missing: Mapping[str, int] | None = None) -> dict[str, int]:
    """kube's ``resource.PodRequests`` in integer units.

    Regular containers and restartable (sidecar) init containers add up; each classic init
    container runs alone next to the sidecars started before it, so the pod needs the max of
    that and the steady state; pod-level ``spec.resources.requests`` override per-resource;
    ``spec.overhead`` is added last. ``non_missing`` fills a container's *absent* requests (the
    scoring defaults), as ``PodResourcesOptions.NonMissingContainerRequests`` does.
    """
    spec = pod.get("spec") or {}
    reqs: dict[str, int] = {}
    for c in spec.get("containers") or []:
        _add_into(reqs, _container_requests(c, non_missing))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        creq = _container_requests(c, non_missing)
        if _is_sidecar(c):
            _add_into(reqs, creq)
            _add_into(sidecars, creq)
            step = dict(sidecars)
        else:
            step = dict(creq)
            _add_into(step, sidecars)
        _max_into(init_max, step)
    _max_into(reqs, init_max)
    for k, v in _units((spec.get("resources") or {}).get("requests")).items():
        if is_supported_pod_level_resource(k):
            reqs[k] = v
    overhead = _units(spec.get("overhead"))
    if overhead:
        _add_into(reqs, overhead)
    return reqs


def pod_requests_units(pod: Obj) -> dict[str, int]:
    """The pod's requests used by Filter and by node accounting (no defaults for missing requests)."""
    return _units(pod_requests(pod))


def non_zero_requests(pod: Obj) -> tuple[int, int]:
    """(milli-cpu, memory) with kube's 100m / 200Mi defaults for containers that request nothing."""
    reqs = compute_pod_requests(pod, {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST})
    return reqs.get(CPU, 0), reqs.get(MEMORY, 0)


#: requests and non-zero requests by the JSON of the spec fields they are computed from
_RESOURCE_FACTS: dict[bytes, tuple[dict[str, int], int, int]] = {}
_RESOURCE_FACTS_MAX = 4096


def resource_facts(pod: Obj) -> tuple[dict[str, int], int, int]:
    """``(pod_requests_units(pod), *non_zero_requests(pod))``, remembered by what they depend on.

    Both are functions of ``spec.containers``, ``spec.initContainers``, ``spec.resources`` and
    ``spec.overhead`` alone; the pods of one template (a StatefulSet's, a benchmark's) share
    them, so they are computed once per distinct JSON of those fields instead of parsing every
    quantity of every pod. The returned dict is shared and must not be modified.
    """
    spec = pod.get("spec") or {}
    try:
        key: bytes | None = orjson.dumps(
            (spec.get("containers"), spec.get("initContainers"), spec.get("resources"), spec.get("overhead"))
        )
    except TypeError:  # not plain JSON (e.g. exact Fractions in a test's pod): no memo
        key = None
    if key is not None:
        got = _RESOURCE_FACTS.get(key)
        if got is not None:
            return got
    facts = (pod_requests_units(pod), *non_zero_requests(pod))
    if key is not None:
        if len(_RESOURCE_FACTS) >= _RESOURCE_FACTS_MAX:
            _RESOURCE_FACTS.clear()
        _RESOURCE_FACTS[key] = facts
    return facts


# --- pods ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A processed ``PodAffinityTerm``: namespaces, compiled selectors, topology key, weight (preferred only)."""

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector
    weight: int = 0

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str] | None) -> bool:
        """kube's ``AffinityTerm.Matches``: namespace (listed or selected) and label selector."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels or {}):
            return self.selector.matches(pod.labels)
        return False


def _affinity_term(pod_ns: str, term: Obj, weight: int = 0) -> AffinityTerm:
    namespaces = term.get("namespaces") or []
    ns_sel = term.get("namespaceSelector")
    if not namespaces and ns_sel is None:
        namespaces = [pod_ns]
    return AffinityTerm(
        namespaces=frozenset(namespaces),
        selector=compile_selector(term.get("labelSelector")),
        topology_key=term.get("topologyKey", ""),
        namespace_selector=compile_selector(ns_sel),
        weight=weight,
    )


def _terms(pod_ns: str, section: Obj | None) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    """The section's (required, preferred) terms, as tuples: a PodInfo lives as long as its pod in
    the scheduler's cache, and an empty tuple (the common case) is one shared object outside the
    cyclic collector, where an empty list would be one more object each gen-0 pass traverses."""
    if not section:
        return (), ()
    required = tuple(
        _affinity_term(pod_ns, t) for t in section.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    )
    preferred = []
    for wt in section.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
        w = int(wt.get("weight") or 0)
        if w:
            preferred.append(_affinity_term(pod_ns, wt.get("podAffinityTerm") or {}, w))
    return required, tuple(preferred)


def _host_ports(spec: Obj) -> tuple[tuple[str, str, int], ...]:
    """The pod's (hostIP, protocol, hostPort) triples; a tuple for the reason :func:`_terms` gives."""
    containers = list(spec.get("containers") or [])
    containers += [c for c in spec.get("initContainers") or [] if _is_sidecar(c)]
    out = []
    for c in containers:
        for p in c.get("ports") or []:
            hp = int(p.get("hostPort") or 0)
            if hp > 0:
                out.append((p.get("hostIP") or "", p.get("protocol") or "TCP", hp))
    return tuple(out)


def pod_uid(pod: Obj) -> str:
    """The identity queues and nominators use: ``metadata.uid``, or ``namespace/name`` without one."""
    meta = pod.get("metadata") or {}
    return meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class PodInfo:
    """A pod plus everything the plugins derive from it, computed once."""

    __slots__ = (
        "pod",
        "key",
        "uid",
        "name",
        "namespace",
        "labels",
        "priority",
        "node_name",
        "requests",
        "non_zero_cpu",
        "non_zero_memory",
        "host_ports",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
        "terminating",
        "start_time",
    )

    def __init__(self, pod: Obj, like: PodInfo | None = None) -> None:
        """Parse ``pod``; ``like`` is an earlier PodInfo of the same pod whose spec-derived facts
        are taken over when its namespace and ``spec`` are equal to this one's.

        Requests, non-zero requests, host ports, priority and the (anti-)affinity terms depend
        on the namespace and ``spec`` alone, and most updates of a pod (binding's Scheduled
        condition, status writes) leave ``spec`` as it was: comparing two specs is far cheaper
        than recomputing the requests (exact arithmetic on quantities). The derived values are
        never mutated, so sharing them is safe.
        """
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        self.pod = pod
        self.name: str = meta.get("name", "")
        self.namespace: str = meta.get("namespace", "")
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = meta.get("uid") or self.key
        self.labels: dict[str, str] = meta.get("labels") or {}
        self.terminating = bool(meta.get("deletionTimestamp"))
        self.start_time: float | None = parse_time(status.get("startTime"))
        if like is not None and like.namespace == self.namespace:
            like_spec = like.pod.get("spec") or {}
            if like_spec is spec or like_spec == spec:
                self._share_spec_facts(like)
                return
        self.priority: int = int(spec.get("priority") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.requests, self.non_zero_cpu, self.non_zero_memory = resource_facts(pod)
        self.host_ports = _host_ports(spec)
        affinity = spec.get("affinity") or {}
        self.required_affinity_terms, self.preferred_affinity_terms = _terms(
            self.namespace, affinity.get("podAffinity")
        )
        self.required_anti_affinity_terms, self.preferred_anti_affinity_terms = _terms(
            self.namespace, affinity.get("podAntiAffinity")
        )

    def _share_spec_facts(self, like: PodInfo) -> None:
        self.priority = like.priority
        self.node_name = like.node_name
        self.requests = like.requests
        self.non_zero_cpu = like.non_zero_cpu
        self.non_zero_memory = like.non_zero_memory
        self.host_ports = like.host_ports
        self.required_affinity_terms = like.required_affinity_terms
        self.preferred_affinity_terms = like.preferred_affinity_terms
        self.required_anti_affinity_terms = like.required_anti_affinity_terms
        self.preferred_anti_affinity_terms = like.preferred_anti_affinity_terms

    def shares_spec_facts(self, other: PodInfo) -> bool:
        """Whether both PodInfos account the same (their spec-derived facts are the same objects)."""
        return (
            self.requests is other.requests
            and self.host_ports is other.host_ports
            and self.non_zero_cpu == other.non_zero_cpu
            and self.non_zero_memory == other.non_zero_memory
        )

    def on_node(self, node_name: str) -> PodInfo:
        """The PodInfo of this pod with ``spec.nodeName`` set to ``node_name`` (the assumed pod).

        The pod object is a shallow copy with a new ``spec`` (kube assumes a copy); only
        ``node_name`` differs from this PodInfo, so everything else is shared.
        """
        spec = self.pod.get("spec") or {}
        pod = self.pod
        if spec.get("nodeName") != node_name:
            pod = {**pod, "spec": {**spec, "nodeName": node_name}}
        # Every slot assigned by name: a getattr/setattr loop over ``__slots__`` costs several
        # times more, once per assumed pod (``test_the_assumed_podinfo_is_the_pod_on_its_node``
        # reads every slot, so a slot added to the class but not here fails it).
        c = PodInfo.__new__(PodInfo)
        c.pod = pod
        c.key = self.key
        c.uid = self.uid
        c.name = self.name
        c.namespace = self.namespace
        c.labels = self.labels
        c.priority = self.priority
        c.node_name = node_name
        self._spec_facts_to(c)
        c.terminating = self.terminating
        c.start_time = self.start_time
        return c

    def _spec_facts_to(self, c: PodInfo) -> None:
        """Give ``c``, a PodInfo of a pod with this one's ``spec`` (:meth:`on_node`,
        :meth:`confirmed_by`), this one's facts parsed from that spec, slot by slot."""
        c.requests = self.requests
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_memory = self.non_zero_memory
        c.host_ports = self.host_ports
        c.required_affinity_terms = self.required_affinity_terms
        c.required_anti_affinity_terms = self.required_anti_affinity_terms
        c.preferred_affinity_terms = self.preferred_affinity_terms
        c.preferred_anti_affinity_terms = self.preferred_anti_affinity_terms

    def same_pod_and_spec(self, pod: Obj) -> bool:
        """``pod`` has this one's name and namespace and an equal ``spec``: a later revision whose
        spec-derived facts are this one's (the test of :meth:`confirmed_by` and of the cache's
        confirmation in place)."""
        spec = pod.get("spec") or {}
        mine = self.pod.get("spec") or {}
        if mine is not spec and mine != spec:
            return False
        meta = pod.get("metadata") or {}
        return meta.get("name", "") == self.name and meta.get("namespace", "") == self.namespace

    def confirmed_by(self, pod: Obj) -> PodInfo | None:
        """The PodInfo of ``pod``, a later revision of this same pod, built from this one's facts
        when its namespace and ``spec`` are equal to this one's (else ``None``).

        What ``PodInfo(pod, like=self)`` gives then, slot for slot: the bound pod confirming its
        assumed self differs from it only in ``metadata`` and ``status`` (the binding's
        resourceVersion, managedFields and PodScheduled condition), so the spec-derived facts,
        the node and the key are taken over and only the metadata and status slots are read.
        """
        if not self.same_pod_and_spec(pod):
            return None
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        c = PodInfo.__new__(PodInfo)
        c.pod = pod
        c.key = self.key
        c.uid = meta.get("uid") or self.key
        c.name = self.name
        c.namespace = self.namespace
        c.labels = meta.get("labels") or {}
        c.priority = self.priority
        c.node_name = self.node_name
        self._spec_facts_to(c)
        c.terminating = bool(meta.get("deletionTimestamp"))
        c.start_time = parse_time(status.get("startTime"))
        return c

    @property
    def has_affinity(self) -> bool:
        return bool(
            self.required_affinity_terms
            or self.required_anti_affinity_terms
            or self.preferred_affinity_terms
            or self.preferred_anti_affinity_terms
        )

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


# --- host ports ----------------------------------------------------------------------------------

BIND_ALL = "0.0.0.0"


class HostPortInfo:
    """Used host ports per IP; ``0.0.0.0`` conflicts with every IP (kube's ``HostPortInfo``)."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, dict[tuple[str, int], int]] = {}

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
        return ip or BIND_ALL, protocol or "TCP"

    def add(self, ip: str, protocol: str, port: int) -> None:
        ip, protocol = self._sanitize(ip, protocol)
        m = self._by_ip.setdefault(ip, {})
        m[(protocol, port)] = m.get((protocol, port), 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ip, protocol = self._sanitize(ip, protocol)
        m = self._by_ip.get(ip)
        if not m or (protocol, port) not in m:
            return
        m[(protocol, port)] -= 1
        if m[(protocol, port)] <= 0:
            del m[(protocol, port)]
        if not m:
            del self._by_ip[ip]

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == BIND_ALL:
            return any(pp in m for m in self._by_ip.values())
        return any(pp in self._by_ip.get(k, ()) for k in (BIND_ALL, ip))

    def __len__(self) -> int:
        return sum(len(m) for m in self._by_ip.values())

    def clone(self) -> HostPortInfo:
        c = HostPortInfo()
        c._by_ip = {ip: dict(m) for ip, m in self._by_ip.items()}
        return c


class _NoHostPorts(HostPortInfo):
    """The used host ports of every node none of whose pods asks for one (nearly all of them).

    One shared instance, never changed: a NodeInfo holds it until a pod with host ports lands
    (:meth:`NodeInfo._account` then gives the node a :class:`HostPortInfo` of its own), so
    :meth:`NodeInfo.clone` - once per node each gang's search assumes on and again per node the
    next cycle's snapshot copies, 10,000 per 5,000-pod gang - shares it instead of copying an
    empty map into a new object.
    """

    __slots__ = ()

    def add(self, ip: str, protocol: str, port: int) -> None:
        raise TypeError("the shared empty HostPortInfo is never changed")

    def clone(self) -> HostPortInfo:
        return self


#: the used host ports of a node without any (:class:`_NoHostPorts`)
NO_HOST_PORTS: HostPortInfo = _NoHostPorts()


# --- nodes ---------------------------------------------------------------------------------------


def node_allocatable(node: Obj) -> dict[str, int]:
    """``status.allocatable`` in integer units; like API defaulting, capacity stands in when it is unset."""
    status = node.get("status") or {}
    alloc = status.get("allocatable")
    if alloc is None:
        alloc = status.get("capacity")
    return _units(alloc)


#: a NodeInfo's pods with (anti-)affinity: a list, or the shared empty tuple while there are none
PodList = list[PodInfo] | tuple[()]
#: the empty pod list all NodeInfos share (a tuple: nothing can append to it in place)
NO_PODS: tuple[()] = ()


class NodeInfo:
    """A node and the pods on it, aggregated (kube's ``framework.NodeInfo``).

    ``node`` may be ``None`` for a node the cache heard of only through its pods; such entries
    never enter a snapshot.
    """

    __slots__ = (
        "node",
        "name",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "requested",
        "non_zero_cpu",
        "non_zero_memory",
        "generation",
        "memo",
    )

    def __init__(self, node: Obj | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: Obj | None = None
        self.name = ""
        self.labels: dict[str, str] = {}
        self.taints: list[Obj] = []
        self.unschedulable = False
        self.allocatable: dict[str, int] = {}
        self.pods: list[PodInfo] = []
        #: the node's pods with (anti-)affinity terms, in ``pods`` order: few nodes have any, so
        #: while there are none both are the shared empty tuple (:data:`NO_PODS`), not a list each
        #: (two GC-tracked objects fewer per NodeInfo and per clone: a 5,000-pod gang's search
        #: and catch-up copy every node); a list from the first such pod on
        self.pods_with_affinity: PodList = NO_PODS
        self.pods_with_required_anti_affinity: PodList = NO_PODS
        self.used_ports: HostPortInfo = NO_HOST_PORTS
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_memory = 0
        self.generation = next_generation()
        #: per-node results of pure functions of this NodeInfo (e.g. a Score for given requests),
        #: dropped on every change; see :meth:`memo_dict`
        self.memo: dict[Any, Any] | None = None
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod_info(p)

    def set_node(self, node: Obj) -> None:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        self.node = node
        self.name = meta.get("name", "")
        self.labels = meta.get("labels") or {}
        self.taints = spec.get("taints") or []
        self.unschedulable = bool(spec.get("unschedulable"))
        self.allocatable = node_allocatable(node)
        self.generation = next_generation()
        self.memo = None

    def remove_node(self) -> None:
        self.node = None
        self.generation = next_generation()
        self.memo = None

    @property
    def allowed_pod_number(self) -> int:
        return self.allocatable.get(PODS, 0)

    def free(self, resource: str) -> int:
        """Allocatable minus requested (may be negative when pods were bound past capacity)."""
        if resource == PODS:
            return self.allowed_pod_number - len(self.pods)
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    def add_pod_info(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity = _appended(self.pods_with_affinity, pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity = _appended(self.pods_with_required_anti_affinity, pi)
        self._account(pi, 1)
        self.generation = next_generation()
        self.memo = None

    def replace_pod_info(self, pi: PodInfo) -> bool:
        """Put ``pi`` in place of the node's PodInfo with the same key, when both account alike.

        The result is what :meth:`remove_pod` then :meth:`add_pod_info` give (the pod moves to
        the end of the lists, the generation changes), without undoing and redoing the
        accounting. Returns False (and changes nothing) when the pod is absent or its
        requests, host ports or affinity differ.
        """
        key = pi.key
        pods = self.pods
        # newest last: a bound pod confirming its assumed self is most often the node's last
        for i in range(len(pods) - 1, -1, -1):
            if pods[i].key == key:
                break
        else:
            return False
        old = pods[i]
        affinity = pi.has_affinity
        if (
            not pi.shares_spec_facts(old)
            or affinity != old.has_affinity
            or pi.has_required_anti_affinity != old.has_required_anti_affinity
        ):
            return False
        del pods[i]
        pods.append(pi)
        if affinity:
            _drop(self.pods_with_affinity, key)
            self.pods_with_affinity = _appended(self.pods_with_affinity, pi)
        if pi.has_required_anti_affinity:
            _drop(self.pods_with_required_anti_affinity, key)
            self.pods_with_required_anti_affinity = _appended(self.pods_with_required_anti_affinity, pi)
        self.generation = next_generation()
        self.memo = None
        return True

    def remove_pod(self, key: str) -> PodInfo | None:
        """Remove the pod with ``key`` (namespace/name); returns its PodInfo, or ``None`` if absent."""
        for i, pi in enumerate(self.pods):
            if pi.key == key:
                del self.pods[i]
                _drop(self.pods_with_affinity, key)
                _drop(self.pods_with_required_anti_affinity, key)
                self._account(pi, -1)
                self.generation = next_generation()
                self.memo = None
                return pi
        return None

    def _account(self, pi: PodInfo, sign: int) -> None:
        for k, v in pi.requests.items():
            self.requested[k] = self.requested.get(k, 0) + sign * v
        self.non_zero_cpu += sign * pi.non_zero_cpu
        self.non_zero_memory += sign * pi.non_zero_memory
        if pi.host_ports:
            ports = self.used_ports
            if sign > 0 and ports is NO_HOST_PORTS:
                ports = self.used_ports = HostPortInfo()
            for ip, proto, port in pi.host_ports:
                if sign > 0:
                    ports.add(ip, proto, port)
                else:
                    ports.remove(ip, proto, port)  # a no-op on NO_HOST_PORTS (nothing to remove)
            if sign < 0 and not ports._by_ip:
                self.used_ports = NO_HOST_PORTS  # the last one gone: shared again

    def clone(self) -> NodeInfo:
        """A copy whose pod lists and counters can change without touching this one (PodInfos are shared)."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.taints = self.taints
        c.unschedulable = self.unschedulable
        c.allocatable = self.allocatable
        c.pods = list(self.pods)
        aff, anti = self.pods_with_affinity, self.pods_with_required_anti_affinity
        c.pods_with_affinity = list(aff) if aff else NO_PODS
        c.pods_with_required_anti_affinity = list(anti) if anti else NO_PODS
        ports = self.used_ports
        c.used_ports = ports if ports is NO_HOST_PORTS else ports.clone()  # the shared empty one stays shared
        c.requested = dict(self.requested)
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_memory = self.non_zero_memory
        c.generation = self.generation
        c.memo = self.memo  # same state, same results (a change replaces, never edits, the dict)
        return c

    def memo_dict(self) -> dict[Any, Any]:
        """The memo of this NodeInfo's current state, created on first use.

        A change to the NodeInfo drops it, so a value stored under a key that captures every
        other input (e.g. the plugin and the pod's requests) stays valid until then.
        """
        m = self.memo
        if m is None:
            m = self.memo = {}
        return m

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)}, requested={self.requested})"


def _drop(lst: PodList, key: str) -> None:
    for i, pi in enumerate(lst):
        if pi.key == key:
            del lst[i]  # type: ignore[union-attr]  # (a pod was found: a list, not NO_PODS)
            return


def _appended(lst: PodList, pi: PodInfo) -> list[PodInfo]:
    """``lst`` with ``pi`` appended: in place for a list, a new list for :data:`NO_PODS`."""
    if lst is NO_PODS:
        return [pi]
    lst.append(pi)  # type: ignore[union-attr]
    return lst  # type: ignore[return-value]
