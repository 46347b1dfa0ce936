"""API discovery documents generated from the :class:`Registry` (kubectl.md §2).

Two flavours are served from the same table:

* **Aggregated** (``apidiscovery.k8s.io/v2`` ``APIGroupDiscoveryList``) on ``/api`` and ``/apis``:
  kubectl uses it only when the reply carries exactly :data:`AGGREGATED_DISCOVERY_CONTENT_TYPE`,
  so :func:`~apiserver.server.negotiation.wants_aggregated` returns the content type to answer with.
* **Legacy** (``APIVersions``, ``APIGroupList``, ``APIGroup``, ``APIResourceList``), still needed
  for Accepts without ``as=`` and by the Python dynamic client, which discovers only this way.

A resource is listed only while its :attr:`ResourceDef.gate` is enabled, so turning a gate off
makes ``kubectl api-resources`` and ``kubectl get <kind>`` behave as on a cluster without the
API. A group (or group-version) with nothing enabled disappears entirely. Resources that share
storage with another (events.k8s.io/v1 events) are listed in their own group, with the primary's
storage version hash, as kube does.

Ordering follows kube-apiserver: groups and versions in registration (preference) order, the
first version preferred; resources sorted by name, each legacy subresource entry right after
its parent (``pods``, ``pods/binding``, ``pods/eviction``, ``pods/status``).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Protocol

from apiserver.rest.resources import Registry, ResourceDef, Subresource
from apiserver.server.negotiation import (
    AGGREGATED_GROUP,
    AGGREGATED_VERSIONS,
)


class GateView(Protocol):
    """What discovery needs of a feature gate set (``featuregates.FeatureGate`` satisfies it)."""

    def enabled(self, name: str) -> bool: ...


def _served(d: ResourceDef, gates: GateView) -> bool:
    return d.gate is None or gates.enabled(d.gate)


def served_defs(registry: Registry, gates: GateView) -> list[ResourceDef]:
    """Every resource currently served, in registration order."""
    return [d for d in registry.all() if _served(d, gates)]


def served_groups(registry: Registry, gates: GateView) -> dict[str, list[str]]:
    """group -> served versions, preferred first; groups with nothing served are absent."""
    out: dict[str, list[str]] = {}
    for group, versions in registry.groups().items():
        live = [v for v in versions if any(_served(d, gates) for d in registry.in_group_version(group, v))]
        if live:
            out[group] = live
    return out


def _resources_in(registry: Registry, group: str, version: str, gates: GateView) -> list[ResourceDef]:
    return sorted(
        (d for d in registry.in_group_version(group, version) if _served(d, gates)),
        key=lambda d: d.plural,
    )


def _sorted_verbs(verbs: tuple[str, ...]) -> list[str]:
    return sorted(set(verbs))


def _storage_def(registry: Registry, d: ResourceDef) -> ResourceDef:
    """The def whose GVK is stored: the primary for shared storage, else ``d`` itself."""
    if d.storage_of is None:
        return d
    group, plural = d.storage_of
    for other in registry.all():
        if other.storage_of is None and (other.group, other.plural) == (group, plural):
            return other
    return d


def storage_version_hash(registry: Registry, d: ResourceDef) -> str:
    """A stable opaque hash of the storage version, like kube's: 8 bytes of SHA-256, base64.

    Clients only compare it for equality (to notice storage-version changes), so resources
    sharing storage share the hash.
    """
    s = _storage_def(registry, d)
    # every served version of a custom resource is stored in its CRD's storage version
    version = getattr(d.converter, "storage_version", "") or s.version
    digest = hashlib.sha256(f"{s.group}/{version}/{s.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def _sub_gvk(d: ResourceDef, sub: Subresource) -> tuple[str, str, str]:
    """The response kind of a subresource; empty fields mean the resource's own group/version/kind."""
    return sub.group or d.group, sub.version or d.version, sub.kind or d.kind


# --------------------------------------------------------------------------------------------
# legacy discovery


