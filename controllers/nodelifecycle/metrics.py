"""kube's ``node_collector_*`` metrics for the node lifecycle controller, read at scrape time.

``node_collector_zone_health`` (percentage of Ready nodes per zone), ``node_collector_zone_size``,
``node_collector_unhealthy_nodes_in_zone`` and ``node_collector_evictions_total`` (NoExecute
taintings per zone). One collector per registry (a second registration of the same names would
raise), showing whichever controller instance runs now.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: (zone, size, not ready, evictions) per zone of the running controller
ZoneRows = Callable[[], list[tuple[str, int, int, int]]]


class ZoneCollector(Collector):
    def __init__(self) -> None:
        self.source: ZoneRows | None = None

    def collect(self) -> Iterator[Metric]:
        rows = self.source() if self.source is not None else []
        health = GaugeMetricFamily(
            "node_collector_zone_health",
            "Gauge measuring percentage of healthy nodes per zone.",
            labels=["zone"],
        )
        size = GaugeMetricFamily(
            "node_collector_zone_size",
            "Gauge measuring number of registered Nodes per zones.",
            labels=["zone"],
        )
        unhealthy = GaugeMetricFamily(
            "node_collector_unhealthy_nodes_in_zone",
            "Gauge measuring number of not Ready Nodes per zones.",
            labels=["zone"],
        )
        evictions = CounterMetricFamily(
            "node_collector_evictions",
            "Number of Node evictions that happened since current instance of NodeController started.",
            labels=["zone"],
        )
        for zone, n, bad, evicted in rows:
            health.add_metric([zone], 100.0 * (n - bad) / n if n else 100.0)
            size.add_metric([zone], n)
            unhealthy.add_metric([zone], bad)
            evictions.add_metric([zone], evicted)
        yield health
        yield size
        yield unhealthy
        yield evictions


_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, ZoneCollector] = weakref.WeakKeyDictionary()


def zone_collector(registry: Any) -> ZoneCollector | None:
    """The registry's collector, registered on first use; None without a registry."""
    if registry is None:
        return None
    c = _BY_REGISTRY.get(registry)
    if c is None:
        c = ZoneCollector()
        registry.register(c)
        _BY_REGISTRY[registry] = c
    return c


__all__ = ["ZoneCollector", "zone_collector"]
