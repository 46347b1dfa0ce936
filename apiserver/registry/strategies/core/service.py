"""Services (``pkg/registry/core/service``): type-dependent fields, ports, IP families and validation."""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.field import ErrorList, Path
from apiserver.registry.strategies import podspec
from apiserver.registry.strategies.core.common import (
    UntrackedGenerationStrategy,
    _keep_old_status,
    _spec,
    _str,
    is_valid_ip,
)
from apiserver.registry.strategies.podspec import (
    as_dict,
    as_list,
    fmt_errors,
)
from apiserver.rest.strategy import Obj, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import (
    validate_labels,
)

SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]  # sets.List order


SESSION_AFFINITIES = ["ClientIP", "None"]


TRAFFIC_POLICIES = ["Cluster", "Local"]


DEFAULT_CLIENT_IP_TIMEOUT = 10800


def _is_headless(spec: Obj) -> bool:
    ips = as_list(spec.get("clusterIPs"))
    return bool(ips) and ips[0] == "None" or spec.get("clusterIP") == "None"


def _needs_cluster_ip(spec: Obj) -> bool:
    return (spec.get("type") or "ClusterIP") != "ExternalName"


def _needs_node_port(spec: Obj) -> bool:
    t = spec.get("type") or "ClusterIP"
    return t == "NodePort" or (
        t == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False
    )


def _externally_accessible(spec: Obj) -> bool:
    t = spec.get("type") or "ClusterIP"
    return t in ("NodePort", "LoadBalancer") or (t == "ClusterIP" and bool(as_list(spec.get("externalIPs"))))


def drop_type_dependent_fields(spec: Obj, old_spec: Obj) -> None:
    """``dropTypeDependentFields``: on a type change, clear what the new type cannot have, unless the user changed it."""
    if (spec.get("type") or "ClusterIP") == (old_spec.get("type") or "ClusterIP"):
        return
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        if spec.get("clusterIP") == old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get(
            "clusterIPs"
        ):
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if spec.get("ipFamilies") == old_spec.get("ipFamilies"):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == old_spec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    ports = [p for p in as_list(spec.get("ports")) if isinstance(p, dict)]
    old_ports = [p for p in as_list(old_spec.get("ports")) if isinstance(p, dict)]
    same_node_ports = [p.get("nodePort") for p in ports] == [p.get("nodePort") for p in old_ports]
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and same_node_ports:
        for p in ports:
            p.pop("nodePort", None)
    old_hc = old_spec.get("type") == "LoadBalancer" and old_spec.get("externalTrafficPolicy") == "Local"
    new_hc = spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"
    if old_hc and not new_hc and spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if "allocateLoadBalancerNodePorts" in spec and spec.get(
            "allocateLoadBalancerNodePorts"
        ) == old_spec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if not _externally_accessible(spec) and spec.get("externalTrafficPolicy") == old_spec.get(
        "externalTrafficPolicy"
    ):
        spec.pop("externalTrafficPolicy", None)


class ServiceStrategy(UntrackedGenerationStrategy):
    """Services: kube's defaults, port rules and immutable cluster IPs.

    Allocation of ClusterIPs and NodePorts is :mod:`apiserver.registry.servicealloc`.
    """

    has_status = True

    def default(self, obj: Obj) -> None:
        spec = _spec(obj)
        if not spec.get("sessionAffinity"):
            spec["sessionAffinity"] = "None"
        if spec["sessionAffinity"] == "None":
            spec.pop("sessionAffinityConfig", None)
        elif spec["sessionAffinity"] == "ClientIP":
            cfg = as_dict(as_dict(spec.get("sessionAffinityConfig")).get("clientIP"))
            if cfg.get("timeoutSeconds") is None:
                spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": DEFAULT_CLIENT_IP_TIMEOUT}}
        if not spec.get("type"):
            spec["type"] = "ClusterIP"
        for p in as_list(spec.get("ports")):
            if not isinstance(p, dict):
                continue
            if not p.get("protocol"):
                p["protocol"] = "TCP"
            if p.get("targetPort") in (None, 0, ""):
                p["targetPort"] = p.get("port")
        if spec["type"] in ("NodePort", "LoadBalancer") and not spec.get("externalTrafficPolicy"):
            spec["externalTrafficPolicy"] = "Cluster"
        if spec["type"] != "ExternalName" and spec.get("internalTrafficPolicy") is None:
            spec["internalTrafficPolicy"] = "Cluster"
        if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        if spec.get("clusterIP") and not as_list(spec.get("clusterIPs")):
            spec["clusterIPs"] = [spec["clusterIP"]]

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"loadBalancer": {}}
        spec = _spec(obj)
        if spec.get("type") != "ExternalName":
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("ipFamilies", ["IPv4"])

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_service_spec(as_dict(obj.get("spec")))

    def prepare_for_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        _keep_old_status(new, old)
        drop_type_dependent_fields(_spec(new), as_dict(old.get("spec")))
        spec, old_spec = _spec(new), as_dict(old.get("spec"))
        if (
            spec.get("type") != "ExternalName"
            and old_spec.get("type") != "ExternalName"
            and not spec.get("clusterIP")
        ):
            for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                if key in old_spec:
                    spec[key] = copy.deepcopy(old_spec[key])
        old_node_ports = {
            (p.get("port"), p.get("protocol")): p.get("nodePort")
            for p in map(as_dict, as_list(old_spec.get("ports")))
        }
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            for p in as_list(spec.get("ports")):
                if isinstance(p, dict) and not p.get("nodePort"):
                    np = old_node_ports.get((p.get("port"), p.get("protocol")))
                    if np:
                        p["nodePort"] = np

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
        errs = validate_service_spec(spec)
        if spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName":
            new_ips, old_ips = as_list(spec.get("clusterIPs")), as_list(old_spec.get("clusterIPs"))
            for i in range(min(len(new_ips), len(old_ips))):
                if new_ips[i] != old_ips[i]:
                    errs.append(
                        field.invalid(Path("spec", "clusterIPs").index(i), new_ips, "may not change once set")
                    )
        return errs


