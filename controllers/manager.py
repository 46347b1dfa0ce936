"""The controller manager: which controllers exist, which ones run, and how each is built.

Like kube-controller-manager's ``NewControllerDescriptors``: each controller has a name, aliases
and a factory taking the :class:`~apiserver.client.context.ComponentContext` the composition
root builds for it. Factories read only the context: a client (user agent = the controller's
name), its gate view, the clock, the metrics registry and discovery
(``ctx.served_resources()``, which tells the garbage collector and the namespace controller which
resources exist). No controller sees the registry or the store.

``register_controllers(cp, "*,-namespace", cluster)`` registers a factory for every known
controller on the :class:`~apiserver.client.context.ComponentRegistrar` (the composition root's
``ControlPlane``, so a test may still start one by hand) and returns the names selected by the
flag, in start order. The flag is kube's ``--controllers``: ``*`` turns on every controller that
is on by default, ``name`` turns one on, ``-name`` turns one off; a name (canonical, or kube's
short alias such as ``statefulset``) that is not known raises ``ValueError``. Each controller runs
as its own component with its own client, informers, queue and workers, so
``cp.stop_component(name)`` / ``cp.start_component(name)`` crash and restart exactly one of them.

The node agent is given the ``cluster`` fleet; the PodGroup protection controller is only
started while PodGroups are served. Every StatefulSet controller gets the KEP-6277 scheduling
hook (:func:`controllers.statefulset.workload.new_scheduling_hook`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apiserver.client.context import Component, ComponentContext, ComponentFactory, ComponentRegistrar
from apiserver.client.discovery import APIResource
from apiserver.client.interface import ENDPOINTSLICES, GVR, PODGROUPS
from controllers.admissionpolicystatus import (
    VALIDATING_ADMISSION_POLICIES,
    new_admission_policy_status_controller,
)
from controllers.clusterroleaggregation import CLUSTERROLES, new_clusterrole_aggregation_controller
from controllers.cronjob import CronJobController
from controllers.daemonset import DaemonSetsController
from controllers.deployment import DeploymentController
from controllers.endpointslice import EndpointSliceController
from controllers.garbagecollector import GarbageCollector
from controllers.job import JobController
from controllers.job.workload import new_scheduling_hook as new_job_scheduling_hook
from controllers.metrics import controller_metrics
from controllers.namespace import NamespaceController
from controllers.nodeagent import SERVE_TIME_SCALE, node_agent_factory
from controllers.nodelifecycle import node_lifecycle_factory, taint_eviction_factory
from controllers.podautoscaler import hpa_factory
from controllers.podgroupprotection import new_podgroup_protection_controller
from controllers.replicaset import REPLICATIONCONTROLLERS, ReplicaSetController, ReplicationManager
from controllers.resourceclaim import ResourceClaimController
from controllers.serviceaccount import ServiceAccountsController
from controllers.serviceaccount.tokens import TokensController
from controllers.statefulset import StatefulSetController
from controllers.statefulset.workload import new_scheduling_hook
from controllers.ttlafterfinished import TTLAfterFinishedController
from controllers.volume import PVBinder
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS, STATEFULSET_WORKLOAD_CLAIM_RELEASE
from featuregates.scopes import CONTROLLER_MANAGER, KUBELET

GARBAGE_COLLECTOR = "garbage-collector-controller"
NAMESPACE = "namespace-controller"
STATEFULSET = "statefulset-controller"
PV_BINDER = "persistentvolume-binder-controller"
NODE_AGENT = KUBELET  # the node agent stands in for the kubelet (and reads its gate view)
PODGROUP_PROTECTION = "podgroup-protection-controller"
RESOURCE_CLAIM = "resource-claim-controller"
JOB = "job-controller"
CRONJOB = "cronjob-controller"
TTL_AFTER_FINISHED = "ttl-after-finished-controller"
NODE_LIFECYCLE = "node-lifecycle-controller"
TAINT_EVICTION = "taint-eviction-controller"
HPA = "horizontal-pod-autoscaler-controller"
CLUSTERROLE_AGGREGATION = "clusterrole-aggregation-controller"
REPLICASET = "replicaset-controller"
REPLICATIONCONTROLLER = "replicationcontroller-controller"
DEPLOYMENT = "deployment-controller"
DAEMONSET = "daemonset-controller"
SERVICEACCOUNT = "serviceaccount-controller"
SERVICEACCOUNT_TOKEN = "serviceaccount-token-controller"
ENDPOINTSLICE = "endpointslice-controller"
ADMISSION_POLICY_STATUS = "validatingadmissionpolicy-status-controller"

#: resources the garbage collector ignores by default (kube's ``DefaultIgnoredResources``)
GC_IGNORED = frozenset({("", "events")})


@dataclass(frozen=True)
class ControllerSpec:
    """A controller the manager can run: its name, factory, aliases and whether it runs by default."""

    name: str
    factory: ComponentFactory
    aliases: tuple[str, ...] = ()
    enabled_by_default: bool = True
    #: a resource the controller cannot run without; it is not started while that is not served
    requires: GVR | None = None


# ---------------------------------------------------------------------------------- discovery
def gc_resources(ctx: ComponentContext) -> list[APIResource]:
    """What the garbage collector watches: deletable, listable, watchable, not ignored.

    ``events.k8s.io`` events share storage with core events, so discovery lists them once.
    """
    return [
        r
        for r in ctx.served_resources()
        if r.supports("delete", "list", "watch") and (r.gvr.group, r.gvr.resource) not in GC_IGNORED
    ]


def namespaced_resources(ctx: ComponentContext) -> list[APIResource]:
    """What the namespace controller empties: every namespaced resource that can be deleted."""
    return [r for r in ctx.served_resources() if r.namespaced and r.supports("delete", "list")]


# ---------------------------------------------------------------------------------- factories
def new_statefulset_controller(ctx: ComponentContext) -> Component:
    return StatefulSetController(
        ctx.client(STATEFULSET),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
        scheduling_hook=new_scheduling_hook(ctx),
    )


def new_garbage_collector(ctx: ComponentContext) -> Component:
    return GarbageCollector(
        ctx.client(GARBAGE_COLLECTOR),
        gc_resources(ctx),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_namespace_controller(ctx: ComponentContext) -> Component:
    return NamespaceController(
        ctx.client(NAMESPACE),
        namespaced_resources(ctx),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_pv_binder(ctx: ComponentContext) -> Component:
    return PVBinder(
        ctx.client(PV_BINDER),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_resource_claim_controller(ctx: ComponentContext) -> Component:
    """PodGroup claims only with ``DRAWorkloadResourceClaims`` on for the controller and PodGroups served."""
    group_claims = ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) and ctx.is_served(PODGROUPS)
    return ResourceClaimController(
        ctx.client(RESOURCE_CLAIM),
        informers=ctx.shared_informers(),
        group_claims=group_claims,
        release_idle_groups=group_claims and ctx.gates.enabled(STATEFULSET_WORKLOAD_CLAIM_RELEASE),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_deployment_controller(ctx: ComponentContext) -> Component:
    return DeploymentController(
        ctx.client(DEPLOYMENT),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_replicaset_controller(ctx: ComponentContext) -> Component:
    return ReplicaSetController(
        ctx.client(REPLICASET),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_replicationcontroller_controller(ctx: ComponentContext) -> Component:
    return ReplicationManager(
        ctx.client(REPLICATIONCONTROLLER),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_daemonset_controller(ctx: ComponentContext) -> Component:
    return DaemonSetsController(
        ctx.client(DAEMONSET),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_serviceaccount_controller(ctx: ComponentContext) -> Component:
    return ServiceAccountsController(
        ctx.client(SERVICEACCOUNT),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_serviceaccount_token_controller(ctx: ComponentContext) -> Component:
    return TokensController(
        ctx.client(SERVICEACCOUNT_TOKEN),
        informers=ctx.shared_informers(),
        sign=ctx.sign_service_account_token,
        root_ca=ctx.root_ca,
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_endpointslice_controller(ctx: ComponentContext) -> Component:
    return EndpointSliceController(
        ctx.client(ENDPOINTSLICE),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def _workload_controllers() -> list[ControllerSpec]:
    """The everyday workload controllers (Deployment, ReplicaSet, DaemonSet, …), kube's names."""
    return [
        ControllerSpec(DEPLOYMENT, new_deployment_controller, ("deployment",)),
        ControllerSpec(REPLICASET, new_replicaset_controller, ("replicaset",)),
        ControllerSpec(
            REPLICATIONCONTROLLER,
            new_replicationcontroller_controller,
            ("replicationcontroller",),
            requires=REPLICATIONCONTROLLERS,
        ),
        ControllerSpec(DAEMONSET, new_daemonset_controller, ("daemonset",)),
        ControllerSpec(SERVICEACCOUNT, new_serviceaccount_controller, ("serviceaccount",)),
        ControllerSpec(SERVICEACCOUNT_TOKEN, new_serviceaccount_token_controller, ("serviceaccount-token",)),
        ControllerSpec(
            ENDPOINTSLICE, new_endpointslice_controller, ("endpointslice",), requires=ENDPOINTSLICES
        ),
    ]


