"""AttemptSeries exposes what prometheus_client's Counter and Histogram fed alike would."""

from __future__ import annotations

import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

from scheduler.attempt_series import AttemptSeries
from scheduler.metrics import SchedulerMetrics, _exponential

BUCKETS = _exponential(0.001, 2, 15)
COUNTER = "scheduler_schedule_attempts_total"
HISTOGRAM = "scheduler_scheduling_attempt_duration_seconds"


def _pair() -> tuple[CollectorRegistry, Counter, Histogram, CollectorRegistry, AttemptSeries]:
    ref_reg = CollectorRegistry()
    counter = Counter(COUNTER, "attempts help", ["result", "profile"], registry=ref_reg)
    histogram = Histogram(HISTOGRAM, "latency help", ["result", "profile"], buckets=BUCKETS, registry=ref_reg)
    reg = CollectorRegistry()
    series = AttemptSeries(
        COUNTER, "attempts help", HISTOGRAM, "latency help", ("result", "profile"), BUCKETS, reg
    )
    return ref_reg, counter, histogram, reg, series


def _without_created(
    reg: CollectorRegistry,
) -> list[tuple[str, str, str, list[tuple[str, dict[str, str], float]]]]:
    """Every family and sample, ``_created`` samples by name and labels only (their values are times)."""
    out = []
    for fam in reg.collect():
        samples = [(s.name, s.labels, -1.0 if s.name.endswith("_created") else s.value) for s in fam.samples]
        out.append((fam.name, fam.type, fam.documentation, samples))
    return out


def _text_without_created(reg: CollectorRegistry) -> list[str]:
    """Both text expositions (Prometheus 0.0.4 and OpenMetrics) without the ``_created`` lines."""
    lines = generate_latest(reg).decode().splitlines() + generate_openmetrics(reg).decode().splitlines()
    return [line for line in lines if "_created" not in line]


@pytest.mark.parametrize("seed", range(5))
def test_random_attempts_expose_as_prometheus_types(seed: int) -> None:
    rng = random.Random(seed)
    ref_reg, counter, histogram, reg, series = _pair()
    label_pairs = [
        ("scheduled", "default-scheduler"),
        ("unschedulable", "default-scheduler"),
        ("error", "p2"),
    ]
    for _ in range(rng.randrange(1, 400)):
        result, profile = rng.choice(label_pairs)
        kind = rng.random()
        if kind < 0.2:
            seconds = rng.choice(BUCKETS)  # exactly on a bound: that bucket, as ``<=`` says
        elif kind < 0.25:
            seconds = rng.choice([0.0, 100.0, 1e9])  # below every bound, beyond the last one
        else:
            seconds = rng.expovariate(1 / 0.01)
        counter.labels(result=result, profile=profile).inc()
        histogram.labels(result=result, profile=profile).observe(seconds)
        series.observe((result, profile), seconds)
    assert _without_created(reg) == _without_created(ref_reg)
    assert _text_without_created(reg) == _text_without_created(ref_reg)


def test_nothing_observed_exposes_empty_families() -> None:
    ref_reg, _, _, reg, _ = _pair()
    assert _without_created(reg) == _without_created(ref_reg)
    assert generate_latest(reg) == generate_latest(ref_reg)


def test_created_is_when_the_series_first_appeared() -> None:
    _, _, _, reg, series = _pair()
    series.observe(("scheduled", "p"), 0.003)
    labels = {"result": "scheduled", "profile": "p"}
    created = reg.get_sample_value("scheduler_schedule_attempts_created", labels)
    assert created is not None and created > 0
    assert reg.get_sample_value(HISTOGRAM + "_created", labels) == created
    assert reg.get_sample_value(COUNTER, labels) == 1.0
    assert reg.get_sample_value(HISTOGRAM + "_bucket", {**labels, "le": "0.004"}) == 1.0
    assert reg.get_sample_value(HISTOGRAM + "_bucket", {**labels, "le": "0.002"}) == 0.0


def test_a_second_registration_clashes_as_prometheus_would() -> None:
    reg = CollectorRegistry()
    AttemptSeries(COUNTER, "h", HISTOGRAM, "h", ("result", "profile"), BUCKETS, reg)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        Counter(COUNTER, "h", ["result", "profile"], registry=reg)


def test_scheduler_metrics_record_attempts_by_result_and_profile() -> None:
    reg = CollectorRegistry()
    sm = SchedulerMetrics(reg)
    sm.observe_attempt("scheduled", "default-scheduler", 0.002)
    sm.observe_attempt("scheduled", "default-scheduler", 0.5)
    sm.observe_attempt("error", "default-scheduler", 0.0001)
    scheduled = {"result": "scheduled", "profile": "default-scheduler"}
    assert reg.get_sample_value(COUNTER, scheduled) == 2.0
    assert reg.get_sample_value(HISTOGRAM + "_count", scheduled) == 2.0
    assert reg.get_sample_value(HISTOGRAM + "_sum", scheduled) == pytest.approx(0.502)
    assert reg.get_sample_value(COUNTER, {"result": "error", "profile": "default-scheduler"}) == 1.0
