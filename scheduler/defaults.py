"""The scheduler's default wiring: kube's in-tree plugin registry and default profile.

kube builds these outside the framework runtime (``frameworkplugins.NewInTreeRegistry`` and the
``v1`` config defaults); here too the framework (:mod:`scheduler.framework`) only runs what it is
given, and this module is what knows the plugin list.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework import DEFAULT_SCHEDULER_NAME, PluginFactory, PluginSpec, Profile
from scheduler.plugins import in_tree_registry

#: kube's default multi-point plugin list and Score weights (volume and image plugins omitted:
#: gangplane has no volumes to check and no image states).
DEFAULT_PLUGINS: tuple[PluginSpec, ...] = (
    PluginSpec("SchedulingGates"),
    PluginSpec("GangScheduling"),
    PluginSpec("TopologyPlacement"),
    PluginSpec("PrioritySort"),
    PluginSpec("NodeUnschedulable"),
    PluginSpec("NodeName"),
    PluginSpec("TaintToleration", 3),
    PluginSpec("NodeAffinity", 2),
    PluginSpec("NodePorts"),
    PluginSpec("NodeResourcesFit", 1),
    PluginSpec("PodTopologySpread", 2),
    PluginSpec("InterPodAffinity", 2),
    PluginSpec("DynamicResources"),
    PluginSpec("DefaultPreemption"),
    PluginSpec("WorkloadAwarePreemption"),
    PluginSpec("NodeResourcesBalancedAllocation", 1),
    PluginSpec("PodGroupPodsCount", 1),
    PluginSpec("DefaultBinder"),
)


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME, **overrides: Any) -> Profile:
    return Profile(scheduler_name=scheduler_name, plugins=list(DEFAULT_PLUGINS), **overrides)


def default_registry() -> dict[str, PluginFactory]:
    """In-tree plugins by name (gang scheduling and topology placement included); out-of-tree ones
    are added by the caller."""
    return in_tree_registry()
