"""Strategies of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy (kube's
``pkg/registry/networking`` and ``pkg/apis/networking/validation``).

All three track ``metadata.generation``; Ingress has a ``status`` subresource (load-balancer
addresses written by an ingress controller). gangplane runs no ingress controller or network
plugin: the objects are stored and validated as kube does, and act on nothing.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from apiserver import field
from apiserver.field import ErrorList, Path
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import validate_immutable, validate_label_selector

GROUP = "networking.k8s.io"
PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
POLICY_TYPES = ["Egress", "Ingress"]
PARAMETER_SCOPES = ["Cluster", "Namespace"]
MAX_CONTROLLER_LEN = 250


def _dict(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


_WILDCARD_FMT = "\\*\\." + "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD_RE = re.compile(r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_WILDCARD_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
    "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character"
)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``: ``*.`` then a DNS subdomain."""
    errs: list[str] = []
    if len(value) > 253:
        errs.append(names.max_len_error(253))
    if _WILDCARD_RE.fullmatch(value) is None:
        errs.append(names.regex_error(_WILDCARD_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def _host_errors(host: str, path: Path) -> ErrorList:
    """Rule and TLS hosts: a DNS name (a wildcard one when it has a ``*``), never an IP address."""
    if _is_ip(host):
        return [field.invalid(path, host, "must be a DNS name, not an IP address")]
    check = is_wildcard_dns1123_subdomain if "*" in host else names.is_dns1123_subdomain
    return [field.invalid(path, host, m) for m in check(host)]


# -------------------------------------------------------------------------------------- Ingress


def validate_backend(backend: Any, path: Path) -> ErrorList:
    """``validateIngressBackend``: exactly one of a Service (name + port) or a resource."""
    b = _dict(backend)
    resource, service = b.get("resource"), b.get("service")
    if resource is not None and service is not None:
        return [field.invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        rp = path.child("resource")
        r = _dict(resource)
        errs: ErrorList = []
        if not _str(r.get("kind")):
            errs.append(field.required(rp.child("kind")))
        if not _str(r.get("name")):
            errs.append(field.required(rp.child("name")))
        return errs
    if service is not None:
        s = _dict(service)
        sp = path.child("service")
        errs = []
        name = _str(s.get("name"))
        if not name:
            errs.append(field.required(sp.child("name")))
        else:
            errs.extend(field.invalid(sp.child("name"), name, m) for m in names.is_dns1035_label(name))
        port = _dict(s.get("port"))
        pname, pnum = _str(port.get("name")), port.get("number") or 0
        if pname and pnum:
            errs.append(field.invalid(path, "", "cannot set both port name & port number"))
        elif pname:
            errs.extend(
                field.invalid(sp.child("port", "name"), pname, m) for m in names.is_valid_port_name(pname)
            )
        elif pnum:
            if isinstance(pnum, int):
                errs.extend(
                    field.invalid(sp.child("port", "number"), pnum, m) for m in names.is_valid_port_num(pnum)
                )
        else:
            errs.append(field.required(path, "port name or number is required"))
        return errs
    return [field.invalid(path, "", "resource or service backend is required")]


def validate_ingress_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    rules = _list(spec.get("rules"))
    if not rules and spec.get("defaultBackend") is None:
        errs.append(field.invalid(sp, rules or None, "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs.extend(validate_backend(spec["defaultBackend"], sp.child("defaultBackend")))
    for i, rule in enumerate(rules):
        rp = sp.child("rules").index(i)
        r = _dict(rule)
        host = _str(r.get("host"))
        if host:
            errs.extend(_host_errors(host, rp.child("host")))
        http = r.get("http")
        if http is None:
            continue
        hp = rp.child("http")
        paths = _list(_dict(http).get("paths"))
        if not paths:
            errs.append(field.required(hp.child("paths")))
        for j, p in enumerate(paths):
            pp = hp.child("paths").index(j)
            pd = _dict(p)
            ptype = pd.get("pathType")
            path_value = _str(pd.get("path"))
            if not ptype:
                errs.append(field.required(pp.child("pathType"), "pathType must be specified"))
            elif ptype not in PATH_TYPES:
                errs.append(field.not_supported(pp.child("pathType"), ptype, PATH_TYPES))
            elif ptype in ("Exact", "Prefix"):
                if not path_value.startswith("/"):
                    errs.append(field.invalid(pp.child("path"), path_value, "must be an absolute path"))
                elif "//" in path_value:
                    errs.append(field.invalid(pp.child("path"), path_value, "must not contain '//'"))
            elif path_value and not path_value.startswith("/"):
                errs.append(field.invalid(pp.child("path"), path_value, "must be an absolute path"))
            errs.extend(validate_backend(pd.get("backend"), pp.child("backend")))
    for i, tls in enumerate(_list(spec.get("tls"))):
        for j, host in enumerate(_list(_dict(tls).get("hosts"))):
            if isinstance(host, str):
                errs.extend(_host_errors(host, sp.child("tls").index(i).child("hosts").index(j)))
    cls = spec.get("ingressClassName")
    if cls is not None:
        errs.extend(
            field.invalid(sp.child("ingressClassName"), cls, m) for m in names.is_dns1123_subdomain(_str(cls))
        )
    return errs


def validate_load_balancer_status(status: Obj, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, ing in enumerate(_list(_dict(status.get("loadBalancer")).get("ingress"))):
        ip_path = path.child("loadBalancer", "ingress").index(i)
        ing = _dict(ing)
        ip = _str(ing.get("ip"))
        if ip and not _is_ip(ip):
            errs.append(field.invalid(ip_path.child("ip"), ip, "must be a valid IP address"))
        hostname = _str(ing.get("hostname"))
        if hostname:
            errs.extend(
                field.invalid(ip_path.child("hostname"), hostname, m)
                for m in names.is_dns1123_subdomain(hostname)
            )
            if _is_ip(hostname):
                errs.append(
                    field.invalid(
                        ip_path.child("hostname"), hostname, "must be a DNS name, not an IP address"
                    )
                )
    return errs


class IngressStrategy(Strategy):
    has_status = True

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_ingress_spec(_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_ingress_spec(_dict(new.get("spec")))

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_load_balancer_status(_dict(new.get("status")), Path("status"))

    def prepare_for_create(self, ctx: StrategyContext, obj: Obj) -> None:
        obj["status"] = {"loadBalancer": {}}


# --------------------------------------------------------------------------------- IngressClass


def default_ingress_class(obj: Obj) -> None:
    params = _dict(obj.get("spec")).get("parameters")
    if isinstance(params, dict) and not params.get("scope"):
        params["scope"] = "Cluster"


def validate_ingress_class_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs: ErrorList = []
    controller = _str(spec.get("controller"))
    cp = sp.child("controller")
    if not controller:
        errs.append(field.required(cp))
    elif len(controller) > MAX_CONTROLLER_LEN:
        errs.append(field.too_long(cp, MAX_CONTROLLER_LEN))
    else:
        errs.extend(_domain_prefixed_path(controller, cp))
    params = spec.get("parameters")
    if isinstance(params, dict):
        pp = sp.child("parameters")
        if not _str(params.get("kind")):
            errs.append(field.required(pp.child("kind")))
        if not _str(params.get("name")):
            errs.append(field.required(pp.child("name")))
        group = params.get("apiGroup")
        if group is not None:
            errs.extend(
                field.invalid(pp.child("apiGroup"), group, m) for m in names.is_dns1123_subdomain(_str(group))
            )
        scope = params.get("scope")
        namespace = params.get("namespace")
        if scope not in PARAMETER_SCOPES:
            errs.append(field.not_supported(pp.child("scope"), scope, PARAMETER_SCOPES))
        elif scope == "Namespace" and not namespace:
            errs.append(field.required(pp.child("namespace"), "`parameters.scope` is set to 'Namespace'"))
        elif scope == "Cluster" and namespace is not None:
            errs.append(field.forbidden(pp.child("namespace"), "`parameters.scope` is set to 'Cluster'"))
        if scope == "Namespace" and namespace:
            errs.extend(
                field.invalid(pp.child("namespace"), namespace, m)
                for m in names.is_dns1123_label(_str(namespace))
            )
    return errs


def _domain_prefixed_path(value: str, path: Path) -> ErrorList:
    """``IsDomainPrefixedPath``: ``example.com/path`` (a DNS domain, then a path)."""
    domain, sep, rest = value.partition("/")
    if not sep:
        return [field.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [field.invalid(path, domain, m) for m in names.is_dns1123_subdomain(domain)]
    bad = "".join(ch for ch in rest if not (ch.isalnum() or ch in "-._~!$&'()*+,;=:@/"))
    if bad:
        errs.append(
            field.invalid(path, rest, "Invalid path: must only contain alphanumerics and ~!$&'()*+,;=:@/._-")
        )
    return errs


class IngressClassStrategy(Strategy):
    def default(self, obj: Obj) -> None:
        default_ingress_class(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_ingress_class_spec(_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        errs = validate_ingress_class_spec(_dict(new.get("spec")))
        errs.extend(
            validate_immutable(
                _dict(new.get("spec")).get("controller"),
                _dict(old.get("spec")).get("controller"),
                Path("spec", "controller"),
            )
        )
        return errs


# -------------------------------------------------------------------------------- NetworkPolicy


def default_network_policy(obj: Obj) -> None:
    """``SetDefaults_NetworkPolicy`` (policyTypes) and ``SetDefaults_NetworkPolicyPort`` (TCP)."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    for key in ("ingress", "egress"):
        for rule in _list(spec.get(key)):
            for port in _list(_dict(rule).get("ports")):
                if isinstance(port, dict) and not port.get("protocol"):
                    port["protocol"] = "TCP"
    if not spec.get("policyTypes"):
        types = ["Ingress"]
        if _list(spec.get("egress")):
            types.append("Egress")
        spec["policyTypes"] = types


def _validate_policy_port(port: Any, path: Path) -> ErrorList:
    p = _dict(port)
    errs: ErrorList = []
    proto = p.get("protocol")
    if proto is not None and proto not in PROTOCOLS:
        errs.append(field.not_supported(path.child("protocol"), proto, PROTOCOLS))
    value = p.get("port")
    end = p.get("endPort")
    if isinstance(value, int) and not isinstance(value, bool):
        errs.extend(field.invalid(path.child("port"), value, m) for m in names.is_valid_port_num(value))
        if isinstance(end, int) and not isinstance(end, bool):
            if end < value:
                errs.append(
                    field.invalid(path.child("endPort"), end, "must be greater than or equal to `port`")
                )
            errs.extend(field.invalid(path.child("endPort"), end, m) for m in names.is_valid_port_num(end))
    elif isinstance(value, str):
        errs.extend(field.invalid(path.child("port"), value, m) for m in names.is_valid_port_name(value))
        if end is not None:
            errs.append(
                field.forbidden(path.child("endPort"), "may not be specified when `port` is non-numeric")
            )
    elif end is not None:
        errs.append(
            field.forbidden(path.child("endPort"), "may not be specified when `port` is not specified")
        )
    return errs


def _validate_peer(peer: Any, path: Path) -> ErrorList:
    p = _dict(peer)
    errs: ErrorList = []
    count = 0
    if p.get("podSelector") is not None:
        count += 1
        errs.extend(validate_label_selector(p["podSelector"], path.child("podSelector")))
    if p.get("namespaceSelector") is not None:
        count += 1
        errs.extend(validate_label_selector(p["namespaceSelector"], path.child("namespaceSelector")))
    block = p.get("ipBlock")
    if block is not None:
        count += 1
        bp = path.child("ipBlock")
        cidr = _str(_dict(block).get("cidr"))
        if not cidr:
            errs.append(field.required(bp.child("cidr")))
        else:
            try:
                net = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                errs.append(
                    field.invalid(
                        bp.child("cidr"),
                        cidr,
                        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    )
                )
                net = None
            for i, exc in enumerate(_list(_dict(block).get("except"))):
                ep = bp.child("except").index(i)
                try:
                    sub = ipaddress.ip_network(_str(exc), strict=False)
                except ValueError:
                    errs.append(
                        field.invalid(
                            ep, exc, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
                        )
                    )
                    continue
                if net is not None and (sub.version != net.version or not sub.subnet_of(net) or sub == net):  # type: ignore[arg-type]
                    errs.append(field.invalid(ep, exc, "must be a strict subset of `cidr`"))
        if count > 1:
            return errs + [
                field.forbidden(path, "may not specify more than 1 peer type when `ipBlock` is specified")
            ]
    if count == 0:
        errs.append(field.required(path, "must specify a peer"))
    return errs


def validate_network_policy_spec(spec: Obj) -> ErrorList:
    sp = Path("spec")
    errs = validate_label_selector(spec.get("podSelector") or {}, sp.child("podSelector"))
    for key, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(_list(spec.get(key))):
            rp = sp.child(key).index(i)
            for j, port in enumerate(_list(_dict(rule).get("ports"))):
                errs.extend(_validate_policy_port(port, rp.child("ports").index(j)))
            for j, peer in enumerate(_list(_dict(rule).get(peers))):
                errs.extend(_validate_peer(peer, rp.child(peers).index(j)))
    types = _list(spec.get("policyTypes"))
    for i, t in enumerate(types):
        if t not in POLICY_TYPES:
            errs.append(field.not_supported(sp.child("policyTypes").index(i), t, POLICY_TYPES))
    if len(types) > len(POLICY_TYPES):
        errs.append(
            field.invalid(sp.child("policyTypes"), types, "may not specify more than two policyTypes")
        )
    return errs


class NetworkPolicyStrategy(Strategy):
    def default(self, obj: Obj) -> None:
        default_network_policy(obj)

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_network_policy_spec(_dict(obj.get("spec")))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_network_policy_spec(_dict(new.get("spec")))


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "ingresses"): IngressStrategy(),
    (GROUP, "ingressclasses"): IngressClassStrategy(),
    (GROUP, "networkpolicies"): NetworkPolicyStrategy(),
}
