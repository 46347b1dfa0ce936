"""The create-only subresources of built-in kinds: ``pods/binding``, ``pods/eviction``,
``serviceaccounts/token``.

A create on one of these is not a create of the resource: each has its own REST handler in kube
(``BindingREST``, ``EvictionREST``, ``TokenREST``) that reads the parent and writes (or mints)
something else. Both front doors — the HTTP server (:mod:`apiserver.server.app`) and the
in-process client (:mod:`apiserver.server.localclient`) — dispatch through :func:`create_subresource`
so they serve the same set with the same handlers.
"""

from __future__ import annotations

from typing import Any

from apiserver.api.types import Obj
from apiserver.registry.binding import bind
from apiserver.registry.eviction import evict
from apiserver.registry.generic import GenericStore
from apiserver.registry.tokenrequest import create_token
from apiserver.rest.resources import ResourceDef


def create_subresource(
    api: GenericStore, rd: ResourceDef, namespace: str, name: str, subresource: str, body: Any
) -> Obj | None:
    """What a create on ``<rd>/<name>/<subresource>`` answers, or None when ``rd`` has no such
    create subresource (the caller then serves its own, or answers 405 MethodNotAllowed).

    Errors are the handlers' own :class:`~apiserver.errors.StatusError`s.
    """
    if rd.plural == "pods" and subresource == "binding":
        return bind(api, namespace, name, body)
    if rd.plural == "pods" and subresource == "eviction":
        return evict(api, namespace, name, body)
    if rd.plural == "serviceaccounts" and not rd.group and subresource == "token":
        return create_token(api, namespace, name, body)
    return None


__all__ = ["create_subresource"]
