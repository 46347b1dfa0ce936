"""Prometheus metrics shared by every controller, registered once per ``CollectorRegistry``.

Components are stopped and restarted inside one process (tests simulate crashes that way), so
metrics cannot be created in a component's constructor: a second ``Counter`` with the same name
on the same registry raises. :func:`controller_metrics` hands out one :class:`ControllerMetrics`
per registry instead.

Work-queue metrics (kube's ``workqueue_*`` family) are read from the queues at scrape time by a
custom collector, so the hot path of ``WorkQueue.add`` pays nothing. A queue that is stopped
folds its totals into the collector, which keeps the counters monotonic across restarts.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from apiserver.client.workqueue import WorkQueue


class WorkQueueCollector(Collector):
    """``workqueue_adds_total``, ``workqueue_retries_total`` and ``workqueue_depth`` by queue name."""

    def __init__(self) -> None:
        self._live: dict[int, WorkQueue[Any]] = {}
        self._adds_done: dict[str, int] = {}
        self._retries_done: dict[str, int] = {}

    def track(self, queue: WorkQueue[Any]) -> None:
        self._live[id(queue)] = queue

    def untrack(self, queue: WorkQueue[Any]) -> None:
        """Forget a stopped queue, keeping what it counted."""
        if self._live.pop(id(queue), None) is not None:
            self._adds_done[queue.name] = self._adds_done.get(queue.name, 0) + queue.adds
            self._retries_done[queue.name] = self._retries_done.get(queue.name, 0) + queue.retries

    def collect(self) -> Iterator[Metric]:
        adds = dict(self._adds_done)
        retries = dict(self._retries_done)
        depth: dict[str, int] = {name: 0 for name in adds}
        for q in self._live.values():
            adds[q.name] = adds.get(q.name, 0) + q.adds
            retries[q.name] = retries.get(q.name, 0) + q.retries
            depth[q.name] = depth.get(q.name, 0) + len(q)
        a = CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by workqueue", labels=["name"]
        )
        r = CounterMetricFamily(
            "workqueue_retries", "Total number of retries handled by workqueue", labels=["name"]
        )
        d = GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=["name"])
        for name in sorted(adds):
            a.add_metric([name], adds[name])
            r.add_metric([name], retries.get(name, 0))
            d.add_metric([name], depth.get(name, 0))
        yield a
        yield r
        yield d


class ControllerMetrics:
    """Per-controller sync counters plus the work-queue collector, bound to one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.syncs = Counter(
            "controller_syncs_total",
            "Number of sync(key) calls by controller.",
            ["controller"],
            registry=registry,
        )
        self.sync_errors = Counter(
            "controller_sync_errors_total",
            "Number of sync(key) calls that raised; the key was requeued with backoff.",
            ["controller"],
            registry=registry,
        )
        self.sync_duration = Histogram(
            "controller_sync_duration_seconds",
            "Duration of sync(key) calls by controller.",
            ["controller"],
            buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10),
            registry=registry,
        )
        self.queues = WorkQueueCollector()
        registry.register(self.queues)
        #: per controller, its series of ``syncs`` and ``sync_duration`` (:meth:`sync_series`)
        self._series: dict[str, tuple[Any, Any]] = {}

    def sync_series(self, controller: str) -> tuple[Any, Any]:
        """The controller's ``controller_syncs_total`` and ``controller_sync_duration_seconds``
        series, looked up once: ``labels()`` checks its arguments and takes the metric's lock on
        every call, once per sync for each (0.3 % of gangs-1000x3's phase, session 30)."""
        got = self._series.get(controller)
        if got is None:
            got = self._series[controller] = (
                self.syncs.labels(controller),
                self.sync_duration.labels(controller),
            )
        return got


_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, ControllerMetrics] = weakref.WeakKeyDictionary()


def controller_metrics(registry: CollectorRegistry | None) -> ControllerMetrics | None:
    """The registry's :class:`ControllerMetrics`, created on first use; None without a registry."""
    if registry is None:
        return None
    m = _BY_REGISTRY.get(registry)
    if m is None:
        m = ControllerMetrics(registry)
        _BY_REGISTRY[registry] = m
    return m
