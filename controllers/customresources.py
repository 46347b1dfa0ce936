"""Custom resources as a generic controller learns about them: by watching CRDs through the API.

kube's garbage collector and namespace controller re-read discovery to find resources that appear
after they started. gangplane's components see only a client, so they follow the
``apiextensions.k8s.io/v1`` ``customresourcedefinitions`` with an informer instead: a CRD that is
``Established`` serves its accepted names in every ``served`` version, the preferred one first
(kube's version order), until it is deleted. :class:`CustomResourceDiscovery` keeps that set and
calls back on every resource that appears or goes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from apiserver.api.types import Obj
from apiserver.client.informer import InformerFactory
from apiserver.client.interface import GVR
from controllers.resources import APIResource

CRDS = GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def _version_key(name: str) -> tuple[int, int, int, str]:
    m = _KUBE_VERSION.match(name)
    if not m:
        return (3, 0, 0, name)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), name)


def _established(crd: Obj) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or ()
    )


def custom_resources(crd: Obj) -> list[APIResource]:
    """What an Established CRD serves, preferred version first; nothing otherwise."""
    if not _established(crd):
        return []
    spec = crd.get("spec") or {}
    names = (crd.get("status") or {}).get("acceptedNames") or {}
    group, plural, kind = spec.get("group") or "", names.get("plural") or "", names.get("kind") or ""
    if not (group and plural and kind):
        return []
    versions = sorted(
        (str(v.get("name")) for v in spec.get("versions") or () if isinstance(v, dict) and v.get("served")),
        key=_version_key,
    )
    return [APIResource(GVR(group, v, plural), kind, spec.get("scope") == "Namespaced") for v in versions]


class CustomResourceDiscovery:
    """The custom resources currently served, kept from a CRD informer (see module docstring).

    ``on_added``/``on_removed`` receive the list of one CRD's resources (preferred version first).
    """

    def __init__(
        self,
        informers: InformerFactory,
        on_added: Callable[[list[APIResource]], None] | None = None,
        on_removed: Callable[[list[APIResource]], None] | None = None,
    ) -> None:
        self._by_crd: dict[str, list[APIResource]] = {}
        self._on_added = on_added
        self._on_removed = on_removed
        self.informer = informers.informer(CRDS)
        self.informer.add_event_handler(self._observe, lambda old, new: self._observe(new), self._forget)

    def resources(self) -> list[APIResource]:
        return [r for rs in self._by_crd.values() for r in rs]

    def _observe(self, crd: Obj) -> None:
        name = (crd.get("metadata") or {}).get("name") or ""
        now = custom_resources(crd)
        before = self._by_crd.get(name, [])
        if now == before:
            return
        if before:
            self._by_crd.pop(name)
            if self._on_removed is not None:
                self._on_removed(before)
        if now:
            self._by_crd[name] = now
            if self._on_added is not None:
                self._on_added(now)

    def _forget(self, crd: Obj) -> None:
        before = self._by_crd.pop((crd.get("metadata") or {}).get("name") or "", [])
        if before and self._on_removed is not None:
            self._on_removed(before)
