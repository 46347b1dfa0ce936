"""DefaultBinder: bind by POSTing a ``Binding`` to the pod's ``binding`` subresource.

The API server sets ``spec.nodeName`` and the ``PodScheduled=True`` condition; a pod that was
deleted or already bound makes the call fail, and the scheduler then forgets the assumed pod.
"""

from __future__ import annotations

from typing import Any

from apiserver.client.interface import PODS
from scheduler.interfaces import CycleState, Handle
from scheduler.nodeinfo import PodInfo
from scheduler.status import Status

NAME = "DefaultBinder"


def binding_for(pod_info: PodInfo, node_name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": pod_info.name, "namespace": pod_info.namespace}
    uid = ((pod_info.pod.get("metadata") or {}).get("uid")) or ""
    if uid:
        meta["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


class DefaultBinder:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    async def bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        client = self.handle.client if self.handle is not None else None
        if client is None:
            return Status.as_status(RuntimeError("DefaultBinder has no API client"))
        try:
            await client.create_subresource(
                PODS, pod_info.name, "binding", binding_for(pod_info, node_name), pod_info.namespace
            )
        except Exception as e:  # StatusError: conflict, not found...
            return Status.as_status(e)
        return None


def new(args: dict[str, Any], handle: Handle) -> DefaultBinder:
    return DefaultBinder(args, handle)