def api_versions(server_address: str) -> dict[str, Any]:
    """``GET /api``: the legacy ``APIVersions`` document; ``server_address`` is ``host:port``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_body(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry, gates: GateView) -> dict[str, Any]:
    """``GET /apis``: ``APIGroupList`` of every named group with at least one served resource."""
    groups = [_group_body(g, vs) for g, vs in served_groups(registry, gates).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str, gates: GateView) -> dict[str, Any] | None:
    """``GET /apis/<group>``: the ``APIGroup``, or None when the group is not served (404)."""
    versions = served_groups(registry, gates).get(group) if group else None
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_body(group, versions)}


def _legacy_resource(registry: Registry, d: ResourceDef) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": d.plural,
        "singularName": d.singular_name,
        "namespaced": d.namespaced,
        "kind": d.kind,
        "verbs": _sorted_verbs(d.verbs),
    }
    if d.short_names:
        entry["shortNames"] = list(d.short_names)
    if d.categories:
        entry["categories"] = list(d.categories)
    entry["storageVersionHash"] = storage_version_hash(registry, d)
    return entry


def _legacy_subresource(d: ResourceDef, sub: Subresource) -> dict[str, Any]:
    group, version, kind = _sub_gvk(d, sub)
    entry: dict[str, Any] = {"name": f"{d.plural}/{sub.name}", "singularName": "", "namespaced": d.namespaced}
    if (group, version) != (d.group, d.version):
        entry["group"] = group
        entry["version"] = version
    entry["kind"] = kind
    entry["verbs"] = _sorted_verbs(sub.verbs)
    return entry


def api_resource_list(registry: Registry, group: str, version: str, gates: GateView) -> dict[str, Any] | None:
    """``GET /api/v1`` or ``/apis/<group>/<version>``: ``APIResourceList``; None when not served."""
    defs = _resources_in(registry, group, version, gates)
    if not defs:
        return None
    resources: list[dict[str, Any]] = []
    for d in defs:
        resources.append(_legacy_resource(registry, d))
        for sub in sorted(d.subresources, key=lambda s: s.name):
            resources.append(_legacy_subresource(d, sub))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def server_resource_lists(registry: Registry, gates: GateView) -> list[dict[str, Any]]:
    """Every served group-version's ``APIResourceList``, core first, then groups in preference order.

    What a client's ``server_resources`` discovery call returns: the same documents, in the
    order a discovery client walks ``/api`` then ``/apis``.
    """
    out: list[dict[str, Any]] = []
    groups = served_groups(registry, gates)
    for group in sorted(groups, key=lambda g: g != ""):
        for version in groups[group]:
            rl = api_resource_list(registry, group, version, gates)
            if rl is not None:
                out.append(rl)
    return out


# --------------------------------------------------------------------------------------------
# aggregated discovery


def _aggregated_resource(d: ResourceDef) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": d.plural,
        "responseKind": {"group": d.group, "version": d.version, "kind": d.kind},
        "scope": "Namespaced" if d.namespaced else "Cluster",
        "singularResource": d.singular_name,
        "verbs": _sorted_verbs(d.verbs),
    }
    if d.short_names:
        entry["shortNames"] = list(d.short_names)
    if d.categories:
        entry["categories"] = list(d.categories)
    if d.subresources:
        subs = []
        for sub in sorted(d.subresources, key=lambda s: s.name):
            group, version, kind = _sub_gvk(d, sub)
            subs.append(
                {
                    "subresource": sub.name,
                    "responseKind": {"group": group, "version": version, "kind": kind},
                    "verbs": _sorted_verbs(sub.verbs),
                }
            )
        entry["subresources"] = subs
    return entry


def aggregated_discovery(
    registry: Registry, core: bool, gates: GateView, version: str = "v2"
) -> dict[str, Any]:
    """``APIGroupDiscoveryList`` for ``/api`` (``core=True``: one item named ``""``) or ``/apis``.

    ``version`` is ``v2`` or ``v2beta1`` (same shape), matching what :func:`wants_aggregated`
    negotiated. Every version is ``freshness: Current``: all of them live in this process.
    """
    if version not in AGGREGATED_VERSIONS:
        raise ValueError(f"unknown aggregated discovery version {version!r}")
    items: list[dict[str, Any]] = []
    for group, versions in served_groups(registry, gates).items():
        if bool(group) == core:
            continue
        items.append(
            {
                "metadata": {"name": group},
                "versions": [
                    {
                        "version": v,
                        "resources": [
                            _aggregated_resource(d) for d in _resources_in(registry, group, v, gates)
                        ],
                        "freshness": "Current",
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"{AGGREGATED_GROUP}/{version}",
        "metadata": {},
        "items": items,
    }
