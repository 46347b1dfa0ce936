"""Service ClusterIP and NodePort allocation (kube's ``pkg/registry/core/service/storage/alloc.go``).

kube's Service REST storage allocates before it validates and stores (``beginCreate`` /
``beginUpdate``) and releases on delete. gangplane's generic registry has no per-resource begin
hook, so :class:`ServiceAllocator` runs as the first mutating step of a Service write (an admission
plugin in shape) and learns what is stored from the registry's write hooks. What is allocated is
always derived from stored Services, so a write that later fails validation leaks nothing, and
because every registry call runs atomically on the event loop two creates cannot pick one address.

* ClusterIPs come from ``--service-cluster-ip-range`` (default ``10.96.0.0/12``) without the network
  and broadcast addresses; dynamic picks start at a random address above kube's static band (the
  lowest 1/16 of the range, between 16 and 256 addresses) and fall back to the band; the
  ``kubernetes`` Service takes the first address (``.1``). ``clusterIP: None`` is a headless Service.
* NodePorts (and ``healthCheckNodePort`` for ``LoadBalancer`` + ``externalTrafficPolicy: Local``)
  come from ``--service-node-port-range`` (default 30000-32767), dynamic picks above kube's static
  band (1/32 of the range, between 16 and 128 ports); changing the type to ClusterIP drops them.
* A requested address or port that is taken or out of range is a 422 with kube's messages:
  ``spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is
  already allocated`` and ``spec.ports[0].nodePort: Invalid value: 30080: provided port is already
  allocated``.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from apiserver import errors
from apiserver import field as fielderr
from apiserver.admission import CREATE, UPDATE, Attributes, Lookup
from apiserver.api.types import Obj
from apiserver.field import Path

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
DEFAULT_NODE_PORT_RANGE = "30000-32767"
HEADLESS = "None"


def parse_port_range(spec: str) -> tuple[int, int]:
    """``30000-32767`` (or a single port) -> (base, size)."""
    lo, _, hi = spec.partition("-")
    base = int(lo)
    last = int(hi) if hi else base
    if not 0 < base <= last <= 65535:
        raise ValueError(f"invalid port range {spec!r}")
    return base, last - base + 1


def _band(size: int, step: int, lo: int, hi: int) -> int:
    """``calculateRangeOffset``: the static band reserved for user-chosen values."""
    return min(max(lo, size // step), hi) if size >= lo else 0


class _Range:
    """A contiguous range of integers (addresses or ports) with kube's random-then-scan pick."""

    def __init__(self, base: int, size: int, offset: int, rng: random.Random) -> None:
        self.base = base
        self.size = size
        self.offset = offset
        self.rng = rng

    def contains(self, value: int) -> bool:
        return self.base <= value < self.base + self.size

    def next_free(self, taken: set[int] | dict[int, Any]) -> int | None:
        """Random start in the dynamic band, scanning forward; then the static band."""
        for lo, hi in ((self.offset, self.size), (0, self.offset)):
            span = hi - lo
            if span <= 0:
                continue
            start = self.rng.randrange(span)
            for i in range(span):
                value = self.base + lo + (start + i) % span
                if value not in taken:
                    return value
        return None


