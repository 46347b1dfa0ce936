"""``metrics.k8s.io/v1beta1``: NodeMetrics and PodMetrics are computed, never stored.

metrics-server serves only ``get`` and ``list``; the GenericStore server answers both from the pods and
nodes it stores (:mod:`apiserver.kubeletsim.metrics`), so this strategy never sees a write.
"""

from __future__ import annotations

from apiserver.rest.strategy import Strategy

GROUP = "metrics.k8s.io"


class MetricsStrategy(Strategy):
    """Read-only: the resource table serves only ``get`` and ``list`` for these kinds."""

    tracks_generation = False


STRATEGIES: dict[tuple[str, str], Strategy] = {
    (GROUP, "nodes"): MetricsStrategy(),
    (GROUP, "pods"): MetricsStrategy(),
}
