"""Shared pieces of the KEP-6277 Beta tests (gangplane's proposal gates): a control plane with
chosen gates on, the StatefulSet controller + scheduler + simulated kubelets, and waits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from apiserver.api.types import Obj
from apiserver.client.interface import PODS, Client
from featuregates import FeatureGate
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list
from tests.integration.kep6277_support import NS, start_statefulset_controller
from tests.integration.scheduler_support import node_name, start_node_agent, start_scheduler


@asynccontextmanager
async def plane(gates: dict[str, bool], *, scheduler: bool = True) -> AsyncIterator[ControlPlane]:
    """A control plane with ``gates`` on for every component, running the StatefulSet
    controller (with the KEP-6277 hook), and unless told otherwise the scheduler and kubelets."""
    cp = ControlPlane(
        ControlPlaneOptions(
            gates=FeatureGate().with_overrides(gates), bookmark_interval=0.5, client_bookmark_interval=0.2
        )
    )
    try:
        await start_statefulset_controller(cp)
        if scheduler:
            await start_node_agent(cp)
            await start_scheduler(cp)
        yield cp
    finally:
        await cp.stop()


def with_cpu(sts: Obj, cpu: str) -> Obj:
    sts["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
    return sts


def of_app(items: list[Obj], app: str) -> list[Obj]:
    return [p for p in items if (p["metadata"].get("labels") or {}).get("app") == app]


async def wait_app_pods(
    client: Client, app: str, ok: Callable[[list[Obj]], bool], timeout: float = 20
) -> list[Obj]:
    """Until ``ok`` holds for the pods of ``app``; returns them."""
    items = await wait_for_list(client, PODS, NS, lambda items: ok(of_app(items, app)), timeout)
    return of_app(items, app)


def bound(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if node_name(p)]


def unschedulable(p: Obj) -> bool:
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        for c in (p.get("status") or {}).get("conditions") or []
    )


def pending_reported(pods: list[Obj]) -> list[Obj]:
    return [p for p in pods if not node_name(p) and unschedulable(p)]


def conditions(obj: Obj | None) -> dict[str, Obj]:
    return {c.get("type"): c for c in ((obj or {}).get("status") or {}).get("conditions") or []}


def phase_names(pods: list[Obj]) -> dict[str, Any]:
    return {p["metadata"]["name"]: node_name(p) for p in pods}