class ServiceAllocator:
    """Allocates ClusterIPs and NodePorts for Services; an admission step plus a write hook."""

    name = "ServiceIPAllocator"

    def __init__(
        self,
        cluster_ip_range: str = DEFAULT_SERVICE_CIDR,
        node_port_range: str = DEFAULT_NODE_PORT_RANGE,
        rng: random.Random | None = None,
    ) -> None:
        self.cidr = ipaddress.ip_network(cluster_ip_range, strict=True)
        if self.cidr.version != 4 or self.cidr.num_addresses < 4:
            raise ValueError(
                f"--service-cluster-ip-range {cluster_ip_range!r}: an IPv4 range of at least 4 addresses"
            )
        self.rng = rng or random.Random()
        ip_size = self.cidr.num_addresses - 2
        self.ips = _Range(int(self.cidr.network_address) + 1, ip_size, _band(ip_size, 16, 16, 256), self.rng)
        base, size = parse_port_range(node_port_range)
        self.port_range = node_port_range
        self.ports = _Range(base, size, _band(size, 32, 16, 128), self.rng)
        self._ip_owner: dict[int, str] = {}
        self._port_owner: dict[int, str] = {}
        self._loaded = False

    # ------------------------------------------------------------------ bookkeeping
    @property
    def first_ip(self) -> str:
        """The address of the ``kubernetes`` Service (the range's first usable one)."""
        return str(ipaddress.ip_address(self.ips.base))

    def _load(self, api: Lookup) -> None:
        if self._loaded:
            return
        self._loaded = True
        for svc in api.lookup_all("", "services"):
            self._record(svc)

    @staticmethod
    def _key(svc: Obj) -> str:
        md = svc.get("metadata") or {}
        return f"{md.get('namespace', '')}/{md.get('name', '')}"

    def _forget(self, key: str) -> None:
        for owners in (self._ip_owner, self._port_owner):
            for v in [v for v, k in owners.items() if k == key]:
                del owners[v]

    def _record(self, svc: Obj) -> None:
        key = self._key(svc)
        spec = svc.get("spec") or {}
        for ip in spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else []):
            value = _ip_int(ip)
            if value is not None:
                self._ip_owner[value] = key
        for port in _node_ports(spec):
            self._port_owner[port] = key

    def observe(self, verb: str, rd: Any, obj: Obj) -> None:
        """The registry's write hook: keep the maps equal to what is stored."""
        if rd.group != "" or rd.plural != "services" or not self._loaded:
            return
        key = self._key(obj)
        self._forget(key)
        if verb != "delete":
            self._record(obj)

    # ------------------------------------------------------------------ admission shape
    def handles(self, operation: str, rd: Any) -> bool:
        """Only Service creates and updates allocate (see :meth:`admit`)."""
        return rd.group == "" and rd.plural == "services" and operation in (CREATE, UPDATE)

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        rd = attrs.rd
        if rd.group != "" or rd.plural != "services" or attrs.subresource or attrs.obj is None:
            return
        if attrs.operation not in (CREATE, UPDATE):
            return
        self._load(api)
        key = f"{attrs.namespace}/{attrs.name}"
        svc = attrs.obj
        spec = svc.setdefault("spec", {})
        errs: fielderr.ErrorList = []
        old_spec = ((attrs.old or {}).get("spec") or {}) if attrs.operation == UPDATE else {}
        old_ip = old_spec.get("clusterIP")
        # A changed ClusterIP is immutable: the Service validation reports that, as kube validates
        # an update before it allocates.
        changed_ip = bool(old_ip) and old_ip != spec.get("clusterIP") and spec.get("type") != "ExternalName"
        if not changed_ip:
            errs.extend(self._cluster_ips(spec, key))
        errs.extend(self._node_ports(spec, key))
        if errs:
            raise errors.invalid("Service", attrs.name, "", errs)

    def validate(self, attrs: Attributes, api: Lookup) -> None:
        """Nothing to check after mutation: allocation errors are raised while allocating."""

    def _cluster_ips(self, spec: Obj, key: str) -> fielderr.ErrorList:
        stype = spec.get("type") or "ClusterIP"
        if stype == "ExternalName":
            return []
        ips = list(spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else []))
        if ips and ips[0] == HEADLESS:
            spec["clusterIP"], spec["clusterIPs"] = HEADLESS, [HEADLESS]
            return []
        if not ips:
            value = self.ips.next_free(self._ip_owner)
            if value is None:
                raise errors.internal("failed to allocate a serviceIP: range is full")
            ip = str(ipaddress.ip_address(value))
            spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
            return []
        errs: fielderr.ErrorList = []
        ip = ips[0]
        value = _ip_int(ip)
        if value is None:
            return []  # not an IP: the Service validation names it
        owner = self._ip_owner.get(value)
        if owner == key:
            return []
        path = Path("spec", "clusterIPs")
        if not self.ips.contains(value):
            errs.append(
                fielderr.invalid(
                    path,
                    ips,
                    f"failed to allocate IP {ip}: the provided IP ({ip}) is not in the valid range. "
                    f"The range of valid IPs is {self.cidr}",
                )
            )
        elif owner is not None:
            errs.append(
                fielderr.invalid(path, ips, f"failed to allocate IP {ip}: provided IP is already allocated")
            )
        return errs

    def _node_ports(self, spec: Obj, key: str) -> fielderr.ErrorList:
        stype = spec.get("type") or "ClusterIP"
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        wants = stype == "NodePort" or (
            stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True)
        )
        if not wants:
            if stype in ("ClusterIP", "ExternalName"):
                for p in ports:
                    p.pop("nodePort", None)
            if stype != "LoadBalancer":
                spec.pop("healthCheckNodePort", None)
        errs: fielderr.ErrorList = []
        mine: dict[int, bool] = {}
        if wants:
            for i, p in enumerate(ports):
                errs.extend(
                    self._one_port(p, "nodePort", Path("spec", "ports").index(i).child("nodePort"), key, mine)
                )
        if stype == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local":
            errs.extend(
                self._one_port(spec, "healthCheckNodePort", Path("spec", "healthCheckNodePort"), key, mine)
            )
        return errs

    def _one_port(
        self, holder: Obj, field_name: str, path: Path, key: str, mine: dict[int, bool]
    ) -> fielderr.ErrorList:
        requested = holder.get(field_name)
        if isinstance(requested, bool) or (requested is not None and not isinstance(requested, int)):
            return []
        if not requested:
            taken = {**self._port_owner, **mine}
            value = self.ports.next_free(taken)
            if value is None:
                raise errors.internal("failed to allocate a nodePort: range is full")
            holder[field_name] = value
            mine[value] = True
            return []
        if requested in mine:
            return []  # the same node port for another protocol of this Service
        owner = self._port_owner.get(requested)
        mine[requested] = True
        if owner == key:
            return []
        if not self.ports.contains(requested):
            return [
                fielderr.invalid(
                    path,
                    requested,
                    f"provided port is not in the valid range. The range of valid ports is {self.port_range}",
                )
            ]
        if owner is not None:
            return [fielderr.invalid(path, requested, "provided port is already allocated")]
        return []


def _ip_int(ip: Any) -> int | None:
    if not isinstance(ip, str) or ip == HEADLESS:
        return None
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return None
    return int(addr) if addr.version == 4 else None


def _node_ports(spec: Obj) -> list[int]:
    out = [
        p["nodePort"]
        for p in spec.get("ports") or []
        if isinstance(p, dict) and isinstance(p.get("nodePort"), int)
    ]
    if isinstance(spec.get("healthCheckNodePort"), int) and spec["healthCheckNodePort"]:
        out.append(spec["healthCheckNodePort"])
    return [p for p in out if p]
