"""PrioritySort: activeQ order — higher ``spec.priority`` first, then the earlier-queued pod."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.interfaces import Handle

if TYPE_CHECKING:
    from scheduler.queue import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        pass

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.priority, b.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, q: QueuedPodInfo) -> tuple[int, float]:
        """gangplane: :meth:`less` as a key (``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``),
        which lets the activeQ heap compare tuples in C."""
        return -q.priority, q.timestamp


def new(args: dict[str, Any], handle: Handle) -> PrioritySort:
    return PrioritySort(args, handle)
