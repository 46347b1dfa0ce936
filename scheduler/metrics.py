"""kube-scheduler's metrics, registered on the ``CollectorRegistry`` the caller passes in.

Names, labels and buckets follow ``pkg/scheduler/metrics``: attempts by ``result``
(scheduled / unschedulable / error) and ``profile``, attempt latency, pending pods per queue
(active / backoff / unschedulable / gated), preemption attempts and victims per preemption.

PodGroup cycles (``GenericWorkload``) have their own, with upstream's names:
``scheduler_podgroup_schedule_attempts_total{result,profile}`` (results ``scheduled``,
``unschedulable``, ``waiting_on_preemption``, ``error``),
``scheduler_podgroup_scheduling_attempt_duration_seconds{result,profile}``,
``scheduler_podgroup_scheduling_algorithm_duration_seconds{profile}`` and the queue gauge
``scheduler_pending_entities{type="podgroup",queue}`` (groups with members in each sub-queue).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"
WAITING_ON_PREEMPTION = "waiting_on_preemption"
PODGROUP = "podgroup"


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class SchedulerMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._attempt_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        #: the PodGroup attempt series, looked up once per (result, profile) (see observe_attempt)
        self._pod_group_children: dict[tuple[str, str], tuple[Any, Any]] = {}
        #: the PodGroup algorithm duration series per profile
        self._pod_group_algorithm: dict[str, Any] = {}
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts_total",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=registry,
        )
        self.scheduling_attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=registry,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
            "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that "
            "the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that "
            "the scheduler never attempted to schedule because they are gated.",
            ["queue"],
            registry=registry,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts_total",
            "Total preemption attempts in the cluster till now",
            registry=registry,
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=_exponential(1, 2, 7),
            registry=registry,
        )
        # workload-aware preemption (upstream's WorkloadPreemptionAttempts / WorkloadPreemptionVictims)
        self.workload_preemption_attempts = Counter(
            "scheduler_workload_preemption_attempts_total",
            "Total preemption attempts initiated by workload (including pod groups) in the cluster till now.",
            ["result"],
            registry=registry,
        )
        self.workload_preemption_victims = Histogram(
            "scheduler_workload_preemption_victims",
            "Number of pod preemption victims caused by workload preemption.",
            buckets=_exponential(1, 2, 11),
            registry=registry,
        )

        self.podgroup_schedule_attempts = Counter(
            "scheduler_podgroup_schedule_attempts_total",
            "Number of attempts to schedule pod groups, by the result. 'unschedulable' means a pod group "
            "could not be scheduled, 'waiting_on_preemption' that it waits for the preemption it triggered, "
            "while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=registry,
        )
        self.podgroup_scheduling_attempt_duration = Histogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds",
            "Pod group scheduling attempt latency in seconds (pod group scheduling algorithm + status update)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=registry,
        )
        self.podgroup_scheduling_algorithm_duration = Histogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds",
            ["profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=registry,
        )
        self.pending_entities = Gauge(
            "scheduler_pending_entities",
            "Number of pending entities (pod groups) by type and queue: a pod group is counted in every "
            "queue that holds one of its pending pods.",
            ["type", "queue"],
            registry=registry,
        )

    def observe_pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        children = self._pod_group_children.get((result, profile))
        if children is None:
            # ``labels()`` validates and locks on every call: each series is looked up once
            children = self._pod_group_children[(result, profile)] = (
                self.podgroup_schedule_attempts.labels(result=result, profile=profile),
                self.podgroup_scheduling_attempt_duration.labels(result=result, profile=profile),
            )
        children[0].inc()
        children[1].observe(seconds)

    def observe_pod_group_algorithm(self, profile: str, seconds: float) -> None:
        """``scheduler_podgroup_scheduling_algorithm_duration_seconds`` of one PodGroup cycle."""
        child = self._pod_group_algorithm.get(profile)
        if child is None:
            child = self._pod_group_algorithm[profile] = self.podgroup_scheduling_algorithm_duration.labels(
                profile=profile
            )
        child.observe(seconds)

    def set_pending_pod_groups(self, counts: Mapping[str, int]) -> None:
        for queue, n in counts.items():
            self.pending_entities.labels(type=PODGROUP, queue=queue).set(n)

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        children = self._attempt_children.get((result, profile))
        if children is None:
            # ``labels()`` validates and locks on every call: look each series up once
            children = self._attempt_children[(result, profile)] = (
                self.schedule_attempts.labels(result=result, profile=profile),
                self.scheduling_attempt_duration.labels(result=result, profile=profile),
            )
        children[0].inc()
        children[1].observe(seconds)

    def set_pending(self, counts: Mapping[str, int]) -> None:
        for queue, n in counts.items():
            self.pending_pods.labels(queue=queue).set(n)
