"""The stored RBAC objects as the authorizer's :class:`~apiserver.auth.rbac.PolicySource`.

kube's authorizer reads roles and bindings from informer caches; here the cache is a snapshot of
the store, dropped whenever an rbac.authorization.k8s.io object is written (the registry's write
hooks), so every decision sees the policy as of the last committed write.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from apiserver.api.types import Obj
from apiserver.rest.resources import ResourceDef

if TYPE_CHECKING:
    from apiserver.registry.generic import GenericStore

GROUP = "rbac.authorization.k8s.io"


class StorePolicySource:
    def __init__(self, api: GenericStore) -> None:
        self._api = api
        self._crbs: list[Obj] | None = None
        self._rbs: dict[str, list[Obj]] = {}
        self._cluster_roles: dict[str, Obj | None] = {}
        self._roles: dict[tuple[str, str], Obj | None] = {}
        api.write_hooks.append(self._observe)

    def _observe(self, verb: str, rd: ResourceDef, obj: Obj) -> None:
        if rd.group == GROUP:
            self.invalidate()

    def invalidate(self) -> None:
        self._crbs = None
        self._rbs.clear()
        self._cluster_roles.clear()
        self._roles.clear()

    def cluster_role_bindings(self) -> Iterable[Obj]:
        if self._crbs is None:
            self._crbs = self._api.lookup_all(GROUP, "clusterrolebindings")
        return self._crbs

    def role_bindings(self, namespace: str) -> Iterable[Obj]:
        got = self._rbs.get(namespace)
        if got is None:
            got = self._rbs[namespace] = self._api.lookup_all(GROUP, "rolebindings", namespace)
        return got

    def cluster_role(self, name: str) -> Obj | None:
        if name not in self._cluster_roles:
            self._cluster_roles[name] = self._api.lookup(GROUP, "clusterroles", "", name)
        return self._cluster_roles[name]

    def role(self, namespace: str, name: str) -> Obj | None:
        key = (namespace, name)
        if key not in self._roles:
            self._roles[key] = self._api.lookup(GROUP, "roles", namespace, name)
        return self._roles[key]
