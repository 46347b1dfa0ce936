"""The HorizontalPodAutoscaler controller (``horizontal-pod-autoscaler-controller``); see :mod:`.controller`."""

from __future__ import annotations

from apiserver.client.context import Component, ComponentContext, ComponentFactory
from controllers.metrics import controller_metrics
from controllers.podautoscaler.controller import NAME, HPAController


def hpa_factory(time_scale: float = 1.0) -> ComponentFactory:
    """A factory; ``time_scale`` multiplies the 15 s sync period (``gangplane serve``: 0.1)."""

    def factory(ctx: ComponentContext) -> Component:
        return HPAController(
            ctx.client(NAME),
            informers=ctx.shared_informers(),
            clock=ctx.clock,
            metrics=controller_metrics(ctx.metrics_registry),
            sync_period=15.0 * time_scale,
        )

    return factory


__all__ = ["NAME", "HPAController", "hpa_factory"]
