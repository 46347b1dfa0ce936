"""Parse a request path into a resource request, like kube's ``RequestInfoFactory``."""

from __future__ import annotations

from dataclasses import dataclass

from apiserver.rest.resources import Registry, ResourceDef


@dataclass
class RequestInfo:
    """What a request path names: the resource (if served), namespace, object name and subresource."""

    group: str
    version: str
    namespace: str
    plural: str
    name: str
    subresource: str
    rd: ResourceDef | None

    @property
    def is_collection(self) -> bool:
        return not self.name


def parse_resource_path(path: str, registry: Registry) -> RequestInfo | None:
    """``/api/v1/namespaces/ns/pods/x/status`` -> RequestInfo; None when not a resource path."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    if parts[0] == "api":
        if len(parts) < 3:
            return None
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis":
        if len(parts) < 4:
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = ""
    # /namespaces/{ns}/{plural}... unless it is the namespace object itself (or its subresource)
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns_rd = registry.get(group, version, "namespaces")
        is_ns_sub = ns_rd is not None and len(rest) == 3 and ns_rd.subresource(rest[2]) is not None
        if not is_ns_sub or registry.get(group, version, rest[2]) is not None:
            namespace = rest[1]
            rest = rest[2:]
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3:
        return RequestInfo(group, version, namespace, plural, name, "/".join(rest[2:]), None)
    rd = registry.get(group, version, plural)
    return RequestInfo(group, version, namespace, plural, name, sub, rd)