def new_job_controller(ctx: ComponentContext) -> Component:
    return JobController(
        ctx.client(JOB),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
        scheduling_hook=new_job_scheduling_hook(ctx),
    )


def new_cronjob_controller(ctx: ComponentContext) -> Component:
    return CronJobController(
        ctx.client(CRONJOB),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def new_ttl_after_finished_controller(ctx: ComponentContext) -> Component:
    return TTLAfterFinishedController(
        ctx.client(TTL_AFTER_FINISHED),
        informers=ctx.shared_informers(),
        clock=ctx.clock,
        metrics=controller_metrics(ctx.metrics_registry),
    )


def known_controllers(cluster: Any = None) -> list[ControllerSpec]:
    """Every controller this build has, in start order."""
    return [
        ControllerSpec(NODE_AGENT, node_agent_factory(cluster), ("nodeagent",)),
        ControllerSpec(
            NODE_LIFECYCLE, node_lifecycle_factory(time_scale=SERVE_TIME_SCALE), ("nodelifecycle",)
        ),
        ControllerSpec(
            TAINT_EVICTION, taint_eviction_factory(time_scale=SERVE_TIME_SCALE), ("taint-eviction",)
        ),
        ControllerSpec(GARBAGE_COLLECTOR, new_garbage_collector, ("garbagecollector",)),
        ControllerSpec(NAMESPACE, new_namespace_controller, ("namespace",)),
        ControllerSpec(PV_BINDER, new_pv_binder, ("persistentvolume-binder",)),
        ControllerSpec(STATEFULSET, new_statefulset_controller, ("statefulset",)),
        *_workload_controllers(),
        ControllerSpec(JOB, new_job_controller, ("job",)),
        ControllerSpec(CRONJOB, new_cronjob_controller, ("cronjob",)),
        ControllerSpec(TTL_AFTER_FINISHED, new_ttl_after_finished_controller, ("ttl-after-finished",)),
        ControllerSpec(HPA, hpa_factory(time_scale=SERVE_TIME_SCALE), ("horizontalpodautoscaling",)),
        ControllerSpec(
            PODGROUP_PROTECTION,
            new_podgroup_protection_controller,
            ("podgroup-protection",),
            requires=PODGROUPS,
        ),
        ControllerSpec(RESOURCE_CLAIM, new_resource_claim_controller, ("resourceclaim", "resource-claim")),
        ControllerSpec(
            CLUSTERROLE_AGGREGATION,
            new_clusterrole_aggregation_controller,
            ("clusterrole-aggregation",),
            requires=CLUSTERROLES,
        ),
        ControllerSpec(
            ADMISSION_POLICY_STATUS,
            new_admission_policy_status_controller,
            ("validatingadmissionpolicy-status",),
            requires=VALIDATING_ADMISSION_POLICIES,
        ),
    ]


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


def register_controllers(cp: ComponentRegistrar, controllers: str = "*", cluster: Any = None) -> list[str]:
    """Register every known controller's factory on ``cp``; return the names ``controllers`` selects."""
    specs = known_controllers(cluster)
    selected = select_controllers(controllers, specs)
    for s in specs:
        cp.register(s.name, s.factory, group=None if s.name == NODE_AGENT else CONTROLLER_MANAGER)
    unavailable = {
        s.name for s in specs if s.requires is not None and not cp.context_for(s.name).is_served(s.requires)
    }
    return [n for n in selected if n not in unavailable]
