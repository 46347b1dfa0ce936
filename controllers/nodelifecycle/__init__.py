"""kube-controller-manager's node lifecycle pair: the ``node-lifecycle-controller`` (node health,
zone states, the ``not-ready``/``unreachable`` taints) and the ``taint-eviction-controller``
(pods evicted from NoExecute-tainted nodes once their tolerations run out).

Both talk to the rest only through the API: the node agent's Leases and Node statuses in, taints,
conditions, pod conditions, deletions and events out. ``docs/cluster.md`` describes how to make a
node fail (``gangplane.dev/fault``, ``gangplane cluster fail``) and what follows.
"""

from __future__ import annotations

from typing import Any

from apiserver.client.context import Component, ComponentContext, ComponentFactory
from controllers.metrics import controller_metrics
from controllers.nodelifecycle.controller import NAME, NodeLifecycleController, NodeLifecycleOptions
from controllers.nodelifecycle.metrics import zone_collector
from controllers.nodelifecycle.tainteviction import NAME as TAINT_EVICTION_NAME
from controllers.nodelifecycle.tainteviction import TaintEvictionController


def node_lifecycle_factory(**options: Any) -> ComponentFactory:
    """A factory for the node lifecycle controller; ``options`` are :class:`NodeLifecycleOptions` fields."""
    opts = NodeLifecycleOptions(**options)

    def factory(ctx: ComponentContext) -> Component:
        return NodeLifecycleController(
            ctx.client(NAME),
            informers=ctx.shared_informers(),
            options=opts,
            clock=ctx.clock,
            metrics=controller_metrics(ctx.metrics_registry),
            zone_metrics=zone_collector(ctx.metrics_registry),
        )

    return factory


def taint_eviction_factory(time_scale: float = 1.0) -> ComponentFactory:
    """A factory for the taint-eviction controller; ``time_scale`` multiplies ``tolerationSeconds``."""

    def factory(ctx: ComponentContext) -> Component:
        return TaintEvictionController(
            ctx.client(TAINT_EVICTION_NAME),
            informers=ctx.shared_informers(),
            clock=ctx.clock,
            metrics=controller_metrics(ctx.metrics_registry),
            time_scale=time_scale,
        )

    return factory


__all__ = [
    "NAME",
    "TAINT_EVICTION_NAME",
    "NodeLifecycleController",
    "NodeLifecycleOptions",
    "TaintEvictionController",
    "node_lifecycle_factory",
    "taint_eviction_factory",
]
