"""Client-side discovery: the served resources as a component sees them (client-go's ``discovery``).

:meth:`Client.server_resources` returns the legacy ``APIResourceList`` documents, exactly what
``GET /api/v1`` and ``GET /apis/<group>/<version>`` answer over HTTP. :func:`api_resources`
turns them into :class:`APIResource` entries, the subset a generic controller (garbage collector,
namespace controller) needs: subresources are dropped, and a resource sharing storage with one
listed earlier (``events.k8s.io`` events, same ``storageVersionHash`` as core events) is listed
once, under its first (preferred) name, as kube's ``discovery.ServerPreferredResources`` users do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from apiserver.api.types import Obj
from apiserver.client.interface import GVR

ALL_VERBS = frozenset({"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"})


@dataclass(frozen=True)
class APIResource:
    """One top-level resource of a discovery document, as components need it: where it lives and which
    verbs it takes."""

    gvr: GVR
    kind: str
    namespaced: bool
    verbs: frozenset[str] = ALL_VERBS

    @property
    def api_version(self) -> str:
        return self.gvr.api_version

    def supports(self, *verbs: str) -> bool:
        return all(v in self.verbs for v in verbs)


def _group_version(gv: str) -> tuple[str, str]:
    group, _, version = gv.rpartition("/")
    return group, version


def api_resources(resource_lists: Iterable[Obj], *, dedupe_storage: bool = True) -> list[APIResource]:
    """Top-level resources of ``APIResourceList`` documents, in discovery order."""
    out: list[APIResource] = []
    seen_storage: set[str] = set()
    for rl in resource_lists:
        group, version = _group_version(rl.get("groupVersion", ""))
        for r in rl.get("resources") or []:
            name = r.get("name", "")
            if "/" in name:
                continue
            svh = r.get("storageVersionHash", "")
            if dedupe_storage and svh:
                if svh in seen_storage:
                    continue
                seen_storage.add(svh)
            out.append(
                APIResource(
                    GVR(group, version, name),
                    r.get("kind", ""),
                    bool(r.get("namespaced")),
                    frozenset(r.get("verbs") or ()),
                )
            )
    return out
