"""PodGroupPodsCount: the PlacementScore that prefers the placement fitting more of the group.

A gang placement is feasible once ``minCount`` pods fit; a placement where *more* of the
queued pods fit (or, for a basic group, any pods beyond the first) is better. The score is the
share of the queued pods that fit, in ``[0, 100]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scheduler.interfaces import MAX_NODE_SCORE, CycleState, Handle, Placement, PlacementResult, PodGroupInfo
from scheduler.nodeinfo import PodInfo
from scheduler.status import Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "PodGroupPodsCount"


class PodGroupPodsCount:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle

    def score_placement(
        self, state: CycleState, group: PodGroupInfo, result: PlacementResult, snapshot: Snapshot
    ) -> tuple[int, Status | None]:
        if not group.pods:
            return 0, None
        return MAX_NODE_SCORE * len(result.fitting()) // len(group.pods), None

    def score_placement_with(
        self,
        state: CycleState,
        group: PodGroupInfo,
        placement: Placement,
        pods: Sequence[PodInfo],
        snapshot: Snapshot,
    ) -> tuple[int | None, Status | None]:
        """:meth:`score_placement` once ``pods`` fit in ``placement`` (:mod:`scheduler.placement_certain`)."""
        if not group.pods:
            return 0, None
        return MAX_NODE_SCORE * len(pods) // len(group.pods), None


def new(args: dict[str, Any], handle: Handle) -> PodGroupPodsCount:
    return PodGroupPodsCount(args, handle)
