"""What a generic controller knows about the served resources: the discovery subset it needs.

The garbage collector and the namespace controller get a list of
:class:`~apiserver.client.discovery.APIResource` from discovery (their factory asks
``ctx.served_resources()``). :class:`RESTMapper` answers the one question both need about an
``ownerReference`` or an object: which resource is ``(apiVersion, kind)`` and is it namespaced
(client-go's ``RESTMapper.RESTMapping``).
"""

from __future__ import annotations

from collections.abc import Iterable

from apiserver.client.discovery import APIResource

__all__ = ["APIResource", "RESTMapper", "RESTMapperError"]


class RESTMapperError(Exception):
    """``(apiVersion, kind)`` names no served resource (client-go's ``NoKindMatchError``)."""


class RESTMapper:
    """Lookup of served resources by ``(apiVersion, kind)``."""

    def __init__(self, resources: Iterable[APIResource]) -> None:
        self._by_kind: dict[tuple[str, str], APIResource] = {}
        for r in resources:
            self._by_kind.setdefault((r.api_version, r.kind), r)

    def add(self, r: APIResource) -> None:
        """A resource that started being served (a custom resource version)."""
        self._by_kind.setdefault((r.api_version, r.kind), r)

    def remove(self, r: APIResource) -> None:
        if self._by_kind.get((r.api_version, r.kind)) == r:
            del self._by_kind[(r.api_version, r.kind)]

    def mapping(self, api_version: str, kind: str) -> APIResource:
        r = self._by_kind.get((api_version, kind))
        if r is None:
            raise RESTMapperError(f'no matches for kind "{kind}" in version "{api_version}"')
        return r

    def resources(self) -> list[APIResource]:
        return list(self._by_kind.values())
