"""The resource registry: one small declaration per served resource.

A :class:`ResourceDef` names the resource (group/version/kind/plural), its scope, its
subresources, discovery metadata (short names, categories) and its :class:`Strategy`.
Discovery, OpenAPI, Table printing, the HTTP routes and the in-process client are all
generated from this table, so adding a resource is one declaration plus an optional strategy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from apiserver.rest.strategy import Strategy

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

FieldGetter = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Subresource:
    """A subresource of a resource (``status``, ``scale``...): its response kind and the verbs it serves."""

    name: str  # "status", "scale", "binding", "eviction"
    kind: str  # response kind
    group: str = ""  # response kind group ("" = the resource's own group)
    version: str = ""  # response kind version ("" = the resource's own version)
    verbs: tuple[str, ...] = ("get", "patch", "update")


@dataclass(frozen=True)
class ResourceDef:
    """Everything the registry needs to serve one resource version: its identity, strategy, storage and
    discovery fields."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    strategy: Strategy = field(default_factory=Strategy, compare=False, hash=False)
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    #: extra field selectors beyond metadata.name / metadata.namespace: label -> getter
    field_selectors: dict[str, FieldGetter] = field(default_factory=dict, compare=False, hash=False)
    #: resources sharing storage with another (events.k8s.io/v1 events -> core events)
    storage_of: tuple[str, str] | None = None  # (group, plural) of the primary resource
    #: feature gate that must be on for the resource to be served
    gate: str | None = None
    #: whether strategic-merge-patch is supported (kube: built-in types yes, CRDs no)
    strategic_merge: bool = True
    #: custom resources: presents stored objects in this version and back (``to_view``/``from_view``)
    converter: Any = field(default=None, compare=False, hash=False)
    #: custom resources: the version's complete schema (validation, SSA, OpenAPI documents)
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    #: a Table printer replacing the built-in one (CRD ``additionalPrinterColumns``)
    printer: Any = field(default=None, compare=False, hash=False)
    #: changes whenever the definition behind the resource does (document caches key on it)
    revision: str = ""
    #: sent as a ``Warning`` header with every answer (a CRD's deprecated version)
    deprecation_warning: str = ""
    #: the list kind when it is not ``<Kind>List`` (a CRD's ``names.listKind``)
    list_kind_name: str = ""
    #: kube's ``Store.ReturnDeletedObject``: DELETE answers the deleted object, not a Status
    return_deleted_object: bool = False

    @property
    def is_view(self) -> bool:
        """Stored objects are converted on the way in and out (shared storage, CR versions)."""
        return self.storage_of is not None or self.converter is not None

    # The identity fields are frozen, so the texts made of them are made once per definition
    # (a write asks for its ``apiVersion`` several times: the body's check, the managedFields
    # entry, the in-process client's defaults); ``cached_property`` writes the instance's
    # ``__dict__`` directly, which a frozen dataclass allows, and equality and hashing only
    # read the fields.
    @functools.cached_property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @functools.cached_property
    def api_version(self) -> str:
        return self.group_version

    @property
    def list_kind(self) -> str:
        return self.list_kind_name or self.kind + "List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @functools.cached_property
    def storage_key(self) -> tuple[str, str]:
        """Resources that share storage use the primary's key; others their own ``(group, plural)``."""
        return self.storage_of or (self.group, self.plural)

    def subresource(self, name: str) -> Subresource | None:
        for s in self.subresources:
            if s.name == name:
                return s
        return None

    def url_prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


STATUS = Subresource("status", "", verbs=("get", "patch", "update"))


def status_of(kind: str) -> Subresource:
    return Subresource("status", kind, verbs=("get", "patch", "update"))


class Registry:
    """All served resources, looked up by (group, version, plural) or by (apiVersion, kind)."""

    def __init__(self, defs: Iterable[ResourceDef] = ()) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceDef] = {}
        self._by_gvk: dict[tuple[str, str, str], ResourceDef] = {}
        self._order: list[ResourceDef] = []
        for d in defs:
            self.add(d)

    def add(self, d: ResourceDef) -> None:
        key = (d.group, d.version, d.plural)
        if key in self._by_gvr:
            raise ValueError(f"resource {key} registered twice")
        self._by_gvr[key] = d
        self._by_gvk.setdefault((d.group, d.version, d.kind), d)
        self._order.append(d)

    def remove(self, d: ResourceDef) -> None:
        """Stop serving ``d`` (a custom resource version whose CRD changed or went away)."""
        key = (d.group, d.version, d.plural)
        if self._by_gvr.get(key) is not d:
            return
        del self._by_gvr[key]
        self._order.remove(d)
        if self._by_gvk.get((d.group, d.version, d.kind)) is d:
            del self._by_gvk[(d.group, d.version, d.kind)]
            for other in self._order:
                if (other.group, other.version, other.kind) == (d.group, d.version, d.kind):
                    self._by_gvk[(d.group, d.version, d.kind)] = other
                    break

    def get(self, group: str, version: str, plural: str) -> ResourceDef | None:
        return self._by_gvr.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceDef | None:
        return self._by_gvk.get((group, version, kind))

    def by_api_version_kind(self, api_version: str, kind: str) -> ResourceDef | None:
        group, _, version = api_version.rpartition("/")
        return self._by_gvk.get((group, version, kind))

    def all(self) -> list[ResourceDef]:
        return list(self._order)

    def groups(self) -> dict[str, list[str]]:
        """group -> versions in preference order (first registered is preferred)."""
        out: dict[str, list[str]] = {}
        for d in self._order:
            vs = out.setdefault(d.group, [])
            if d.version not in vs:
                vs.append(d.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceDef]:
        return [d for d in self._order if d.group == group and d.version == version]

    def storage_defs(self) -> list[ResourceDef]:
        """One def per distinct storage key (the primary of shared-storage resources)."""
        seen: set[tuple[str, str]] = set()
        out = []
        for d in self._order:
            if d.storage_of is None and d.storage_key not in seen:
                seen.add(d.storage_key)
                out.append(d)
        return out
