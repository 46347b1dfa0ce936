"""Admission: mutating and validating plugins run by the generic registry on every write.

A plugin sees an :class:`Attributes` (operation, resource, object, old object) and a read-only
view of the API (:class:`Lookup`) for the lookups kube's plugins make (namespaces, priority
classes, pod groups). It mutates ``attrs.obj`` in ``admit`` and raises a ``StatusError`` to reject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from apiserver.api.types import Obj
from apiserver.rest.resources import ResourceDef
from featuregates import FeatureGate

CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
CONNECT = "CONNECT"


@dataclass
class Attributes:
    """What an admission plugin sees of one request (kube's ``admission.Attributes``); plugins may append
    warnings."""

    operation: str
    rd: ResourceDef
    namespace: str
    name: str
    obj: Obj | None
    old: Obj | None
    subresource: str = ""
    dry_run: bool = False
    gates: FeatureGate = field(default_factory=FeatureGate)
    warnings: list[str] = field(default_factory=list)
    #: who asks (``apiserver.api.users.UserInfo``); None for in-process callers (the loopback user)
    user: Any = None
    #: the request's options object (CreateOptions / UpdateOptions / DeleteOptions / PatchOptions)
    options: Obj | None = None
    #: audit annotations admission adds (``<policy>/<key>`` -> value), kube's ``AddAnnotation``
    audit_annotations: dict[str, str] = field(default_factory=dict)
    #: per plugin, its ``reinvocationPolicy: IfNeeded`` items with the object's digest after each ran
    reinvocations: dict[str, list[tuple[Any, str]]] = field(default_factory=dict)
    #: ``obj``/``old`` are the subresource's own kind (an ``autoscaling/v1`` Scale for ``/scale``), not
    #: the resource's stored shape: they are presented as they are, never converted between versions
    subresource_kind: bool = False


class Lookup(Protocol):
    """Read-only access to stored objects for admission decisions: copies from ``lookup``; the
    stored objects themselves from ``peek``/``peek_all``, for plugins that only read them (never
    modify them)."""

    def lookup(self, group: str, plural: str, namespace: str, name: str) -> Obj | None: ...

    def peek(self, group: str, plural: str, namespace: str, name: str) -> Obj | None: ...

    def lookup_all(self, group: str, plural: str, namespace: str = "") -> list[Obj]: ...

    def peek_all(self, group: str, plural: str, namespace: str = "") -> list[Obj]: ...


class AdmissionPlugin(Protocol):
    name: str

    def admit(self, attrs: Attributes, api: Lookup) -> None: ...

    def validate(self, attrs: Attributes, api: Lookup) -> None: ...


class Plugin:
    """Base with no-op hooks."""

    name = "Plugin"

    def handles(self, operation: str, rd: ResourceDef) -> bool:
        """Whether ``admit``/``validate`` can act on an ``operation`` of ``rd`` at all: kube's
        ``Handles(operation)``, by resource too. A plugin that answers False is left out of that
        resource's :class:`~apiserver.admission.plan.AdmissionPlan` (it would have returned without
        doing anything); True, the default, when the answer depends on more than the two (the
        request's object, stored configuration, feature gates)."""
        return True

    def admit(self, attrs: Attributes, api: Lookup) -> None:
        return None

    def admits_nothing(self, operation: str, rd: ResourceDef, api: Any) -> bool:
        """Whether ``admit`` provably leaves every ``operation`` of ``rd`` as it is *now* (by
        the stored configuration, not the request): the registry asks it before it hands a
        write's values to mutating admission, and keeps them uncopied where no hook can change
        them. Must be cheap (asked per write); False, the default, when the plugin cannot say."""
        return False

    def validate(self, attrs: Attributes, api: Lookup) -> None:
        return None