def validate_service_spec(spec: Obj) -> ErrorList:
    """``ValidateService`` (spec part): ports, type, affinity, traffic policies."""
    sp = Path("spec")
    errs: ErrorList = []
    stype = _str(spec.get("type"))
    ports = as_list(spec.get("ports"))
    headless = _is_headless(spec)
    if not ports and not headless and stype != "ExternalName":
        errs.append(field.required(sp.child("ports")))
    if stype in ("LoadBalancer", "NodePort") and headless:
        errs.append(
            field.invalid(
                sp.child("clusterIPs").index(0), "None", f"may not be set to 'None' for {stype} services"
            )
        )
    if stype == "ExternalName":
        if as_list(spec.get("clusterIPs")):
            errs.append(field.forbidden(sp.child("clusterIPs"), "may not be set for ExternalName services"))
        cname = _str(spec.get("externalName")).removesuffix(".")
        if cname:
            errs.extend(fmt_errors(cname, sp.child("externalName"), names.is_dns1123_subdomain))
        else:
            errs.append(field.required(sp.child("externalName")))
    seen_names: set[str] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        pp = sp.child("ports").index(i)
        name = _str(port.get("name"))
        if len(ports) > 1 and not name:
            errs.append(field.required(pp.child("name")))
        elif name:
            errs.extend(fmt_errors(name, pp.child("name"), names.is_dns1123_label))
            if name in seen_names:
                errs.append(field.duplicate(pp.child("name"), name))
            seen_names.add(name)
        pnum = _int(port.get("port")) or 0
        errs.extend(field.invalid(pp.child("port"), pnum, m) for m in names.is_valid_port_num(pnum))
        proto = _str(port.get("protocol"))
        if not proto:
            errs.append(field.required(pp.child("protocol")))
        elif proto not in podspec.PORT_PROTOCOLS:
            errs.append(field.not_supported(pp.child("protocol"), proto, podspec.PORT_PROTOCOLS))
        errs.extend(podspec.validate_port_num_or_name(port.get("targetPort"), pp.child("targetPort")))
        if stype == "ClusterIP" and port.get("nodePort"):
            errs.append(field.forbidden(pp.child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
    if spec.get("selector") is not None:
        errs.extend(validate_labels(spec.get("selector"), sp.child("selector")))
    sa = _str(spec.get("sessionAffinity"))
    if not sa:
        errs.append(field.required(sp.child("sessionAffinity")))
    elif sa not in SESSION_AFFINITIES:
        errs.append(field.not_supported(sp.child("sessionAffinity"), sa, SESSION_AFFINITIES))
    if sa == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(
            field.forbidden(
                sp.child("sessionAffinityConfig"), "must not be set when session affinity is None"
            )
        )
    for i, ip in enumerate(as_list(spec.get("externalIPs"))):
        errs.extend(fmt_errors(_str(ip), sp.child("externalIPs").index(i), is_valid_ip))
    if not stype:
        errs.append(field.required(sp.child("type")))
    elif stype not in SERVICE_TYPES:
        errs.append(field.not_supported(sp.child("type"), stype, SERVICE_TYPES))
    seen_ports: set[tuple[Any, Any]] = set()
    seen_node_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        pp = sp.child("ports").index(i)
        np = port.get("nodePort")
        if np:
            if (port.get("protocol"), np) in seen_node_ports:
                errs.append(field.duplicate(pp.child("nodePort"), np))
            seen_node_ports.add((port.get("protocol"), np))
        key = (port.get("protocol"), port.get("port"))
        if key in seen_ports:
            errs.append(field.duplicate(pp, {"port": port.get("port"), "protocol": port.get("protocol")}))
        seen_ports.add(key)
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        errs.append(
            field.forbidden(
                sp.child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"
            )
        )
    etp = _str(spec.get("externalTrafficPolicy"))
    if not _externally_accessible(spec):
        if etp:
            errs.append(
                field.invalid(
                    sp.child("externalTrafficPolicy"),
                    etp,
                    "may only be set for externally-accessible services",
                )
            )
    elif not etp:
        errs.append(field.required(sp.child("externalTrafficPolicy")))
    elif etp not in TRAFFIC_POLICIES:
        errs.append(field.not_supported(sp.child("externalTrafficPolicy"), etp, TRAFFIC_POLICIES))
    itp = spec.get("internalTrafficPolicy")
    if stype == "ExternalName":
        pass
    elif itp is None:
        errs.append(field.required(sp.child("internalTrafficPolicy")))
    elif itp not in TRAFFIC_POLICIES:
        errs.append(field.not_supported(sp.child("internalTrafficPolicy"), itp, TRAFFIC_POLICIES))
    return errs
