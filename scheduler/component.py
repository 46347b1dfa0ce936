"""Registers the scheduler with the control plane (imported by ``default_components``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.scheduler import Scheduler

if TYPE_CHECKING:
    from apiserver.controlplane import ControlPlane

COMPONENT_NAME = "scheduler"
#: The user agent, hence the field manager of the scheduler's writes (kube's ``kube-scheduler``).
USER_AGENT = "kube-scheduler"


def new_scheduler(cp: ControlPlane) -> Scheduler:
    """A scheduler with the default profile, the control plane's clock, metrics and scheduler gates."""
    return Scheduler(cp.client(USER_AGENT), cp.gates_for(COMPONENT_NAME), cp.clock, cp.metrics_registry)


def register_scheduler(cp: ControlPlane) -> list[str]:
    """Register the ``scheduler`` component factory; returns the registered names."""
    cp.register(COMPONENT_NAME, new_scheduler)
    return [COMPONENT_NAME]
