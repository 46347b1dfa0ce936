"""A counter and a histogram sharing their labels, recorded without a lock per observation.

kube-scheduler records every scheduling attempt twice, by ``result`` and ``profile``:
``scheduler_schedule_attempts_total`` (a counter) and
``scheduler_scheduling_attempt_duration_seconds`` (a histogram). With ``prometheus_client``'s
own types each attempt costs a counter ``inc`` and a histogram ``observe``: three values, each
behind its own lock, and a Python loop over the buckets, about 3 µs, once per pod of a plain
workload (SchedulingBasic binds 2,000 pods a second on one core, so this is ~0.6 % of it).

:class:`AttemptSeries` keeps both metrics as plain numbers per label pair (one dict lookup,
three additions and a bisection per observation) and is registered on the registry as a
collector that yields the same two metric families ``prometheus_client`` would: same names,
help, types, label order, bucket bounds (``le`` as prometheus formats it), values and sample
order, with ``_created`` samples unless prometheus_client's created metrics are disabled.
Observations come from the event loop's thread only; a scrape from another thread reads
numbers that may be one observation apart between the two families, as the library's own
per-value locks allow too.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator, Sequence

import prometheus_client.metrics as prom_metrics
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

_INF = float("inf")


class _Series:
    """One label pair's numbers: the counter's value, the histogram's per-bucket counts and sum."""

    __slots__ = ("buckets", "created", "total", "sum")

    def __init__(self, buckets: int) -> None:
        self.total = 0.0
        self.sum = 0.0
        self.buckets = [0] * buckets
        self.created = time.time()


class AttemptSeries:
    """The counter ``<counter_name>_total`` and the histogram ``<histogram_name>`` by ``labels``
    (see the module docstring); :meth:`observe` is the counter's ``inc()`` and the histogram's
    ``observe(seconds)`` of one label pair at once."""

    def __init__(
        self,
        counter_name: str,
        counter_help: str,
        histogram_name: str,
        histogram_help: str,
        labels: Sequence[str],
        buckets: Sequence[float],
        registry: CollectorRegistry,
    ) -> None:
        self._counter_name = counter_name.removesuffix("_total")
        self._counter_help = counter_help
        self._histogram_name = histogram_name
        self._histogram_help = histogram_help
        self._labels = tuple(labels)
        bounds = sorted(float(b) for b in buckets)
        if not bounds or bounds[-1] != _INF:
            bounds.append(_INF)
        self._bounds = bounds
        self._le = [floatToGoString(b) for b in bounds]
        self._series: dict[tuple[str, ...], _Series] = {}
        registry.register(self)

    def observe(self, values: tuple[str, ...], seconds: float) -> None:
        """One attempt of the label values ``values`` (in ``labels`` order) that took ``seconds``."""
        s = self._series.get(values)
        if s is None:
            s = self._series[values] = _Series(len(self._bounds))
        s.total += 1.0
        s.sum += seconds
        bounds = self._bounds
        i = bisect_left(bounds, seconds)
        if i < len(bounds) and seconds <= bounds[i]:  # a NaN falls in no bucket, as in prometheus
            s.buckets[i] += 1

    def describe(self) -> list[Metric]:
        return [
            Metric(self._counter_name, self._counter_help, "counter"),
            Metric(self._histogram_name, self._histogram_help, "histogram"),
        ]

    def collect(self) -> Iterator[Metric]:
        created = getattr(prom_metrics, "_use_created", True)
        series = list(self._series.items())
        counter = Metric(self._counter_name, self._counter_help, "counter")
        histogram = Metric(self._histogram_name, self._histogram_help, "histogram")
        name = self._histogram_name
        for values, s in series:
            labels = dict(zip(self._labels, values, strict=True))
            counter.add_sample(self._counter_name + "_total", labels, s.total)
            if created:
                counter.add_sample(self._counter_name + "_created", labels, s.created)
            cumulative = 0
            for le, n in zip(self._le, list(s.buckets), strict=True):
                cumulative += n
                histogram.add_sample(name + "_bucket", {**labels, "le": le}, float(cumulative))
            histogram.add_sample(name + "_count", labels, float(cumulative))
            histogram.add_sample(name + "_sum", labels, s.sum)
            if created:
                histogram.add_sample(name + "_created", labels, s.created)
        yield counter
        yield histogram
