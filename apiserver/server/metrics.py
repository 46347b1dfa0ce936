"""Prometheus metrics of the control plane, one registry per process shared by all components."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric

from featuregates import FeatureGate


class WithoutCreated:
    """A view of a registry for ``/metrics`` without the ``<name>_created`` samples.

    prometheus_client adds a ``_created`` timestamp series to every counter, histogram and summary
    (an OpenMetrics notion); kube's component-base metrics expose none, so a scrape of gangplane
    must not either. Filtering here, per scrape, keeps the library's process-wide
    ``disable_created_metrics`` switch (global state) out of the server.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        for metric in self.registry.collect():
            kept = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            kept.samples = [s for s in metric.samples if not s.name.endswith("_created")]
            yield kept


class APIServerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, group, version, resource and HTTP response code.",
            ["verb", "group", "version", "resource", "subresource", "code"],
            registry=registry,
        )
        self.latency = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, group, version and resource.",
            ["verb", "group", "version", "resource", "subresource"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=registry,
        )
        self.watchers = Gauge(
            "apiserver_registered_watchers",
            "Number of currently registered watchers for a given resource.",
            ["group", "version", "resource"],
            registry=registry,
        )
        self.longrunning = Gauge(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests (watches).",
            ["verb", "group", "version", "resource"],
            registry=registry,
        )
        self.feature_enabled = Gauge(
            "kubernetes_feature_enabled",
            "This metric records the data about the stage and enablement of a k8s feature.",
            ["name", "stage"],
            registry=registry,
        )

    def record_gates(self, gates: FeatureGate) -> None:
        for name, spec, enabled in gates.items():
            self.feature_enabled.labels(name=name, stage=spec.stage_label).set(1 if enabled else 0)
