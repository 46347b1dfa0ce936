"""Endpoints (``pkg/registry/core/endpoint``)."""

from __future__ import annotations

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import UntrackedGenerationStrategy, _str, is_valid_ip
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names


class EndpointsStrategy(UntrackedGenerationStrategy):
    """Endpoints: ports default to TCP; addresses must be IPs."""

    def default(self, obj: Obj) -> None:
        for ss in as_list(obj.get("subsets")):
            for p in as_list(as_dict(ss).get("ports")):
                if isinstance(p, dict) and not p.get("protocol"):
                    p["protocol"] = "TCP"

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_endpoints(obj)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_endpoints(new)


def validate_endpoints(obj: Obj) -> ErrorList:
    errs: ErrorList = []
    for i, ss in enumerate(as_list(obj.get("subsets"))):
        ss = as_dict(ss)
        p = Path("subsets").index(i)
        for key in ("addresses", "notReadyAddresses"):
            for j, addr in enumerate(as_list(ss.get(key))):
                addr = as_dict(addr)
                ap = p.child(key).index(j)
                errs.extend(fmt_errors(_str(addr.get("ip")), ap.child("ip"), is_valid_ip))
                hostname = _str(addr.get("hostname"))
                if hostname:
                    errs.extend(fmt_errors(hostname, ap.child("hostname"), names.is_dns1123_label))
                node = addr.get("nodeName")
                if node:
                    errs.extend(
                        fmt_errors(
                            _str(node), ap.child("nodeName"), lambda s: names.name_is_dns_subdomain(s, False)
                        )
                    )
        ports = as_list(ss.get("ports"))
        for j, port in enumerate(ports):
            port = as_dict(port)
            pp = p.child("ports").index(j)
            name = _str(port.get("name"))
            if len(ports) > 1 and not name:
                errs.append(field.required(pp.child("name")))
            elif name:
                errs.extend(fmt_errors(name, pp.child("name"), names.is_dns1123_label))
            num = _int(port.get("port")) or 0
            errs.extend(field.invalid(pp.child("port"), num, m) for m in names.is_valid_port_num(num))
            proto = _str(port.get("protocol"))
            if not proto:
                errs.append(field.required(pp.child("protocol")))
            elif proto not in podspec.PORT_PROTOCOLS:
                errs.append(field.not_supported(pp.child("protocol"), proto, podspec.PORT_PROTOCOLS))
    return errs
