"""Simulated kubelets: the ``node-agent`` component and its factory.

``node_agent_factory(cluster)`` is what the controller manager registers as ``node-agent``;
``cluster`` is the :class:`~controllers.fleet.Fleet` from ``--cluster`` (None: the embedded
default fleet). Tests build their own::

    cp.register("node-agent", node_agent_factory(Fleet.empty(), time_scale=0.01))
    agent = await cp.start_component("node-agent")

Behaviour is documented in :mod:`.stages` (the lifecycle table), :mod:`.pod_annotations` (per-pod
switches) and ``docs/cluster.md``.
"""

from __future__ import annotations

from typing import Any

from apiserver.client.context import Component, ComponentContext, ComponentFactory
from controllers.fleet import Fleet, default_fleet
from controllers.metrics import controller_metrics
from controllers.nodeagent.agent import NodeAgent, is_managed
from controllers.nodeagent.lifecycle import lifecycle_for
from controllers.nodeagent.pod_annotations import (
    COMPLETE_AFTER,
    CRASH,
    FAIL,
    NEVER_READY,
    READY_AFTER,
    SIMULATED_LABEL,
)
from controllers.nodeagent.stages import AgentOptions
from controllers.nodeagent.userstages import parse_stages
from featuregates import DRA_WORKLOAD_RESOURCE_CLAIMS

#: kubelet's Lease renewal period (``nodeLeaseDurationSeconds`` 40 s / 4)
LEASE_RENEW_INTERVAL = 10.0

#: ``gangplane serve``'s time scale: a 30 s grace period takes 3 s, ``ready-after: 20s`` takes 2 s.
#: Real clusters rarely make users wait the full grace period (containers exit on SIGTERM), so a
#: tenth keeps ``Terminating`` visible in ``kubectl get -w`` without stalling demos.
SERVE_TIME_SCALE = 0.1


def node_agent_factory(cluster: Fleet | None = None, **options: Any) -> ComponentFactory:
    """A ``ComponentFactory`` for the node agent.

    ``cluster`` None means the default fleet; ``Fleet.empty()`` registers no nodes (the agent
    still simulates Nodes created through the API). ``options`` override :class:`AgentOptions`
    fields; ``time_scale`` defaults to :data:`SERVE_TIME_SCALE` here (the class default is 1.0).
    """
    fleet = cluster if cluster is not None else default_fleet()
    # the fleet's stages and any given here; a bad stage fails now, at registration, not at start
    stages = parse_stages([*fleet.stages, *options.pop("stages", ())], fleet.source)
    lifecycle_for(stages)  # the user's lifecycle stages compile beside (or instead of) the shipped ones
    opts = {"time_scale": SERVE_TIME_SCALE, **options}
    if "time_scale" not in options:
        # serve's and the plugin's agent: the Lease is renewed as often, against the node lifecycle
        # controller's grace period (50 s × the same 0.1), as kubelet's 10 s against kube's 50 s.
        # Callers choosing their own scale (benchmarks, tests) keep kubelet's 10 s unless they say.
        opts.setdefault("lease_renew_interval", LEASE_RENEW_INTERVAL * SERVE_TIME_SCALE)

    def factory(ctx: ComponentContext) -> Component:
        return NodeAgent(
            ctx.client("node-agent"),
            fleet,
            clock=ctx.clock,
            metrics=controller_metrics(ctx.metrics_registry),
            group_claims=ctx.gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS),
            stages=stages,
            **opts,
        )

    return factory


__all__ = [
    "COMPLETE_AFTER",
    "CRASH",
    "FAIL",
    "NEVER_READY",
    "READY_AFTER",
    "SERVE_TIME_SCALE",
    "SIMULATED_LABEL",
    "AgentOptions",
    "Fleet",
    "NodeAgent",
    "default_fleet",
    "is_managed",
    "node_agent_factory",
]
