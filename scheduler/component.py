"""Registers the scheduler with the control plane (imported by ``default_components``)."""

from __future__ import annotations

from apiserver.client.context import ComponentContext, ComponentRegistrar
from apiserver.client.interface import PODGROUPS
from scheduler.scheduler import Scheduler

COMPONENT_NAME = "scheduler"
#: The user agent, hence the field manager of the scheduler's writes (kube's ``kube-scheduler``).
USER_AGENT = "kube-scheduler"


def new_scheduler(ctx: ComponentContext) -> Scheduler:
    """A scheduler with the default profile, the control plane's clock, metrics and scheduler gates.

    PodGroups are watched only when the API server serves them (a skewed cluster may not).
    """
    return Scheduler(
        ctx.client(USER_AGENT),
        ctx.gates,
        ctx.clock,
        ctx.metrics_registry,
        pod_groups_served=ctx.is_served(PODGROUPS),
    )


def register_scheduler(cp: ComponentRegistrar) -> list[str]:
    """Register the ``scheduler`` component factory; returns the registered names."""
    cp.register(COMPONENT_NAME, new_scheduler)
    return [COMPONENT_NAME]
