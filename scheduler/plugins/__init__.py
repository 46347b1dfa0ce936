"""In-tree scheduler plugins, one per module, each with a ``NAME`` and a ``new(args, handle)`` factory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def in_tree_registry() -> dict[str, Callable[[dict[str, Any], Any], Any]]:
    """Plugin name -> factory for every in-tree plugin (kube's ``NewInTreeRegistry``)."""
    from scheduler.plugins import (
        balanced_allocation,
        default_binder,
        default_preemption,
        dynamic_resources,
        gang_scheduling,
        inter_pod_affinity,
        node_affinity,
        node_name,
        node_ports,
        node_resources_fit,
        node_unschedulable,
        pod_topology_spread,
        podgroup_pods_count,
        priority_sort,
        scheduling_gates,
        taint_toleration,
        topology_placement,
        workload_preemption,
    )

    modules = (
        scheduling_gates,
        gang_scheduling,
        topology_placement,
        priority_sort,
        node_unschedulable,
        node_name,
        taint_toleration,
        node_affinity,
        node_ports,
        node_resources_fit,
        pod_topology_spread,
        inter_pod_affinity,
        dynamic_resources,
        default_preemption,
        workload_preemption,
        balanced_allocation,
        podgroup_pods_count,
        default_binder,
    )
    return {m.NAME: m.new for m in modules}
