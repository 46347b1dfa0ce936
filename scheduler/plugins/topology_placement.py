"""TopologyPlacement: one placement per value of the PodGroup's topology label (KEP-5732).

``schedulingConstraints.topology[0].key`` names any node label (``topology.kubernetes.io/rack``,
``…/zone``, a custom block label). Every distinct value among the nodes is a placement holding
exactly the nodes with that value; nodes without the label belong to none. When members of
the group already run (or are assumed), only the domain holding all of them is offered, so
late members (scale-up, replacements, a basic group's next OrderedReady pod) join their group.

The domains come from the snapshot's topology index, built once per key and kept current, so
generating placements costs one dictionary walk, not a scan of every node per cycle. Without
``TopologyAwareWorkloadScheduling`` the constraint is ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from featuregates import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING
from scheduler.interfaces import CycleState, Handle, Placement, PodGroupInfo
from scheduler.podgroups import topology_key
from scheduler.status import Code, Status

if TYPE_CHECKING:
    from scheduler.cache import Snapshot

NAME = "TopologyPlacement"


def no_nodes_with_label(key: str) -> str:
    return f"no nodes found with topology label '{key}'"


class TopologyPlacement:
    name = NAME

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle or Handle()

    def generate_placements(
        self, state: CycleState, group: PodGroupInfo, snapshot: Snapshot
    ) -> tuple[list[Placement] | None, Status | None]:
        gates = self.handle.gates
        if gates is not None and not gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            return None, None
        key = topology_key(group.pod_group)
        if not key:
            return None, None
        topo = snapshot.domains(key)
        if not topo.domains:
            return None, Status(Code.UNSCHEDULABLE, no_nodes_with_label(key))
        pinned = {topo.value_of(n) for n in group.state.scheduled_nodes()}
        values = topo.values()
        if pinned:
            # members already placed: only the domain holding all of them (none if they are split
            # or sit on nodes without the label, which a constrained group never does by itself)
            values = [v for v in values if pinned == {v}]
        return [Placement(v, topo.domains[v].node_names(), key, v) for v in values], None


def new(args: dict[str, Any], handle: Handle) -> TopologyPlacement:
    return TopologyPlacement(args, handle)
