"""The controller manager: which controllers exist, which ones run, and how each is built.

This is composition-root code (like kube-controller-manager's ``NewControllerDescriptors``): it may
read the API server's resource registry to tell the garbage collector and the namespace controller
which resources exist, because the in-process client has no discovery. Controllers themselves only
ever see a client.

``register_controllers(cp, "*,-namespace", cluster)`` registers a factory for every known
controller on the :class:`~apiserver.controlplane.ControlPlane` (so a test may still start one by
hand) and returns the names selected by the flag, in start order. The flag is kube's
``--controllers``: ``*`` turns on every controller that is on by default, ``name`` turns one on,
``-name`` turns one off; a name (canonical, or kube's short alias such as ``statefulset``) that is
not known raises ``ValueError``. Each controller runs as its own component with its own client
(user agent = its name), informers, queue and workers, so ``cp.stop_component(name)`` /
``cp.start_component(name)`` crash and restart exactly one of them.

Optional controllers are registered when their module is installed: the node agent
(``controllers.nodeagent``, given the ``cluster`` fleet) and the PodGroup protection controller
(``controllers.podgroupprotection``, only started while PodGroups are served).

The KEP-6277 extension plugs into the StatefulSet controller without touching this module's
callers: when ``controllers.statefulset.workload`` exists and defines
``new_scheduling_hook(cp) -> SchedulingHook``, every StatefulSet controller gets that hook.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apiserver.client.interface import GVR, PODGROUPS
from controllers.metrics import controller_metrics
from controllers.resources import APIResource

if TYPE_CHECKING:
    from apiserver.controlplane import Component, ControlPlane
    from controllers.statefulset.hooks import SchedulingHook

GARBAGE_COLLECTOR = "garbage-collector-controller"
NAMESPACE = "namespace-controller"
STATEFULSET = "statefulset-controller"
PV_BINDER = "persistentvolume-binder-controller"
NODE_AGENT = "node-agent"
PODGROUP_PROTECTION = "podgroup-protection-controller"
RESOURCE_CLAIM = "resource-claim-controller"

#: resources the garbage collector ignores by default (kube's ``DefaultIgnoredResources``)
GC_IGNORED = frozenset({("", "events")})


@dataclass(frozen=True)
class ControllerSpec:
    name: str
    factory: Callable[[ControlPlane], Component]
    aliases: tuple[str, ...] = ()
    enabled_by_default: bool = True
    #: a resource the controller cannot run without; it is not started while that is not served
    requires: GVR | None = None


# ---------------------------------------------------------------------------------- discovery
def served_resources(cp: ControlPlane, component: str) -> list[APIResource]:
    """Every resource the API serves and ``component``'s gates allow, once per storage.

    ``events.k8s.io`` events share storage with core events and are skipped, as are resources
    whose feature gate is off (for the API server or for the component).
    """
    gates = cp.gates_for(component)
    out: list[APIResource] = []
    for rd in cp.api.registry.all():
        if rd.storage_of is not None or not cp.api.served(rd):
            continue
        if rd.gate is not None and not gates.enabled(rd.gate):
            continue
        out.append(
            APIResource(GVR(rd.group, rd.version, rd.plural), rd.kind, rd.namespaced, frozenset(rd.verbs))
        )
    return out


def gc_resources(cp: ControlPlane) -> list[APIResource]:
    """What the garbage collector watches: deletable, listable, watchable, not ignored."""
    return [
        r
        for r in served_resources(cp, GARBAGE_COLLECTOR)
        if r.supports("delete", "list", "watch") and (r.gvr.group, r.gvr.resource) not in GC_IGNORED
    ]


def namespaced_resources(cp: ControlPlane) -> list[APIResource]:
    """What the namespace controller empties: every namespaced resource that can be deleted."""
    return [r for r in served_resources(cp, NAMESPACE) if r.namespaced and r.supports("delete", "list")]


# ---------------------------------------------------------------------------------- factories
def _statefulset_hook(cp: ControlPlane) -> SchedulingHook | None:
    try:
        mod = importlib.import_module("controllers.statefulset.workload")
    except ModuleNotFoundError as e:
        if e.name != "controllers.statefulset.workload":
            raise
        return None
    factory = getattr(mod, "new_scheduling_hook", None)
    return factory(cp) if factory is not None else None


def new_statefulset_controller(cp: ControlPlane) -> Component:
    from controllers.statefulset import StatefulSetController

    return StatefulSetController(
        cp.client(STATEFULSET),
        clock=cp.clock,
        metrics=controller_metrics(cp.metrics_registry),
        scheduling_hook=_statefulset_hook(cp),
    )


def new_garbage_collector(cp: ControlPlane) -> Component:
    from controllers.garbagecollector import GarbageCollector

    return GarbageCollector(
        cp.client(GARBAGE_COLLECTOR),
        gc_resources(cp),
        clock=cp.clock,
        metrics=controller_metrics(cp.metrics_registry),
    )


def new_namespace_controller(cp: ControlPlane) -> Component:
    from controllers.namespace import NamespaceController

    return NamespaceController(
        cp.client(NAMESPACE),
        namespaced_resources(cp),
        clock=cp.clock,
        metrics=controller_metrics(cp.metrics_registry),
    )


def new_pv_binder(cp: ControlPlane) -> Component:
    from controllers.volume import PVBinder

    return PVBinder(cp.client(PV_BINDER), clock=cp.clock, metrics=controller_metrics(cp.metrics_registry))


def new_resource_claim_controller(cp: ControlPlane) -> Component:
    """PodGroup claims only with ``DRAWorkloadResourceClaims`` on for the controller and PodGroups served."""
    from controllers.resourceclaim.controller import ResourceClaimController
    from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS

    gates = cp.gates_for(RESOURCE_CLAIM)
    group_claims = gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) and PODGROUPS in {
        r.gvr for r in served_resources(cp, RESOURCE_CLAIM)
    }
    return ResourceClaimController(
        cp.client(RESOURCE_CLAIM),
        group_claims=group_claims,
        clock=cp.clock,
        metrics=controller_metrics(cp.metrics_registry),
    )


def known_controllers(cluster: Any = None) -> list[ControllerSpec]:
    """Every controller this build has, in start order (the node agent only if it is installed)."""
    specs: list[ControllerSpec] = []
    try:
        from controllers.nodeagent import node_agent_factory
    except ModuleNotFoundError as e:
        if e.name is None or not e.name.startswith("controllers.nodeagent"):
            raise
    else:
        specs.append(ControllerSpec(NODE_AGENT, node_agent_factory(cluster), ("nodeagent",)))
    specs += [
        ControllerSpec(GARBAGE_COLLECTOR, new_garbage_collector, ("garbagecollector",)),
        ControllerSpec(NAMESPACE, new_namespace_controller, ("namespace",)),
        ControllerSpec(PV_BINDER, new_pv_binder, ("persistentvolume-binder",)),
        ControllerSpec(STATEFULSET, new_statefulset_controller, ("statefulset",)),
        ControllerSpec(RESOURCE_CLAIM, new_resource_claim_controller, ("resourceclaim", "resource-claim")),
    ]
    try:
        from controllers.podgroupprotection import new_podgroup_protection_controller
    except ModuleNotFoundError as e:
        if e.name != "controllers.podgroupprotection":
            raise
    else:
        specs.append(
            ControllerSpec(
                PODGROUP_PROTECTION,
                new_podgroup_protection_controller,
                ("podgroup-protection",),
                requires=PODGROUPS,
            )
        )
    return specs


# ---------------------------------------------------------------------------------- selection
def select_controllers(flag: str, specs: Sequence[ControllerSpec]) -> list[str]:
    """kube's ``--controllers`` semantics over ``specs``; returns canonical names in spec order."""
    canonical = {s.name: s.name for s in specs}
    for s in specs:
        for a in s.aliases:
            canonical[a] = s.name
    star = False
    on: set[str] = set()
    off: set[str] = set()
    for raw in flag.split(","):
        item = raw.strip()
        if not item:
            continue
        if item == "*":
            star = True
            continue
        negate = item.startswith("-")
        name = item[1:] if negate else item
        if name not in canonical:
            known = ", ".join(s.name for s in specs)
            raise ValueError(f'"{name}" is not in the list of known controllers (known: {known})')
        (off if negate else on).add(canonical[name])
    selected = []
    for s in specs:
        if s.name in off:
            continue
        if s.name in on or (star and s.enabled_by_default):
            selected.append(s.name)
    return selected


def register_controllers(cp: ControlPlane, controllers: str = "*", cluster: Any = None) -> list[str]:
    """Register every known controller's factory on ``cp``; return the names ``controllers`` selects."""
    specs = known_controllers(cluster)
    selected = select_controllers(controllers, specs)
    for s in specs:
        cp.register(s.name, s.factory)
    unavailable = {
        s.name
        for s in specs
        if s.requires is not None and s.requires not in {r.gvr for r in served_resources(cp, s.name)}
    }
    return [n for n in selected if n not in unavailable]
