"""The Job controller's scheduling hook: where the KEP-5547 integration plugs in.

Once per sync, after pods are claimed and only when the Job may create pods, the controller asks
the hook (when it ``wants`` the Job) to ``prepare``: discover or create the Job's Workload and
PodGroup and return how each new pod is decorated (``spec.schedulingGroup`` plus an
ownerReference), or None to create plain pods. ``prepare`` raising blocks pod creation for this
sync (the sync backs off), which is how "API errors creating objects block pod creation".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from apiserver.api.types import Obj

if TYPE_CHECKING:
    from controllers.job.controller import JobController

PodDecorator = Callable[[Obj], None]


class JobSchedulingHook(Protocol):
    def attach(self, controller: JobController) -> None: ...

    def wants(self, job: Obj) -> bool: ...

    async def prepare(self, job: Obj, pods: list[Obj], ctx: Any) -> PodDecorator | None: ...


class NoopJobSchedulingHook:
    """No Workload integration: pods are created exactly from the template."""

    def attach(self, controller: JobController) -> None:
        return None

    def wants(self, job: Obj) -> bool:
        return False

    async def prepare(self, job: Obj, pods: list[Obj], ctx: Any) -> PodDecorator | None:
        return None
