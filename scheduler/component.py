"""Registers the scheduler with the control plane (imported by ``default_components``)."""

from __future__ import annotations

from apiserver.client.context import ComponentContext, ComponentFactory, ComponentRegistrar
from apiserver.client.interface import PODGROUPS
from scheduler.config import SchedulerConfig
from scheduler.records import RecordLimits
from scheduler.scheduler import Scheduler

COMPONENT_NAME = "scheduler"
#: The user agent, hence the field manager of the scheduler's writes (kube's ``kube-scheduler``).
USER_AGENT = "kube-scheduler"


def new_scheduler(
    ctx: ComponentContext,
    config: SchedulerConfig | None = None,
    records: bool | RecordLimits = False,
    seed: int | None = None,
) -> Scheduler:
    """A scheduler with the configuration's profiles (the default profile without one), the control
    plane's clock, metrics and scheduler gates; ``records`` keeps gangplane's scheduling records;
    ``seed`` fixes its tie-breaking (benchmarks that compare two builds' placements).

    PodGroups are watched only when the API server serves them (a skewed cluster may not).
    """
    kw = {}
    if config is not None:
        kw = {
            "profiles": config.profiles,
            "pod_initial_backoff": config.pod_initial_backoff,
            "pod_max_backoff": config.pod_max_backoff,
        }
    return Scheduler(
        ctx.client(USER_AGENT),
        ctx.gates,
        ctx.clock,
        ctx.metrics_registry,
        pod_groups_served=ctx.is_served(PODGROUPS),
        scheduling_records=records,
        seed=seed,
        **kw,  # type: ignore[arg-type]
    )


def scheduler_factory(
    config: SchedulerConfig | None, records: bool | RecordLimits = False
) -> ComponentFactory:
    """The component factory for one configuration (``gangplane serve --scheduler-config``)."""
    return lambda ctx: new_scheduler(ctx, config, records)


def register_scheduler(
    cp: ComponentRegistrar, config: SchedulerConfig | None = None, records: bool | RecordLimits = False
) -> list[str]:
    """Register the ``scheduler`` component factory; returns the registered names."""
    cp.register(COMPONENT_NAME, scheduler_factory(config, records) if config or records else new_scheduler)
    return [COMPONENT_NAME]
