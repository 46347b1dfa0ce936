"""discovery.k8s.io/v1 EndpointSlice (kube's ``pkg/registry/discovery/endpointslice/strategy.go``).

Validation follows ``pkg/apis/discovery/validation``: a supported, immutable ``addressType``; at
most 1000 endpoints of 1 to 100 addresses, each a valid address of that family that is not
unspecified, loopback or link-local (``ValidateEndpointIP``); DNS-label hostnames and port names,
unique port names, a supported protocol per port. The generation follows content changes (kube's
strategy bumps it on any change), which the generic registry does for every tracked resource.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies.podspec import as_dict, as_list
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
MAX_ENDPOINTS = 1000
MAX_ADDRESSES = 100
MAX_PORTS = 20000


def _invalid_all(path: Path, value: Any, msgs: list[str]) -> ErrorList:
    return [field.invalid(path, value, m) for m in msgs]


def validate_endpoint_ip(address: str) -> list[str]:
    """``ValidateEndpointIP``: addresses a Service must never send traffic to."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return []
    if ip.is_unspecified:
        return [f"may not be unspecified ({address})"]
    if ip.is_loopback:
        return ["may not be in the loopback range (127.0.0.0/8, ::1/128)"]
    if ip.is_link_local:
        return ["may not be in the link-local range (169.254.0.0/16, fe80::/10)"]
    if ip in ipaddress.ip_network("224.0.0.0/24") or ip in ipaddress.ip_network("ff02::/16"):
        return ["may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"]
    return []


def _family_errors(address: str, family: str) -> list[str]:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return [f"must be a valid {family} address"]
    want = 4 if family == "IPv4" else 6
    return [] if ip.version == want else [f"must be a valid {family} address"]


def validate_endpoint_slice(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    addr_type = obj.get("addressType")
    if not addr_type:
        errs.append(field.required("addressType"))
    elif addr_type not in ADDRESS_TYPES:
        errs.append(field.not_supported("addressType", addr_type, ADDRESS_TYPES))
    endpoints = as_list(obj.get("endpoints"))
    ep_path = Path("endpoints")
    if len(endpoints) > MAX_ENDPOINTS:
        return [*errs, field.too_many(ep_path, len(endpoints), MAX_ENDPOINTS)]
    for i, ep in enumerate(endpoints):
        ep = as_dict(ep)
        ip = ep_path.index(i)
        ap = ip.child("addresses")
        addresses = as_list(ep.get("addresses"))
        if not addresses:
            errs.append(field.required(ap, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(field.too_many(ap, len(addresses), MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            a = address if isinstance(address, str) else str(address)
            if addr_type in ("IPv4", "IPv6"):
                errs.extend(_invalid_all(ap.index(j), a, _family_errors(a, addr_type)))
                errs.extend(_invalid_all(ap.index(j), a, validate_endpoint_ip(a)))
            elif addr_type == "FQDN":
                errs.extend(_invalid_all(ap.index(j), a, names.is_dns1123_subdomain(a)))
        node = ep.get("nodeName")
        if node is not None:
            errs.extend(
                _invalid_all(ip.child("nodeName"), node, names.name_is_dns_subdomain(str(node), False))
            )
        hostname = ep.get("hostname")
        if hostname is not None:
            errs.extend(_invalid_all(ip.child("hostname"), hostname, names.is_dns1123_label(str(hostname))))
    ports = as_list(obj.get("ports"))
    pp = Path("ports")
    if len(ports) > MAX_PORTS:
        return [*errs, field.too_many(pp, len(ports), MAX_PORTS)]
    seen: set[str] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        ipath = pp.index(i)
        name = port.get("name") or ""
        if name:
            errs.extend(_invalid_all(ipath.child("name"), name, names.is_dns1123_label(str(name))))
        if name in seen:
            errs.append(field.duplicate(ipath.child("name"), name))
        seen.add(name)
        proto = port.get("protocol")
        if proto is None:
            errs.append(field.required(ipath.child("protocol")))
        elif proto not in PROTOCOLS:
            errs.append(field.not_supported(ipath.child("protocol"), proto, PROTOCOLS))
        app = port.get("appProtocol")
        if app is not None:
            errs.extend(_invalid_all(ipath.child("appProtocol"), app, names.is_qualified_name(str(app))))
    return errs


class EndpointSliceStrategy(Strategy):
    def default(self, obj: Obj) -> None:
        """``SetDefaults_EndpointPort``: TCP, and an empty name when none is given."""
        for port in as_list(obj.get("ports")):
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                if port.get("name") is None:
                    port["name"] = ""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_endpoint_slice(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_endpoint_slice(new)
        if new.get("addressType") != old.get("addressType"):
            errs.append(field.invalid("addressType", new.get("addressType"), "field is immutable"))
        return errs


STRATEGIES = {("discovery.k8s.io", "endpointslices"): EndpointSliceStrategy()}
